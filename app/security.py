"""API keys, thread ownership and the per-client rate limit.

With API_KEYS set, every request must carry one (`X-API-Key: ...` or `Authorization: Bearer
...`), and the caller is identified by a hash of its key (the key itself is never stored or
logged). A session belongs to the caller that created it; any other caller gets 404, the same
answer as for a session that does not exist, so ids cannot be probed.

The rate limit is a moving window per caller (key hash, or client address without keys), kept in
Redis by the `limits` library so every API replica shares it. While Redis is unreachable the
limit still holds, per process: each replica counts its own callers in memory (logged once when
it switches and once when it switches back), so an outage of Redis neither lets unlimited
traffic through nor turns every request into an error.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from dataclasses import dataclass
from typing import Annotated

import redis.asyncio as aredis
from fastapi import Depends, HTTPException, Request, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisClusterStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError

from config import Settings

log = logging.getLogger(__name__)

ANONYMOUS = "anonymous"

_header = APIKeyHeader(name="X-API-Key", auto_error=False)
_bearer = HTTPBearer(auto_error=False)


def owner_of(key: str) -> str:
    """A stable, non-reversible owner id for an API key."""
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Caller:
    """Who is calling: the owner id used to scope threads, and the rate-limit identity."""

    owner: str
    client: str


def _valid_key(settings: Settings, candidate: str) -> bool:
    return any(
        hmac.compare_digest(candidate.encode(), key.get_secret_value().encode())
        for key in settings.api_keys
    )


async def caller(
    request: Request,
    header_key: Annotated[str | None, Depends(_header)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """Authenticate (when API_KEYS is set) and rate-limit the request."""
    settings: Settings = request.app.state.settings
    address = request.client.host if request.client else "unknown"
    if settings.api_keys:
        key = header_key or (bearer.credentials if bearer else None)
        if not key or not _valid_key(settings, key):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Missing or unknown API key: send it as 'X-API-Key: <key>' or "
                "'Authorization: Bearer <key>'.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        who = Caller(owner=owner_of(key), client=owner_of(key))
    else:
        who = Caller(owner=ANONYMOUS, client=f"ip-{address}")
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is not None:
        await limiter.check(who.client)
    return who


CallerDep = Annotated[Caller, Depends(caller)]


class RateLimiter:
    """`per_minute` requests per client in a moving window, stored in Redis (in this process's
    memory while Redis is unreachable)."""

    def __init__(self, storage: Storage, per_minute: int) -> None:
        self._shared = MovingWindowRateLimiter(storage)
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._item = RateLimitItemPerMinute(per_minute)
        self._degraded = False

    @classmethod
    def for_redis(
        cls, client: aredis.Redis | aredis.RedisCluster, url: str, per_minute: int
    ) -> RateLimiter:
        """A limiter on the process's own Redis client (no second connection pool to close)."""
        storage: Storage
        if isinstance(client, aredis.RedisCluster):
            rest = url.split("://", 1)[1]
            storage = RedisClusterStorage(
                f"async+redis+cluster://{rest}", implementation="redispy", key_prefix="sy:ratelimit"
            )
        else:
            # The URI must parse but is not dialled: connections come from the shared pool.
            storage = RedisStorage(
                "async+redis://127.0.0.1:6379",
                implementation="redispy",
                key_prefix="sy:ratelimit",
                connection_pool=client.connection_pool,  # type: ignore[arg-type]
            )
        return cls(storage, per_minute)

    async def _hit(self, client: str, cost: int = 1) -> tuple[bool, MovingWindowRateLimiter]:
        try:
            allowed = await self._shared.hit(self._item, client, cost=cost)
        except (RedisError, OSError) as exc:
            if not self._degraded:
                log.warning(
                    "rate limiter: Redis unreachable (%s); limiting per process until it is back",
                    exc,
                )
                self._degraded = True
            return await self._local.hit(self._item, client, cost=cost), self._local
        if self._degraded:
            log.info("rate limiter: Redis is back; limits are shared again")
            self._degraded = False
        return allowed, self._shared

    async def check(self, client: str, cost: int = 1) -> None:
        """Count ``cost`` requests for ``client`` (a batch of runs counts each run); 429 when
        they do not fit in the window."""
        if cost > self._item.amount:
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"This request counts as {cost} requests, more than the rate limit of "
                f"{self._item.amount} per minute (RATE_LIMIT_PER_MINUTE); send fewer at once.",
            )
        allowed, limiter = await self._hit(client, cost)
        if not allowed:
            stats = await limiter.get_window_stats(self._item, client)
            retry = max(1, int(stats.reset_time - time.time()))
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"Rate limit of {self._item.amount} requests per minute "
                f"(RATE_LIMIT_PER_MINUTE) exceeded; retry in {retry} s.",
                headers={"Retry-After": str(retry)},
            )
