"""`AsyncRedisSaver`: the async saver (redis-py asyncio `Redis` or `RedisCluster` client)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import redis.asyncio as aredis
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import NoScriptError

from checkpointer import maintenance, plans
from checkpointer.base import TTL, RedisSaverBase
from checkpointer.combine import WriteCombiner, carried
from checkpointer.connections import async_kept_connections
from checkpointer.errors import (
    UNREACHABLE,
    check_client,
    check_version,
    describe_client,
    unavailable,
)
from checkpointer.keys import DEFAULT_PREFIX
from checkpointer.ops import Batch, Cmd, Emit, Op, Plan, Scan, command

T = TypeVar("T")
AsyncClient = aredis.Redis | RedisCluster
#: Default seconds a task's writes wait for the step's checkpoint (on the event loop, the
#: checkpoint follows the step's last task within a few loop iterations).
WRITE_DELAY = 0.001


class AsyncExecutor:
    """Runs plans on an asyncio client: each `Batch` is one command or one pipeline. Script
    calls alone in their batch (the hot path) go through `AsyncConnections` on a plain client."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.where = describe_client(client)
        self._connections = async_kept_connections(client)

    async def run(self, plan: Plan[T]) -> T:
        try:
            request = next(plan)
            while True:
                if isinstance(request, Emit):
                    raise TypeError("a streaming plan must be run with stream()")
                request = plan.send(await self.execute(request))
        except StopIteration as stop:
            return stop.value

    async def stream(self, plan: Plan[None]) -> AsyncIterator[Any]:
        try:
            request = next(plan)
            while True:
                if isinstance(request, Emit):
                    yield request.item
                    request = next(plan)
                else:
                    request = plan.send(await self.execute(request))
        except StopIteration:
            return

    async def execute(self, request: Batch) -> list[Any]:
        try:
            if len(request.ops) == 1:
                return [await self._one(request.ops[0])]
            pipe = self.client.pipeline(transaction=False)
            for op in request.ops:
                pipe.execute_command(*command(op))
            replies = await pipe.execute(raise_on_error=False)
            out = []
            for op, reply in zip(request.ops, replies, strict=True):
                if isinstance(reply, NoScriptError):
                    reply = await self._one(op)
                elif isinstance(reply, Exception):
                    raise reply
                out.append(reply)
            return out
        except UNREACHABLE as exc:
            raise unavailable(exc, self.where) from exc

    async def _one(self, op: Op) -> Any:
        client = self.client
        if isinstance(op, Cmd):
            return await client.execute_command(*op.args)
        if isinstance(op, Scan):
            return [key async for key in client.scan_iter(match=op.match, count=1000)]
        execute = client.execute_command if self._connections is None else self._connections.execute
        try:
            return await execute(*command(op))
        except NoScriptError:
            # The server lost its script cache (restart, SCRIPT FLUSH): EVAL reloads it.
            return await execute("EVAL", op.script.source, len(op.keys), *op.keys, *op.args)


async def connect(url: str, *, cluster: bool | None = None, **kwargs: Any) -> AsyncClient:
    """A binary-safe asyncio client for `url`; `cluster=None` asks the server."""
    kwargs["decode_responses"] = False
    if cluster is None:
        probe = aredis.Redis.from_url(url, **kwargs)
        try:
            cluster = bool((await probe.info("cluster")).get("cluster_enabled"))
        except UNREACHABLE as exc:
            raise unavailable(exc, describe_client(probe)) from exc
        finally:
            await probe.aclose()
    if cluster:
        return RedisCluster.from_url(url, **kwargs)
    # Clients made by from_url don't retry by default: after a server restart, the first
    # command on each pooled (dead) connection would fail. Every script is safe to retry.
    kwargs.setdefault("retry", Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.5), 3))
    return aredis.Redis.from_url(url, **kwargs)


