"""A Redis-backed LLM response cache, plugged into LangChain's `BaseCache` interface.

LangChain consults the cache inside `BaseChatModel` before calling the provider, with the
serialized prompt and an `llm_string` that holds the model name, temperature and every other
call parameter; the key is a hash of both, so a different model or temperature never shares an
entry. Entries expire after the configured TTL.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from collections.abc import Sequence
from typing import Any

import redis
import redis.asyncio as aredis
from langchain_core._api import LangChainBetaWarning
from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.load import dumps, loads
from langchain_core.outputs import Generation
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

DEFAULT_PREFIX = "sy:llmcache:"


def cache_key(prompt: str, llm_string: str, prefix: str = DEFAULT_PREFIX) -> str:
    """The Redis key of one (prompt, model parameters) pair."""
    digest = hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()
    return f"{prefix}{digest}"


def _encode(generations: RETURN_VAL_TYPE) -> str:
    return str(dumps(list(generations)))


def _decode(raw: bytes | str) -> list[Generation] | None:
    text = raw.decode() if isinstance(raw, bytes) else raw
    try:
        with warnings.catch_warnings():
            # `loads` is marked beta, but it is LangChain's own reader for what `dumps` wrote.
            warnings.simplefilter("ignore", LangChainBetaWarning)
            value = loads(text, allowed_objects="core")
    except Exception:  # a corrupt or foreign entry is a miss, never an error
        log.warning("ignoring an unreadable LLM cache entry")
        return None
    return value if isinstance(value, list) else None


class RedisLLMCache(BaseCache):
    """LLM generations cached in Redis with a TTL (sync and async clients)."""

    def __init__(
        self,
        client: redis.Redis | None,
        aclient: aredis.Redis | None,
        *,
        ttl_seconds: int = 3600,
        prefix: str = DEFAULT_PREFIX,
    ) -> None:
        self._client = client
        self._aclient = aclient
        self._ttl = ttl_seconds
        self._prefix = prefix
        self.hits = 0
        self.misses = 0
        self.errors = 0

    def _count(self, found: Sequence[Generation] | None) -> None:
        if found:
            self.hits += 1
        else:
            self.misses += 1

    def _unreachable(self, exc: RedisError) -> None:
        """A cache that cannot be reached is a miss (the model still answers), noted once."""
        self.errors += 1
        if self.errors == 1 or self.errors % 1000 == 0:
            log.warning("LLM cache unavailable (%s); calls go to the model uncached", exc)

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        if self._client is None:
            return None
        try:
            raw = self._client.get(cache_key(prompt, llm_string, self._prefix))
        except RedisError as exc:
            self._unreachable(exc)
            return None
        found = _decode(raw) if raw is not None else None
        self._count(found)
        return found

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        if self._client is not None:
            try:
                self._client.set(
                    cache_key(prompt, llm_string, self._prefix), _encode(return_val), ex=self._ttl
                )
            except RedisError as exc:
                self._unreachable(exc)

    def clear(self, **kwargs: Any) -> None:
        if self._client is not None:
            keys = list(self._client.scan_iter(match=f"{self._prefix}*", count=500))
            if keys:
                self._client.delete(*keys)

    async def alookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        if self._aclient is None:
            return self.lookup(prompt, llm_string)
        try:
            raw = await self._aclient.get(cache_key(prompt, llm_string, self._prefix))
        except RedisError as exc:
            self._unreachable(exc)
            return None
        found = _decode(raw) if raw is not None else None
        self._count(found)
        return found

    async def aupdate(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        if self._aclient is None:
            self.update(prompt, llm_string, return_val)
            return
        try:
            await self._aclient.set(
                cache_key(prompt, llm_string, self._prefix), _encode(return_val), ex=self._ttl
            )
        except RedisError as exc:
            self._unreachable(exc)

    async def aclear(self, **kwargs: Any) -> None:
        if self._aclient is None:
            self.clear()
            return
        keys = [key async for key in self._aclient.scan_iter(match=f"{self._prefix}*", count=500)]
        if keys:
            await self._aclient.delete(*keys)
