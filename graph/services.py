"""The composition root: everything one API process opens, built from the settings.

`Services.start(settings)` opens storage (embedded or configured), resolves the LLM provider,
wires the LLM cache, the rate limiter, the Redis checkpointer and the compiled graph;
`stop()` closes them in reverse order. The API's lifespan owns one instance.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.knowledge.store import KnowledgeStore
from agents.llm_cache import RedisLLMCache
from agents.models import LLMFactory, ProviderChoice, detect_provider, set_default_factory
from agents.test_analysis.lifecycle import start_analysis_worker, stop_analysis_worker
from config import Settings
from graph.deps import GraphDeps
from graph.registry import AgentRegistry
from graph.security import RateLimiter
from graph.sessions import SessionStore
from graph.workflow import SwitchyardGraph, compile_graph
from tools.storage import Stores, open_stores

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Open clients and components of one process."""

    settings: Settings
    stores: Stores
    llm: LLMFactory
    rate_limiter: RateLimiter
    deps: GraphDeps
    checkpointer: BaseCheckpointSaver
    graph: SwitchyardGraph
    sessions: SessionStore
    background: set[asyncio.Task[None]] = field(default_factory=set)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def registry(self) -> AgentRegistry:
        registry: AgentRegistry = self.graph.registry  # type: ignore[attr-defined]
        return registry

    @property
    def provider(self) -> ProviderChoice:
        return self.llm.choice

    @classmethod
    async def start(
        cls, settings: Settings, *, checkpointer: BaseCheckpointSaver | None = None
    ) -> Services:
        stores = await open_stores(settings)
        try:
            choice = await asyncio.to_thread(detect_provider, settings)
            log.info("LLM provider: %s (%s)", choice.provider, choice.reason)
            cache = RedisLLMCache(
                stores.redis_sync,  # type: ignore[arg-type]
                stores.redis,  # type: ignore[arg-type]
                ttl_seconds=settings.llm_cache_ttl_seconds,
            )
            llm = LLMFactory(settings, choice, cache=cache)
            set_default_factory(llm)
            limiter = RateLimiter.for_redis(
                stores.redis, stores.redis_url, settings.rate_limit_per_minute
            )
            saver = checkpointer or redis_saver(stores, settings)
            if hasattr(saver, "setup"):
                await saver.setup()
            deps = GraphDeps(settings, llm_factory=llm)
            # Load the embedding model now, not on the first message that needs routing.
            await asyncio.to_thread(deps.embeddings)
            # ONE knowledge store per process, on the process's Qdrant client: local mode allows
            # one client per folder, and the graph's nodes and /documents share this store.
            deps.knowledge_store = await KnowledgeStore.open(
                settings, embeddings=deps.embeddings(), qdrant_client=stores.qdrant
            )
            graph = compile_graph(deps, checkpointer=saver)
            ttl = settings.checkpoint_ttl_minutes * 60 if settings.checkpoint_ttl_minutes else None
            sessions = SessionStore(stores.redis, ttl_seconds=ttl)
            services = cls(settings, stores, llm, limiter, deps, saver, graph, sessions)
            await start_analysis_worker(services)
        except BaseException:
            await stores.close()
            raise
        return services

    async def stop(self) -> None:
        await stop_analysis_worker(self)
        if self.background:
            # Let turns that outlived their HTTP client finish, so their checkpoints land.
            await asyncio.wait(self.background, timeout=self.settings.llm_timeout_seconds)
        set_default_factory(None)
        await self.llm.aclose()
        if self.deps.knowledge_store is not None:
            await self.deps.knowledge_store.close()  # the shared Qdrant client closes below
        await self.stores.close()


def redis_saver(stores: Stores, settings: Settings) -> BaseCheckpointSaver:
    """Our Redis checkpointer on the process's Redis client, with the configured TTL."""
    from checkpointer import AsyncRedisSaver

    ttl = None
    if settings.checkpoint_ttl_minutes:
        ttl = {
            "default_ttl": settings.checkpoint_ttl_minutes,
            "refresh_on_read": settings.checkpoint_refresh_on_read,
        }
    return AsyncRedisSaver(stores.redis, ttl=ttl)
