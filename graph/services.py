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

from agents.llm_cache import RedisLLMCache
from agents.models import LLMFactory, ProviderChoice, detect_provider, set_default_factory
from config import Settings
from graph.security import RateLimiter
from tools.storage import Stores, open_stores

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Open clients and components of one process."""

    settings: Settings
    stores: Stores
    llm: LLMFactory
    rate_limiter: RateLimiter
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def provider(self) -> ProviderChoice:
        return self.llm.choice

    @classmethod
    async def start(cls, settings: Settings) -> Services:
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
                stores.redis_url, settings.rate_limit_per_minute, cluster=settings.redis_cluster
            )
        except BaseException:
            await stores.close()
            raise
        return cls(settings, stores, llm, limiter)

    async def stop(self) -> None:
        set_default_factory(None)
        await self.llm.aclose()
        await self.stores.close()
