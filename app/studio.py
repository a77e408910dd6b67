"""The graph and saver for `langgraph dev` / LangGraph Studio (langgraph-api's factories).

`langgraph.json` names both, and `app` for the server's lifetime::

    {"graphs": {"switchyard": "./app/studio.py:make_graph"},
     "checkpointer": {"path": "./app/studio.py:make_saver"},
     "http": {"app": "./app/studio.py:app"}}

langgraph-api calls `make_graph` for the graph (it may call it often, so the graph and the
services behind it are built once per process) and enters `make_saver`'s context manager for
the server's lifetime, so Studio's runs persist to Redis like the app's; the graph's engines close
when the server stops (`lifespan`). Settings come from the environment / `.env` (see `config.py`).
With REDIS_URL / DATABASE_URL unset, Studio uses the same embedded servers as the API (under
DATA_DIR), attaching to them when the API runs them; the last process using them stops them.

Runs started by langgraph-api carry Studio's context (the agents' options); the services
(models, embeddings, the knowledge base) are this process's, set as the context's default. The
LLM provider is decided here once, in a worker thread, never from inside a node.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from pydantic import Field, create_model
from pydantic.json_schema import SkipJsonSchema
from starlette.applications import Starlette

from agents.contract.context import AgentServices
from app import studio_engines as engines
from app.components.base import open_components
from app.storage import open_stores
from checkpointer.aio import AsyncRedisSaver
from config import Settings, load_settings
from graph.workflow import SwitchyardGraph, build_graph, build_registry
from tools.providers.chat_models import LLMFactory, detect_provider

log = logging.getLogger(__name__)


def studio_services(settings: Settings) -> AgentServices:
    """The agents' services of a Studio process (blocking: probes the LLM provider)."""
    choice = detect_provider(settings)
    log.info("LLM provider: %s (%s)", choice.provider, choice.reason)
    return AgentServices(settings, LLMFactory(settings, choice))


async def make_graph() -> SwitchyardGraph:
    """The Switchyard graph for langgraph-api: compiled without a checkpointer (langgraph-api
    refuses graphs that carry their own; it uses `make_saver`'s)."""
    async with engines.lock:
        if engines.graph is None:
            settings = load_settings()
            services = await asyncio.to_thread(studio_services, settings)
            # The engines agents use (stores, components) live as long as the server.
            stores = await open_stores(settings)
            engines.resources.push_async_callback(stores.close)
            components = await open_components(settings, services, stores)
            engines.resources.push_async_callback(components.aclose)
            builder = build_graph(build_registry(), services)
            base: Any = builder.context_schema
            hidden: Any = Annotated[Any, SkipJsonSchema()]
            builder.context_schema = create_model(
                "StudioContext",
                __base__=base,
                services=(hidden, Field(default_factory=lambda: services, exclude=True)),
            )
            engines.graph = builder.compile(name="switchyard")
        return engines.graph


@asynccontextmanager
async def make_saver() -> AsyncIterator[AsyncRedisSaver]:
    """An `AsyncRedisSaver` on REDIS_URL, with the configured checkpoint TTL."""
    settings = load_settings()
    ttl = None
    if settings.storage.checkpoint_ttl_minutes:
        ttl = {
            "default_ttl": settings.storage.checkpoint_ttl_minutes,
            "refresh_on_read": settings.storage.checkpoint_refresh_on_read,
        }
    embedded = None
    url = settings.storage.redis_url
    if not url:
        from tools.embedded import EmbeddedRedis

        embedded = await asyncio.to_thread(EmbeddedRedis, settings.storage.data_dir)
        url = embedded.url
    try:
        if embedded is not None:  # released at the latest with the graph's engines
            engines.resources.push_async_callback(asyncio.to_thread, embedded.release)
        async with AsyncRedisSaver.from_conn_string(
            url, ttl=ttl, cluster=True if settings.storage.redis_cluster else None
        ) as saver:
            yield saver
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.release)


@asynccontextmanager
async def lifespan(_: Starlette) -> AsyncIterator[None]:
    """The Studio server's lifetime: when it ends, the graph's engines close and this process's
    uses of the embedded servers end (the last process using them stops them).

    Neither the saver's exit nor an atexit hook would do: langgraph-api keeps the saver's
    context per thread and, at shutdown, leaves only the shutting-down thread's (seen: none),
    and once the server is down uvicorn re-raises the SIGTERM that stopped it, so the process
    dies by the signal without running atexit hooks."""
    try:
        yield
    finally:
        await engines.close()


#: langgraph.json's `http.app`: no routes of its own, only the server's lifetime.
app = Starlette(lifespan=lifespan)
