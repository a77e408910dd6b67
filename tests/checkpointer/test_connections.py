"""The savers' kept connections: a reply is never read by the wrong command (after an error or a
cancelled caller), threads and tasks never share a connection, and clients that need redis-py's
own path keep it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import redis
import redis.asyncio as aredis
from redis.asyncio.connection import Connection as AsyncConnection
from redis.asyncio.connection import ConnectionPool as AsyncConnectionPool
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.connection import Connection, ConnectionPool
from redis.retry import Retry

from checkpointer.connections import AsyncConnections, Connections, async_kept_for, kept_for
from tests.support.servers import RedisServer


class DropsOneReply(Connection):
    """Fails the first read after `drop` is set, leaving the reply unread in the socket."""

    drop = False

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        if DropsOneReply.drop:
            DropsOneReply.drop = False
            # Not an error the retry policy handles (as KeyboardInterrupt would not be).
            raise RuntimeError("injected: reply left unread")
        return super().read_response(*args, **kwargs)


def test_a_reply_left_unread_never_answers_the_next_command(private_redis: RedisServer) -> None:
    pool = ConnectionPool.from_url(
        private_redis.url, connection_class=DropsOneReply, retry=Retry(NoBackoff(), 0)
    )
    connections = Connections(pool)
    assert connections.execute("ECHO", "warm-up") == b"warm-up"
    DropsOneReply.drop = True
    with pytest.raises(RuntimeError, match="injected"):
        connections.execute("ECHO", "first")
    assert connections.execute("ECHO", "second") == b"second"
    assert connections.execute("ECHO", "third") == b"third"
    pool.disconnect()


def test_error_replies_leave_the_connection_usable(private_redis: RedisServer) -> None:
    pool = ConnectionPool.from_url(private_redis.url)
    connections = Connections(pool)
    client_id = connections.execute("CLIENT", "ID")
    with pytest.raises(redis.exceptions.NoScriptError):
        connections.execute("EVALSHA", "0" * 40, 0)
    assert connections.execute("EVAL", "return ARGV[1]", 0, "ok") == b"ok"
    assert connections.execute("CLIENT", "ID") == client_id  # the same connection throughout
    pool.disconnect()


def test_threads_never_share_a_connection(private_redis: RedisServer) -> None:
    pool = ConnectionPool.from_url(private_redis.url)
    connections = Connections(pool)
    wrong: list[tuple[bytes, Any]] = []

    def run(worker: int) -> None:
        for i in range(200):
            sent = f"{worker}-{i}".encode()
            got = connections.execute("ECHO", sent)
            if got != sent:
                wrong.append((sent, got))

    threads = [threading.Thread(target=run, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    pool.disconnect()


def test_clients_needing_redis_py_or_small_pools_keep_its_path(private_redis: RedisServer) -> None:
    plain = redis.Redis.from_url(private_redis.url)
    small = redis.Redis.from_url(private_redis.url, max_connections=10)
    single = redis.Redis.from_url(private_redis.url, single_connection_client=True)
    assert kept_for(plain) == 4  # of redis-py's default 100
    assert kept_for(small) == 1
    assert kept_for(redis.Redis.from_url(private_redis.url, max_connections=7)) == 0
    assert kept_for(single) == 0
    assert kept_for(object()) == 0
    for client in (plain, small, single):
        client.close()


class AsyncDropsOneReply(AsyncConnection):
    """Fails the first read after `drop` is set, leaving the reply unread in the socket."""

    drop = False

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        if AsyncDropsOneReply.drop:
            AsyncDropsOneReply.drop = False
            raise RuntimeError("injected: reply left unread")
        return await super().read_response(*args, **kwargs)


async def test_async_reply_left_unread_never_answers_the_next_command(
    private_redis: RedisServer,
) -> None:
    pool = AsyncConnectionPool.from_url(
        private_redis.url, connection_class=AsyncDropsOneReply, retry=AsyncRetry(NoBackoff(), 0)
    )
    connections = AsyncConnections(pool)
    assert await connections.execute("ECHO", "warm-up") == b"warm-up"
    AsyncDropsOneReply.drop = True
    with pytest.raises(RuntimeError, match="injected"):
        await connections.execute("ECHO", "first")
    assert await connections.execute("ECHO", "second") == b"second"
    assert await connections.execute("ECHO", "third") == b"third"
    await pool.disconnect()


async def test_async_cancelled_exchange_never_answers_the_next_command(
    private_redis: RedisServer,
) -> None:
    """A caller cancelled while its reply is on the way (BLPOP blocks until the list gets an
    element): that connection is dropped, not reused with the reply still coming."""
    pool = AsyncConnectionPool.from_url(private_redis.url)
    connections = AsyncConnections(pool)
    key = "cancelled-exchange"
    admin = aredis.Redis.from_url(private_redis.url)
    waiting = asyncio.ensure_future(connections.execute("BLPOP", key, 0))
    while not any(c.get("cmd") == "blpop" for c in await admin.client_list()):
        await asyncio.sleep(0.001)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await admin.rpush(key, "late")  # would answer the next command on a reused connection
    assert await connections.execute("ECHO", "next") == b"next"
    await admin.delete(key)
    await admin.aclose()
    await pool.disconnect()


async def test_async_error_replies_leave_the_connection_usable(private_redis: RedisServer) -> None:
    pool = AsyncConnectionPool.from_url(private_redis.url)
    connections = AsyncConnections(pool)
    client_id = await connections.execute("CLIENT", "ID")
    with pytest.raises(redis.exceptions.NoScriptError):
        await connections.execute("EVALSHA", "0" * 40, 0)
    assert await connections.execute("EVAL", "return ARGV[1]", 0, "ok") == b"ok"
    assert await connections.execute("CLIENT", "ID") == client_id  # the same connection
    await pool.disconnect()


async def test_async_tasks_never_share_a_connection(private_redis: RedisServer) -> None:
    pool = AsyncConnectionPool.from_url(private_redis.url)
    connections = AsyncConnections(pool)
    wrong: list[tuple[bytes, Any]] = []

    async def run(worker: int) -> None:
        for i in range(100):
            sent = f"{worker}-{i}".encode()
            got = await connections.execute("ECHO", sent)
            if got != sent:
                wrong.append((sent, got))

    await asyncio.gather(*(run(w) for w in range(8)))
    assert wrong == []
    await pool.disconnect()


async def test_async_clients_needing_redis_py_keep_its_path(private_redis: RedisServer) -> None:
    plain = aredis.Redis.from_url(private_redis.url)
    single = aredis.Redis.from_url(private_redis.url, single_connection_client=True)
    blocking = aredis.Redis(
        connection_pool=aredis.BlockingConnectionPool.from_url(private_redis.url)
    )
    assert async_kept_for(plain) == 4
    assert async_kept_for(aredis.Redis.from_url(private_redis.url, max_connections=7)) == 0
    assert async_kept_for(single) == 0
    assert async_kept_for(blocking) == 0
    assert async_kept_for(object()) == 0
    for client in (plain, single, blocking):
        await client.aclose()
