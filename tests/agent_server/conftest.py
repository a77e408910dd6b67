"""A real Switchyard API process (with the test agents) for the Agent Server API tests.

One process per test module: its own redis-server, the machine's Postgres, an OpenAI-compatible
stub for the chat model, two API keys, fast heartbeats (cancels land within 0.3 s), and
webhooks allowed to 127.0.0.1 (the tests' receiver).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer, free_port
from tests.support.stub_openai import StubOpenAI

KEY_A = "key-a-0123456789"
KEY_B = "key-b-0123456789"


def api_env(folder: Path, redis_url: str, postgres_url: str, stub: StubOpenAI) -> dict[str, str]:
    return {
        "REDIS_URL": redis_url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder),
        "API_KEYS": f"{KEY_A},{KEY_B}",
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": stub.base_url,
        "LLM_CACHE_TTL_SECONDS": "0",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "RUN_HEARTBEAT_SECONDS": "0.3",
        "RUN_CLAIM_TIMEOUT_SECONDS": "3",
        "RUN_WORKER_CONCURRENCY": "4",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
        "LOG_LEVEL": "INFO",
    }


@pytest.fixture(scope="module")
def stub() -> Iterator[StubOpenAI]:
    server = StubOpenAI().start()
    server.responder = lambda request: "one two three four"
    yield server
    server.stop()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(port=free_port(), workdir=tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: RedisServer,
    postgres_url: str,
    stub: StubOpenAI,
) -> Iterator[ApiProcess]:
    folder = tmp_path_factory.mktemp("agent-server")
    env = api_env(folder, redis_server.url, postgres_url, stub)
    process = ApiProcess(env, log_path=folder / "api.log", module="tests.agent_server.serve").start(
        timeout=180
    )
    yield process
    process.stop()


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A client on the server's Redis (the test agents' counters and holds)."""
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    yield client
    client.delete(*client.keys("sy-test:hold:*") or ["-"])
    client.close()


def wait_for(condition: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Poll ``condition`` until it is truthy (waiting for an event, not a duration)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.05)


class Receiver:
    """A local webhook receiver: records every POST body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as found:
        yield found
