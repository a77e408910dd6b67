"""The composition root: everything one API process opens, built from the settings.

`Services.start(settings)` opens storage (embedded or configured), resolves the LLM provider
(once, in a worker thread), wires the LLM cache, the rate limiter, the agents' services, the
Redis checkpointer, the compiled graphs and the background-run worker; `stop()` closes them in
reverse order. The API's lifespan owns one instance; routes get it through `ServicesDep`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from fastapi import Depends, Request
from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.contract.context import AgentOptions, AgentServices, RunContext, options_model_for
from app.components.base import Component, Components, open_components, operation_registry
from app.runs.store import RunStore
from app.runs.threads import ThreadRuns
from app.runs.worker import RunWorker
from app.security import RateLimiter
from app.sessions import SessionStore
from app.storage import Stores, open_stores
from config import Settings
from graph.registry import AgentRegistry
from graph.workflow import SwitchyardGraph, build_registry, compile_graph
from tools.background import bounded_step
from tools.operations import OperationRegistry
from tools.providers.cache import RedisLLMCache
from tools.providers.chat_models import LLMFactory, ProviderChoice, detect_provider

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Open clients and components of one process."""

    settings: Settings
    stores: Stores
    llm: LLMFactory
    rate_limiter: RateLimiter
    agents: AgentServices
    registry: AgentRegistry
    checkpointer: BaseCheckpointSaver[Any]
    graph: SwitchyardGraph
    sync_graph: SwitchyardGraph
    sessions: SessionStore
    runs: RunStore
    components: Components
    operations: OperationRegistry
    """Every operation of the open components (served as routes, agent tools, MCP tools)."""
    worker: RunWorker | None = None
    background: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def provider(self) -> ProviderChoice:
        return self.llm.choice

    @property
    def thread_runs(self) -> ThreadRuns:
        """Serial runs on threads (their order, the thread lock, how they end)."""
        return ThreadRuns(
            self.runs,
            self.sessions,
            self.checkpointer,
            lock_seconds=max(self.settings.runs.claim_timeout_seconds * 2, 10.0),
        )

    @property
    def options_model(self) -> type[AgentOptions]:
        """The flat per-run options model of the registered agents (``options`` in requests)."""
        return options_model_for(self.registry.options())

    def context(
        self,
        options: AgentOptions | Mapping[str, Any] | None = None,
        *,
        owner: str = "anonymous",
        client: Literal["rest", "agent_server"] = "rest",
    ) -> RunContext:
        """The run context of one run: these services, the caller's owner id (the scope of the
        data agents may touch), the interface that started it, and the option overrides."""
        if isinstance(options, AgentOptions):
            values = options.model_dump(exclude_none=True)
        else:
            values = {k: v for k, v in (options or {}).items() if v is not None}
        schema: Any = self.graph.context_schema
        context: RunContext = schema(services=self.agents, owner=owner, client=client, **values)
        return context

    @classmethod
    async def start(
        cls,
        settings: Settings,
        *,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        registry: AgentRegistry | None = None,
        listed: Sequence[Component] | None = None,
    ) -> Services:
        stores = await open_stores(settings)
        components: Components | None = None
        try:
            choice = await asyncio.to_thread(detect_provider, settings)
            log.info("LLM provider: %s (%s)", choice.provider, choice.reason)
            cache = RedisLLMCache(
                stores.redis_sync,  # type: ignore[arg-type]
                stores.redis,  # type: ignore[arg-type]
                ttl_seconds=settings.llm.cache_ttl_seconds,
            )
            llm = LLMFactory(settings, choice, cache=cache)
            limiter = RateLimiter.for_redis(
                stores.redis, stores.redis_url, settings.api.rate_limit_per_minute
            )
            saver = checkpointer or redis_saver(stores, settings)
            if hasattr(saver, "setup"):
                await saver.setup()
            agents = AgentServices(settings, llm)
            # Load the embedding model now, not on the first message that needs routing.
            await asyncio.to_thread(agents.embeddings)
            if listed is None:
                from app.components.registry import COMPONENTS  # routers import this module

                listed = COMPONENTS
            components = await open_components(settings, agents, stores, listed)
            registry = registry or build_registry()
            graph = compile_graph(registry, agents, checkpointer=saver)
            # The synchronous analysis endpoint's runs live and die with their request:
            # the same graph without a checkpointer.
            sync_graph = compile_graph(registry, agents)
            ttl = (
                settings.storage.checkpoint_ttl_minutes * 60
                if settings.storage.checkpoint_ttl_minutes
                else None
            )
            sessions = SessionStore(
                stores.redis,
                ttl_seconds=ttl,
                refresh_on_read=settings.storage.checkpoint_refresh_on_read,
            )
            runs = RunStore(
                stores.redis,
                ttl_seconds=settings.runs.record_ttl_seconds,
                cluster=settings.storage.redis_cluster,
            )
            services = cls(
                settings,
                stores,
                llm,
                limiter,
                agents,
                registry,
                saver,
                graph,
                sync_graph,
                sessions,
                runs,
                components,
                operation_registry(listed),
            )
            await services.start_worker()
        except BaseException:
            if components is not None:
                await components.aclose()
            await stores.close()
            raise
        return services

    async def start_worker(self) -> None:
        """This process's background-run worker (unless RUN_WORKER_ENABLED=false)."""
        if not self.settings.runs.worker_enabled:
            return
        self.worker = RunWorker(
            runs=self.runs,
            graph=self.graph,
            context=self.context,
            settings=self.settings,
            threads=self.thread_runs,
            streams_answer=self.registry.streams,
        )
        await self.worker.start()

    async def stop(self) -> None:
        """Stop the worker, let turns still running land, close the engines and the stores;
        each step is bounded by SHUTDOWN_STEP_SECONDS (the worker's by that plus
        WEBHOOK_SHUTDOWN_GRACE_SECONDS, which its stop spends delivering queued webhooks), so a
        step that hangs is named in the log and the rest still run (a stop never hangs). Turns
        still running get up to LLM_TIMEOUT_SECONDS, as long as one model call may take."""
        bound = self.settings.api.shutdown_step_seconds
        if self.worker is not None:
            # the worker's stop includes the queued webhooks' own grace period
            grace = self.settings.webhooks.shutdown_grace_seconds
            await bounded_step(self.worker.stop(), what="the run worker", timeout=bound + grace)
        if self.background:
            # Let turns that outlived their HTTP client finish, so their checkpoints land.
            await asyncio.wait(self.background, timeout=self.settings.llm.timeout_seconds)
        await bounded_step(self.components.aclose(), what="the components", timeout=bound)
        await bounded_step(self.llm.aclose(), what="the LLM clients", timeout=bound)
        await bounded_step(self.stores.close(), what="the stores", timeout=bound)


def redis_saver(stores: Stores, settings: Settings) -> BaseCheckpointSaver[Any]:
    """Our Redis checkpointer on the process's Redis client, with the configured TTL."""
    from checkpointer import AsyncRedisSaver

    ttl = None
    if settings.storage.checkpoint_ttl_minutes:
        ttl = {
            "default_ttl": settings.storage.checkpoint_ttl_minutes,
            "refresh_on_read": settings.storage.checkpoint_refresh_on_read,
        }
    return AsyncRedisSaver(stores.redis, ttl=ttl)


def get_services(request: Request) -> Services:
    """The process's services (a FastAPI dependency)."""
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]
