"""The personal component: tasks, meals and events of each user, their vectors, webhooks, memory.

At start-up (API and Studio), :func:`start_personal`
- opens the `PersonalService` on the process's Postgres pool (DATABASE_URL, or the embedded
  Postgres) and runs its migrations (schema ``personal``; idempotent, safe when several
  processes start at once);
- keeps the items' vectors in that same Postgres with pgvector (``personal.item_vectors``,
  owner-scoped SQL, like the knowledge base): one store, no second server;
- opens the webhook sender (PERSONAL_WEBHOOK_URLS; dead letters in Redis) and LangGraph's
  Postgres store for the long-term facts about each user, and closes both at shutdown; the
  store is also what the Agent Server store API (`app/agent_server/store.py`) serves: with an
  embedding index on the same pgvector as the items (semantic `query` search) and per-item TTL
  (expired items are hidden at once and swept every STORE_TTL_SWEEP_MINUTES);
- makes tasks' and events' reminders fire (`remind_at`, on the scheduler and the owners'
  notification streams, and the webhooks);
- provides all three to the agents' services (the task, food and event agents read them, and
  the REST endpoints of `app/routers/personal.py`);
- adds the ``personal`` health check (a query on the schema) and metrics (pool, webhooks).

A Postgres without pgvector does not stop the start (the knowledge component's rule): tasks,
meals and events are stored, listed and filtered as usual, one warning names the fix, the
health check shows ``degraded`` (not required) with that reason, and the semantic and hybrid
searches answer `SemanticSearchOff` (503 on a route, an error message to an agent's model).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, TTLConfig
from langgraph.store.postgres import AsyncPostgresStore
from langgraph.store.postgres.base import PostgresIndexConfig

from app.components.base import Component, Components
from app.routers.personal import router
from app.storage import Dependency, StartupError, Stores
from tools.notifications import Notifications
from tools.operations import EngineNotOpen
from tools.personal.operations import OPERATIONS
from tools.personal.pgvector import VectorIndexError
from tools.personal.reminders import Reminders
from tools.personal.service import PersonalLimits, PersonalService
from tools.personal.webhooks import WebhookConfig, WebhookSender
from tools.scheduler import Scheduler

log = logging.getLogger(__name__)

#: How long the health check waits for a connection.
HEALTH_TIMEOUT_SECONDS = 3.0


#: Key of the session advisory lock around the memory store's migrations (unique to us).
MEMORY_SETUP_LOCK = 0x5357_4D45_4D4F_5259


async def setup_memory(memory: AsyncPostgresStore, stores: Stores) -> None:
    """Run LangGraph's store migrations, one process at a time: two processes starting at once
    on one Postgres both inserted the same migration row (UniqueViolation) without the lock."""
    async with stores.pg.connection() as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (MEMORY_SETUP_LOCK,))
        try:
            await memory.setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (MEMORY_SETUP_LOCK,))


#: Facts kept before namespaces were owner-first (``personal.<owner>.facts``) move under
#: their owner (``<owner>.personal.facts``, see tools/store_scope.py); idempotent.
MOVE_LEGACY_FACTS = """
UPDATE store SET prefix = split_part(prefix, '.', 2) || '.personal.facts'
WHERE prefix LIKE 'personal.%.facts' AND array_length(string_to_array(prefix, '.'), 1) = 3
  AND NOT EXISTS (
    SELECT 1 FROM store AS moved
    WHERE moved.prefix = split_part(store.prefix, '.', 2) || '.personal.facts'
      AND moved.key = store.key)
"""


async def open_memory(
    components: Components, embeddings: Embeddings, *, indexed: bool
) -> AsyncPostgresStore:
    """LangGraph's Postgres store with per-item TTL, and an embedding index when pgvector is
    there (``indexed``); migrated, its legacy facts moved, its TTL sweeper running."""
    stores = components.stores
    index: PostgresIndexConfig | None = None
    if indexed:
        probe = await embeddings.aembed_query("dimension probe")
        index = {"dims": len(probe), "embed": embeddings, "fields": ["$"]}
    ttl: TTLConfig = {
        "refresh_on_read": True,
        "omit_expired": True,
        "sweep_interval_minutes": components.settings.store.ttl_sweep_minutes,
    }
    memory = AsyncPostgresStore(stores.pg, index=index, ttl=ttl)  # type: ignore[arg-type]
    await setup_memory(memory, stores)
    async with stores.pg.connection() as conn:
        await conn.execute(MOVE_LEGACY_FACTS)
    await memory.start_ttl_sweeper()
    components.stack.push_async_callback(memory.stop_ttl_sweeper, 5.0)
    return memory


async def start_personal(components: Components) -> None:
    """Open the personal data engine, the webhooks and the memory store; provide them."""
    settings = components.settings
    stores = components.stores
    # loading the embedding model blocks: not on the event loop (Studio's server refuses it)
    embeddings = await asyncio.to_thread(components.agents.embeddings)
    service = PersonalService(stores.pg, embeddings, PersonalLimits.from_settings(settings))
    try:
        await service.setup()
    except VectorIndexError as exc:
        raise StartupError(f"personal: {exc}") from None
    if service.semantic_search_off:
        log.warning("personal: %s", service.semantic_search_off)
    memory = await open_memory(components, embeddings, indexed=service.semantic_search_off is None)
    # a Redis Cluster client has the same stream commands the dead letters use
    dead_letters: Any = stores.redis
    webhooks = WebhookSender(WebhookConfig.from_settings(settings), redis=dead_letters)
    components.stack.push_async_callback(webhooks.close)
    components.agents.provide(service)
    components.agents.provide(webhooks)
    components.agents.provide(memory, as_type=BaseStore)
    attach_reminders(components, service, webhooks)
    mode = "server" if settings.storage.database_url else "embedded"

    async def check() -> Dependency:
        return await personal_health(service, mode)

    def snapshot() -> dict[str, Any]:
        return {
            "semantic_search": service.semantic_search_off is None,
            "webhooks": len(settings.personal.webhook_urls),
            "timezone": settings.personal.timezone,
        }

    components.health.append(check)
    components.metrics["personal"] = snapshot


def attach_reminders(
    components: Components, service: PersonalService, webhooks: WebhookSender
) -> None:
    """Tasks' and events' ``remind_at`` fire (tools/personal/reminders.py): on the scheduler
    and the notification streams, when both components are on (a warning otherwise)."""
    try:
        scheduler = components.agents.engine(Scheduler)
        notifications = components.agents.engine(Notifications)
    except EngineNotOpen as exc:
        log.warning("personal: reminders will not fire: %s", exc)
        return
    Reminders(service, scheduler, notifications, webhooks).attach()


async def personal_health(
    service: PersonalService, mode: str, timeout: float = HEALTH_TIMEOUT_SECONDS
) -> Dependency:
    """The personal data's health: the schema answers a query (``mode``: server/embedded);
    ``degraded`` with the fix when semantic search is off (no pgvector). Not required."""
    started = time.perf_counter()
    off = service.semantic_search_off
    target = "schema personal, " + ("vectors in pgvector" if off is None else "no vectors")

    def done(status: str, error: str | None = None) -> Dependency:
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Dependency("personal", status, mode, ms, target, error, required=False)

    try:
        async with service.pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1 FROM personal.tasks LIMIT 1")
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return done("error", reason.splitlines()[0])
    return done("ok") if off is None else done("degraded", off)


#: The personal capability's part of the app: its engine, operations and routes.
COMPONENT = Component("personal", start_personal, OPERATIONS, router)
