"""The personal component: tasks, meals and events of each user, their vectors, webhooks, memory.

At start-up (API and Studio), :func:`start_personal`
- opens the `PersonalService` on the process's Postgres pool (DATABASE_URL, or the embedded
  Postgres) and runs its migrations (schema ``personal``; idempotent, safe when several
  processes start at once);
- picks the vector index of PERSONAL_VECTOR_BACKEND: ``qdrant`` (the Qdrant server at
  QDRANT_URL, or local mode under DATA_DIR/qdrant-personal, one process at a time),
  ``pgvector`` (a table in the same Postgres), or
  ``auto``: Qdrant when QDRANT_URL is set, else pgvector when the Postgres has the extension
  (the embedded one does), else the local Qdrant;
- opens the webhook sender (PERSONAL_WEBHOOK_URLS; dead letters in Redis) and LangGraph's
  Postgres store for the long-term facts about each user, and closes both at shutdown;
- provides all three to the agents' services (the task, food and event agents read them, and
  the REST endpoints of `app/routers/personal.py`);
- adds the ``personal`` health check (a query on the schema) and metrics (pool, webhooks).
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AsyncExitStack
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.postgres import AsyncPostgresStore
from psycopg_pool import AsyncConnectionPool
from qdrant_client import QdrantClient

from app.components.base import Components
from app.storage import Dependency, StartupError, Stores
from config import Settings
from tools.personal.pgvector import PgVectorItemIndex
from tools.personal.service import PersonalLimits, PersonalService
from tools.personal.vectors import ItemVectorIndex, QdrantItemIndex, VectorIndexError
from tools.personal.webhooks import WebhookConfig, WebhookSender

log = logging.getLogger(__name__)

#: How long the health check waits for a connection.
HEALTH_TIMEOUT_SECONDS = 3.0


async def has_pgvector(pool: AsyncConnectionPool) -> bool:
    """Whether the pool's Postgres can load the pgvector extension."""
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return await cur.fetchone() is not None


#: Qdrant local mode's folder under DATA_DIR, used only when no server nor pgvector is there.
LOCAL_QDRANT_FOLDER = "qdrant-personal"


def local_qdrant(settings: Settings) -> QdrantClient:
    """Qdrant local mode under DATA_DIR (one process at a time may open it)."""
    folder = settings.data_dir / LOCAL_QDRANT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    try:
        # used from worker threads, hence no same-thread check on its sqlite file
        return QdrantClient(path=str(folder), force_disable_check_same_thread=True)
    except RuntimeError as exc:
        raise StartupError(
            f"personal: the local Qdrant in {folder} is open in another process ({exc}); with "
            "several processes, use a Postgres with pgvector (the embedded one has it) or set "
            "QDRANT_URL"
        ) from None


async def vector_index(
    settings: Settings, stores: Stores, stack: AsyncExitStack
) -> ItemVectorIndex:
    """The vector index PERSONAL_VECTOR_BACKEND names (``auto``: see the module docstring)."""
    backend = settings.personal_vector_backend
    if backend == "auto":
        if settings.qdrant_url:
            backend = "qdrant"
        elif await has_pgvector(stores.pg):
            backend = "pgvector"
        else:
            log.info("personal: this Postgres has no pgvector; item vectors go to local Qdrant")
            backend = "qdrant"
    if backend == "pgvector":
        return PgVectorItemIndex(stores.pg)
    client = stores.qdrant
    if client is None:
        log.info(
            "personal: item vectors in a local Qdrant under %s (one process at a time; a "
            "Postgres with pgvector or QDRANT_URL lets several share them)",
            settings.data_dir / LOCAL_QDRANT_FOLDER,
        )
        client = await asyncio.to_thread(local_qdrant, settings)
        stack.callback(client.close)
    return QdrantItemIndex(client, settings.personal_qdrant_collection)


async def start_personal(components: Components) -> None:
    """Open the personal data engine, the webhooks and the memory store; provide them."""
    settings = components.settings
    stores = components.stores
    index = await vector_index(settings, stores, components.stack)
    # loading the embedding model blocks: not on the event loop (Studio's server refuses it)
    embeddings = await asyncio.to_thread(components.agents.embeddings)
    service = PersonalService(stores.pg, index, embeddings, PersonalLimits.from_settings(settings))
    try:
        await service.setup()
    except VectorIndexError as exc:
        raise StartupError(f"personal: {exc}") from None
    memory = AsyncPostgresStore(stores.pg)  # type: ignore[arg-type]
    await memory.setup()
    # a Redis Cluster client has the same stream commands the dead letters use
    dead_letters: Any = stores.redis
    webhooks = WebhookSender(WebhookConfig.from_settings(settings), redis=dead_letters)
    components.stack.push_async_callback(webhooks.close)
    components.agents.provide(service)
    components.agents.provide(webhooks)
    components.agents.provide(memory, as_type=BaseStore)
    mode = "server" if settings.database_url else "embedded"

    async def check() -> Dependency:
        return await personal_health(stores.pg, index.backend, mode)

    def snapshot() -> dict[str, Any]:
        return {
            "vector_backend": index.backend,
            "webhooks": len(settings.personal_webhook_urls),
            "timezone": settings.personal_timezone,
        }

    components.health.append(check)
    components.metrics["personal"] = snapshot


async def personal_health(
    pool: AsyncConnectionPool, backend: str, mode: str, timeout: float = HEALTH_TIMEOUT_SECONDS
) -> Dependency:
    """The personal data's health: the schema answers a query (``mode``: server/embedded)."""
    started = time.perf_counter()

    def done(status: str, error: str | None = None) -> Dependency:
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Dependency(
            "personal", status, mode, ms, f"schema personal, vectors in {backend}", error,
            required=False,
        )  # fmt: skip

    try:
        async with pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1 FROM personal.tasks LIMIT 1")
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return done("error", reason.splitlines()[0])
    return done("ok")
