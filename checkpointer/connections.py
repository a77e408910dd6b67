"""Connections the savers keep out of a redis-py pool, for their script calls.

LangGraph's sync loop calls `put` and `put_writes` from worker threads while the graph computes
in the main thread. Each time such a thread releases the GIL (every system call does) it may
wait for the GIL again up to a switch interval (5 ms by default), so the checkpoints of a turn
queue up and are stored only once the graph is done. Every system call saved on that path
counts. redis-py's pool hands out a connection only after checking it for unread data with a
non-blocking read, a system call per command (and its client adds a few tens of microseconds of
bookkeeping per command). `Connections` keeps the connections it used and reuses them without
that check: a connection comes back to it only after its reply was read whole, or
disconnected (it reconnects on its next command).

The async saver does the same (`AsyncConnections`): its puts are chained (LangGraph calls the
next once the previous returned), so redis-py's per-command path (pool lock, connection check,
observability hooks: about twice the CPU of the exchange itself) sits on the turn's critical
path at every step.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import redis
import redis.asyncio as aredis
from redis.asyncio.connection import AbstractConnection as AsyncConnection
from redis.asyncio.connection import ConnectionPool as AsyncConnectionPool
from redis.connection import Connection, ConnectionPool
from redis.exceptions import ResponseError

#: Connections kept between commands (the pool lends more when more threads call at once),
#: and never more than this share of the pool's `max_connections`, so other users of the client
#: don't run out of connections the saver holds idle.
KEPT = 4
POOL_SHARE = 8


def kept_for(client: Any) -> int:
    """How many connections the saver may keep out of `client`'s pool: 0 for clients that need
    redis-py's own path (cluster, single-connection, client-side caching) or small pools."""
    if not isinstance(client, redis.Redis) or getattr(client, "connection", None) is not None:
        return 0
    pool = client.connection_pool
    if getattr(pool, "cache", None) is not None:
        return 0
    return min(KEPT, int(getattr(pool, "max_connections", 0) or 0) // POOL_SHARE)


def async_kept_for(client: Any) -> int:
    """`kept_for` of an asyncio client."""
    if not isinstance(client, aredis.Redis) or client.single_connection_client:
        return 0
    pool = client.connection_pool
    if not isinstance(pool, AsyncConnectionPool) or type(pool) is not AsyncConnectionPool:
        return 0  # a blocking pool (or another subclass) has waiting rules of its own
    return min(KEPT, int(getattr(pool, "max_connections", 0) or 0) // POOL_SHARE)


def async_kept_connections(client: Any) -> AsyncConnections | None:
    """An `AsyncConnections` on `client`'s pool, or None where redis-py's own path is needed."""
    keep = async_kept_for(client)
    return AsyncConnections(client.connection_pool, keep) if keep else None


def kept_connections(client: Any) -> Connections | None:
    """A `Connections` on `client`'s pool, or None where redis-py's own path is needed."""
    keep = kept_for(client)
    return Connections(client.connection_pool, keep) if keep else None


def pack(conn: Connection, args: tuple[Any, ...]) -> bytes:
    """`args` as one RESP command in one buffer. redis-py cuts a command of more than ~6 kB
    (a put carrying a few documents) into several buffers, each sent with a `sendall` of its
    own: one more system call, so one more chance to wait a switch interval for the GIL."""
    encode = conn.encoder.encode
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if type(arg) is bytes else encode(arg)
        parts += (b"$%d\r\n" % len(data), data, b"\r\n")
    return b"".join(parts)


class Connections:
    """Connections taken from `pool`, reused for whole request/reply exchanges."""

    def __init__(self, pool: ConnectionPool, keep: int = KEPT) -> None:
        self._pool = pool
        self._keep = keep
        self._kept: list[Connection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def execute(self, *args: Any) -> Any:
        """Send one command and read its reply, retrying as the connection's `retry` says."""
        conn = self._take()
        packed = [pack(conn, args)]
        whole = False
        try:

            def exchange() -> Any:
                conn.send_packed_command(packed)
                return conn.read_response()

            reply = conn.retry.call_with_retry(exchange, lambda _error: conn.disconnect())
            whole = True
            return reply
        except ResponseError:
            whole = True  # an error reply, read whole
            raise
        finally:
            if not whole:
                conn.disconnect()  # a reply may be half read: never reuse the socket
            self._give_back(conn)

    def _take(self) -> Connection:
        with self._lock:
            if self._pid != os.getpid():
                # A forked child: the kept sockets are the parent's.
                self._kept, self._pid = [], os.getpid()
            if self._kept:
                return self._kept.pop()
        conn: Connection = self._pool.get_connection()
        return conn

    def _give_back(self, conn: Connection) -> None:
        with self._lock:
            if len(self._kept) < self._keep and self._pid == os.getpid():
                self._kept.append(conn)
                return
        self._pool.release(conn)


class AsyncConnections:
    """`Connections` for an asyncio pool: connections reused for whole exchanges by one task
    at a time (asyncio: no lock needed between the awaits of `_take` and `_give_back`)."""

    def __init__(self, pool: AsyncConnectionPool, keep: int = KEPT) -> None:
        self._pool = pool
        self._keep = keep
        self._kept: list[AsyncConnection] = []

    async def execute(self, *args: Any) -> Any:
        """Send one command and read its reply, retrying as the connection's `retry` says."""
        conn = self._kept.pop() if self._kept else await self._pool.get_connection()
        packed = [pack(conn, args)]  # type: ignore[arg-type]
        whole = False
        try:

            async def exchange() -> Any:
                await conn.send_packed_command(packed)
                return await conn.read_response()

            async def failed(_error: Exception) -> None:
                await conn.disconnect()

            reply = await conn.retry.call_with_retry(exchange, failed)
            whole = True
            return reply
        except ResponseError:
            whole = True  # an error reply, read whole
            raise
        finally:
            if not whole:
                # A reply may be half read (an error, or the caller cancelled): never reuse it.
                await conn.disconnect(nowait=True)
            if len(self._kept) < self._keep:
                self._kept.append(conn)
            else:
                await self._pool.release(conn)
