"""The knowledge component: ONE knowledge store per process, in the process's Postgres.

At start-up (API and Studio), :func:`start_knowledge` opens the `KnowledgeStore` in the
process's Postgres (DATABASE_URL, or the embedded one that every process on the DATA_DIR
shares), provides it to the agents' services (the knowledge agent's nodes, its routing probe
and the knowledge operations behind `/documents` read it with
``services.engine(KnowledgeStore)``), closes it at shutdown, and adds the ``knowledge`` health
check.

A Postgres that cannot hold the knowledge base (no pgvector) does not stop the start: the store
is opened without ``require``, so it is still provided and every call on it raises
`KnowledgeEngineError` naming the fix (503 on the routes; ``/health`` shows it, not required),
while everything else serves.
"""

from __future__ import annotations

import asyncio
import time

from app.components.base import Component, Components
from app.routers.knowledge import router
from app.storage import Dependency
from tools.knowledge.operations import OPERATIONS
from tools.knowledge.store import KnowledgeStore

#: How long the health check waits for the knowledge base's counts.
HEALTH_TIMEOUT_SECONDS = 3.0


async def start_knowledge(components: Components) -> None:
    """Open the process's knowledge store and provide it to the agents."""
    settings = components.settings
    agents = components.agents
    # loading the embedding model blocks: not on the event loop (Studio's server refuses it)
    embeddings = await asyncio.to_thread(agents.embeddings)
    store = await KnowledgeStore.open(
        settings,
        embeddings=embeddings,
        database_url=components.stores.database_url,
        require=False,
    )
    components.stack.push_async_callback(store.close)
    agents.provide(store)
    mode = "server" if settings.storage.database_url else "embedded"

    async def check() -> Dependency:
        return await knowledge_health(store, mode)

    components.health.append(check)


async def knowledge_health(
    store: KnowledgeStore, mode: str, timeout: float = HEALTH_TIMEOUT_SECONDS
) -> Dependency:
    """The knowledge base (tables in the process's Postgres): not required, so a server without
    pgvector shows here with its fix while everything else keeps serving."""
    started = time.perf_counter()
    try:
        await asyncio.wait_for(store.stats(), timeout)
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Dependency("knowledge", "error", mode, ms, "postgres", reason, required=False)
    ms = round((time.perf_counter() - started) * 1000, 2)
    return Dependency("knowledge", "ok", mode, ms, "postgres", required=False)


#: The knowledge capability's part of the app: its engine, operations and routes.
COMPONENT = Component("knowledge", start_knowledge, OPERATIONS, router)