class AsyncRedisSaver(RedisSaverBase):
    """A LangGraph checkpoint saver on plain Redis >= 6.2, Valkey or Redis Cluster (async).

    Build it from a redis-py asyncio client (`decode_responses=False`; give it a `retry`
    policy, as `from_conn_string` does, so a server restart costs no failed call) or with
    `from_conn_string`. Its sync methods are for other threads (e.g. sync nodes calling
    `graph.get_state`): they run on the saver's event loop. See `checkpointer` for the storage
    layout and `RedisSaverBase` for the options; `write_delay` (seconds, default 0.001) is how
    long `aput_writes` waits for the thread's next `aput` to carry its writes (0: never waits,
    see `checkpointer.combine`).

    Example:
        ```python
        async with AsyncRedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke(inputs, {"configurable": {"thread_id": "t1"}})
        ```
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        serde: SerializerProtocol | None = None,
        ttl: TTL = None,
        key_prefix: str = DEFAULT_PREFIX,
        cache_threads: int = 128,
        write_delay: float = WRITE_DELAY,
    ) -> None:
        super().__init__(serde=serde, ttl=ttl, key_prefix=key_prefix, cache_threads=cache_threads)
        check_client(client)
        self.client = client
        self._ctx.cluster = isinstance(client, RedisCluster)
        self._exec = AsyncExecutor(client)
        self._writes = WriteCombiner(self._send_writes, write_delay)
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        url: str,
        *,
        ttl: TTL = None,
        key_prefix: str = DEFAULT_PREFIX,
        serde: SerializerProtocol | None = None,
        cluster: bool | None = None,
        write_delay: float = WRITE_DELAY,
        **client_kwargs: Any,
    ) -> AsyncIterator[AsyncRedisSaver]:
        """A saver on a new client for `url` (closed on exit), checked with `setup()`."""
        client = await connect(url, cluster=cluster, **client_kwargs)
        try:
            saver = cls(
                client, ttl=ttl, key_prefix=key_prefix, serde=serde, write_delay=write_delay
            )
            await saver.setup()
            yield saver
        finally:
            await client.aclose()

    async def setup(self) -> None:
        """Check that the server is Redis >= 6.2 (nothing needs creating)."""
        self._bind_loop()
        try:
            check_version(await self.client.info("server"))
        except UNREACHABLE as exc:
            raise unavailable(exc, self._exec.where) from exc

    def _bind_loop(self) -> None:
        self.loop = asyncio.get_running_loop()

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See `RedisSaver.get_tuple`."""
        self._bind_loop()
        return await self._exec.run(plans.get_tuple(self.context(), config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """See `RedisSaver.list`."""
        self._bind_loop()
        plan = plans.list_checkpoints(self.context(), config, filter, before, limit)
        async for item in self._exec.stream(plan):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See `RedisSaver.put`. Writes parked for the thread are stored in the same call."""
        ctx = self.context()
        thread_id = config["configurable"]["thread_id"]
        with self._writes.putting(thread_id), carried(self._writes.take(thread_id)) as writes:
            return await self._exec.run(
                plans.put(ctx, config, checkpoint, metadata, new_versions, writes)
            )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See `RedisSaver.put_writes`. Returns once stored; the writes wait up to
        `write_delay` seconds to be stored with the thread's next checkpoint (see
        `checkpointer.combine`)."""
        encoded = plans.encode_writes(self.context(), config, writes, task_id, task_path)
        if not encoded:
            return
        thread_id = config["configurable"]["thread_id"]
        if self._writes.delay > 0:
            await self._writes.add(thread_id, encoded)
        else:
            await self._send_writes(thread_id, encoded)

    async def _send_writes(self, thread_id: Any, encoded: Sequence[Any]) -> None:
        await self._exec.run(plans.put_writes(self.context(), thread_id, encoded))

    def parked_writes(self, thread_id: str) -> int:
        """How many writes of `thread_id` wait for its next put (at most `write_delay`)."""
        return self._writes.parked(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """See `RedisSaver.delete_thread`."""
        await self._writes.flush()
        await self._exec.run(maintenance.delete_threads(self.context(), [thread_id]))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """See `RedisSaver.delete_for_runs`."""
        await self._writes.flush()
        await self._exec.run(maintenance.delete_for_runs(self.context(), run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """See `RedisSaver.copy_thread`."""
        await self._writes.flush()
        plan = maintenance.copy_thread(self.context(), source_thread_id, target_thread_id)
        await self._exec.run(plan)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """See `RedisSaver.prune`."""
        await self._writes.flush()
        await self._exec.run(maintenance.prune(self.context(), thread_ids, strategy))

    # Sync API: only from a thread other than the event loop's (the loop would deadlock).
    def _sync(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or loop.is_closed() or running is loop:
            coro.close()
            raise asyncio.InvalidStateError(
                "AsyncRedisSaver's sync methods only work from another thread while its event "
                "loop runs; in async code use the async methods (ainvoke, aget_state), in sync "
                "code use RedisSaver"
            )
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        return iter(self._sync(collect()))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._sync(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync(self.aprune(thread_ids, strategy=strategy))
