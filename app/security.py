"""API keys, thread ownership and the per-client rate limit.

With API_KEYS set, every request must carry one (`X-API-Key: ...` or `Authorization: Bearer
...`), and the caller is identified by an HMAC of its key with the server's owner-id secret
(OWNER_ID_SECRET, else a random one shared through Redis): the key itself is never stored or
logged, and an owner id shown to another key (document sources) cannot be used to guess a weak
key offline. Without API_KEYS the server serves one anonymous owner, and only on loopback unless
ALLOW_ANONYMOUS=true (`open_door`). A session belongs to the caller that created it; any
other caller gets 404, the same answer as for a session that does not exist, so ids cannot be
probed.

The rate limit is a moving window per caller (owner id, or client address without keys), kept in
Redis by the `limits` library so every API replica shares it. While Redis is unreachable the
limit still holds, per process: each replica counts its own callers in memory (logged once when
it switches and once when it switches back), so an outage of Redis neither lets unlimited
traffic through nor turns every request into an error.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import redis.asyncio as aredis
from fastapi import Depends, HTTPException, Request, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisClusterStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from pydantic import SecretStr
from redis.exceptions import RedisError

from app.owner_metrics import OWNER_SCOPE_KEY
from config import Settings
from tools.replica_secret import replica_secret

log = logging.getLogger(__name__)

ANONYMOUS = "anonymous"

_header = APIKeyHeader(name="X-API-Key", auto_error=False)
_bearer = HTTPBearer(auto_error=False)


#: Where the generated owner-id secret is shared between replicas (SET NX: the first one wins).
OWNER_SECRET_KEY = "sy:owner-id-secret"
#: The generated owner-id secret's copy under DATA_DIR (seeds Redis again after it was emptied).
OWNER_SECRET_FILE = "owner-id-secret"


def owner_of(key: str, secret: bytes) -> str:
    """A stable owner id for an API key: an HMAC with the server's secret, so it can be shown
    (document sources) without letting anyone test guesses of the key offline."""
    return "key-" + hmac.new(secret, key.encode(), hashlib.sha256).hexdigest()[:24]


async def owner_secret(settings: Settings, redis: aredis.Redis | aredis.RedisCluster) -> bytes:
    """The HMAC key of owner ids: OWNER_ID_SECRET, else one random secret every replica on this
    Redis agrees on (SET NX), also kept under DATA_DIR so that it survives an emptied Redis."""
    if settings.security.owner_id_secret is not None:
        return settings.security.owner_id_secret.get_secret_value().encode()
    path = Path(settings.storage.data_dir) / OWNER_SECRET_FILE
    return await replica_secret(
        redis, OWNER_SECRET_KEY, path, what="owner ids", setting="OWNER_ID_SECRET"
    )


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves this machine only (a name other than localhost counts
    as public: it may resolve to any address)."""
    if host.strip().lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def open_door(settings: Settings, host: str) -> str | None:
    """Why serving on `host` with these settings would be an open door (None: it is not)."""
    if auth_keys(settings) or settings.security.allow_anonymous or is_loopback(host):
        return None
    return (
        f"Refusing to serve on {host} without API_KEYS: anyone who reaches it could read every "
        "thread and run code. Set API_KEYS=<key>[,<key>...], bind HOST=127.0.0.1, or opt in "
        "with ALLOW_ANONYMOUS=true."
    )


def auth_keys(settings: Settings) -> list[SecretStr]:
    """Every accepted key: API_KEYS and OPERATOR_API_KEYS (an operator key is a key too)."""
    return [*settings.api.api_keys, *settings.security.operator_api_keys]


@dataclass(frozen=True)
class Caller:
    """Who is calling: the owner id used to scope threads, the rate-limit identity, and whether
    it holds an operator key (the process-wide /metrics)."""

    owner: str
    client: str
    operator: bool = False


def _matches(candidate: str, keys: list[SecretStr]) -> bool:
    return any(
        hmac.compare_digest(candidate.encode(), key.get_secret_value().encode()) for key in keys
    )


def _valid_key(settings: Settings, candidate: str) -> bool:
    return _matches(candidate, auth_keys(settings))


def _presented(header_key: str | None, bearer: HTTPAuthorizationCredentials | None) -> str | None:
    return header_key or (bearer.credentials if bearer else None)


def _secret(request: Request) -> bytes:
    secret: bytes | None = getattr(request.app.state, "owner_secret", None)
    if secret is None:  # set by the lifespan before any request is served
        raise RuntimeError("the owner-id secret is not loaded (the app's lifespan did not run)")
    return secret


def _served_publicly(request: Request) -> bool:
    """Whether this request reached the server on a non-loopback address (the socket's own
    address: known here even when the app was started by another launcher than `serve`)."""
    server = request.scope.get("server")
    if not server:
        return False  # a unix socket: local
    try:
        return not ipaddress.ip_address(str(server[0])).is_loopback
    except ValueError:
        return False  # not a socket address (an in-process test client)


def identify(request: Request, key: str | None) -> Caller | None:
    """The caller a request's key names (None: no valid key). Without any configured key,
    everyone is the anonymous owner, on loopback only unless ALLOW_ANONYMOUS=true."""
    settings: Settings = request.app.state.settings
    if not auth_keys(settings):
        if _served_publicly(request) and not settings.security.allow_anonymous:
            return None
        address = request.client.host if request.client else "unknown"
        return Caller(owner=ANONYMOUS, client=f"ip-{address}", operator=True)
    if not key or not _valid_key(settings, key):
        return None
    owner = owner_of(key, _secret(request))
    return Caller(
        owner=owner, client=owner, operator=_matches(key, settings.security.operator_api_keys)
    )


def refusal(settings: Settings) -> HTTPException:
    """The answer to a request whose key is missing or unknown (401), or to any request of a
    server without API_KEYS reached beyond loopback (403)."""
    if not auth_keys(settings):
        # started on a public address by another launcher than `serve` (which refuses to)
        return HTTPException(
            status.HTTP_403_FORBIDDEN,
            "This server has no API_KEYS and is reachable beyond loopback: set API_KEYS "
            "(or ALLOW_ANONYMOUS=true to serve everyone as one anonymous owner).",
        )
    return HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "Missing or unknown API key: send it as 'X-API-Key: <key>' or "
        "'Authorization: Bearer <key>'.",
        headers={"WWW-Authenticate": "Bearer"},
    )


def presented_key(request: Request) -> str | None:
    """The key a request carries (``X-API-Key``, else ``Authorization: Bearer``), read from its
    headers: for endpoints that are not FastAPI routes (the MCP transport)."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    bearer = credentials.strip() if scheme.lower() == "bearer" else ""
    return request.headers.get("x-api-key") or bearer or None


async def caller(
    request: Request,
    header_key: Annotated[str | None, Depends(_header)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """Authenticate (when API_KEYS is set) and rate-limit the request."""
    who = identify(request, _presented(header_key, bearer))
    if who is None:
        raise refusal(request.app.state.settings)
    request.scope[OWNER_SCOPE_KEY] = who.owner  # counted for this owner (`app.owner_metrics`)
    limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if limiter is not None:
        await limiter.check(who.client)
    return who


async def optional_caller(
    request: Request,
    header_key: Annotated[str | None, Depends(_header)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller | None:
    """The caller if the request carries a valid key (or needs none), else None: for routes
    open to everyone that show more to a known caller (`/health`). Not rate-limited, like the
    load balancers' probes it serves."""
    return identify(request, _presented(header_key, bearer))


CallerDep = Annotated[Caller, Depends(caller)]
OptionalCallerDep = Annotated[Caller | None, Depends(optional_caller)]


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
