"""Real Switchyard APIs for the MCP tests, served by uvicorn over HTTP on free ports.

An app runs in a thread of the test process (so the test chooses its agents and components: the
defaults plus the example capability, ``units``), on a private redis-server and a pgvector
database, with several API keys: each test acts as its own key, so rate limits and quotas of one
test do not reach another (every MCP request counts against its key's RATE_LIMIT_PER_MINUTE).

``mcp_server`` is the package's app; ``degraded_server`` (built on first use) is one with the
sandbox turned off by its settings and a redis-server a test may stop.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from app.api import create_app
from app.components.registry import COMPONENTS
from config import Settings
from graph.agents import default_agents
from graph.registry import AgentRegistry
from tests.example_agent.agent import units_agent
from tests.example_agent.component import UNITS
from tests.support.pgvector import PgvectorServer
from tests.support.servers import RedisServer, free_port

KEYS = {
    name: f"mcp-key-{name}-0123456789"
    for name in (
        "a", "b", "quota", "rate", "docs", "units", "errors", "client", "analytics", "code",
        "tests", "tasks", "meals", "events", "names", "chat", "listed", "strict", "fuzz",
        "guard", "degraded", "lists",
    )
}  # fmt: skip
#: MCP requests per key per minute on the test servers (the rate test makes one more).
RATE_LIMIT = 100
#: Threads per key (the quota test starts one more chat session).
THREAD_QUOTA = 3
MAX_BODY = 300_000


@dataclass
class McpServer:
    """The running app: its URL and the app (for its services)."""

    url: str
    app: FastAPI
    #: The server's own redis-server (stopped to simulate an outage).
    redis: RedisServer

    @property
    def endpoint(self) -> str:
        return f"{self.url}/mcp"

    @asynccontextmanager
    async def session(self, key: str | None) -> AsyncIterator[ClientSession]:
        """An initialized MCP client session with ``key`` (the official client)."""
        headers = {"X-API-Key": key} if key else {}
        timeout = httpx.Timeout(120, read=300)
        async with (
            httpx.AsyncClient(headers=headers, timeout=timeout) as http,
            streamable_http_client(self.endpoint, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@contextmanager
def serve(
    tmp_path_factory: pytest.TempPathFactory, database_url: str, **overrides: Any
) -> Iterator[McpServer]:
    """The app (the default agents and components plus the example capability) with
    ``overrides`` of its settings, on its own redis-server, until the block ends."""
    redis = RedisServer(port=free_port(), workdir=tmp_path_factory.mktemp("mcp-redis"))
    redis.start()
    data_dir: Path = tmp_path_factory.mktemp("mcp-data")
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "redis_url": redis.url,
        "database_url": database_url,
        "llm_provider": "none",
        "ollama_base_url": f"http://127.0.0.1:{free_port()}",
        "api_keys": ",".join(KEYS.values()),
        "rate_limit_per_minute": RATE_LIMIT,
        "max_threads_per_owner": THREAD_QUOTA,
        "max_request_bytes": MAX_BODY,
        "run_worker_enabled": False,
        **overrides,
    }
    settings = Settings(_env_file=None, **values)
    registry = AgentRegistry(default_agents())
    registry.register(units_agent())  # the example capability: its agent and its component
    app = create_app(settings, registry=registry, components=[*COMPONENTS, UNITS])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, server, thread)
        yield McpServer(url, app, redis)
    finally:
        if redis.process is None:  # a test stopped it: the app stops on a running Redis
            redis.start()
        server.should_exit = True
        thread.join(timeout=60)
        redis.stop()


@pytest.fixture(scope="package")
def mcp_server(
    tmp_path_factory: pytest.TempPathFactory, pgvector_server: PgvectorServer
) -> Iterator[McpServer]:
    with serve(tmp_path_factory, pgvector_server.database()) as server:
        yield server


@pytest.fixture(scope="package")
def degraded_server(
    tmp_path_factory: pytest.TempPathFactory, pgvector_server: PgvectorServer
) -> Iterator[McpServer]:
    """An app whose settings turn the sandbox off (no bubblewrap where they point)."""
    missing = tmp_path_factory.mktemp("no-bwrap") / "bwrap"
    with serve(
        tmp_path_factory, pgvector_server.database(), sandbox_bwrap_path=str(missing)
    ) as server:
        yield server


def _wait_healthy(
    url: str, server: uvicorn.Server, thread: threading.Thread, timeout: float = 240.0
) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise RuntimeError(f"the API at {url} stopped while starting (see the log above)")
        if server.started:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"the API at {url} did not start within {timeout} s")
