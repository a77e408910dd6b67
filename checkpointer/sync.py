"""`RedisSaver`: the sync saver (redis-py `Redis` or `RedisCluster` client)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError
from redis.retry import Retry

from checkpointer import maintenance, plans
from checkpointer.base import TTL, RedisSaverBase
from checkpointer.combine import ThreadWriteCombiner, carried
from checkpointer.connections import kept_connections
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
SyncClient = redis.Redis | RedisCluster
#: Default seconds a task's writes wait for the step's checkpoint. LangGraph runs the sync
#: saver's puts in worker threads that, while the graph computes, get the GIL back only every
#: switch interval (5 ms by default): a shorter wait would often send the writes alone.
WRITE_DELAY = 0.005


class SyncExecutor:
    """Runs plans on a sync client: each `Batch` is one command or one pipeline. Script calls
    alone in their batch (the hot path) go through `Connections` on a plain client."""

    def __init__(self, client: SyncClient) -> None:
        self.client = client
        self.where = describe_client(client)
        self._connections = kept_connections(client)

    def run(self, plan: Plan[T]) -> T:
        try:
            request = next(plan)
            while True:
                if isinstance(request, Emit):
                    raise TypeError("a streaming plan must be run with stream()")
                request = plan.send(self.execute(request))
        except StopIteration as stop:
            return stop.value

    def stream(self, plan: Plan[None]) -> Iterator[Any]:
        try:
            request = next(plan)
            while True:
                if isinstance(request, Emit):
                    yield request.item
                    request = next(plan)
                else:
                    request = plan.send(self.execute(request))
        except StopIteration:
            return

    def execute(self, request: Batch) -> list[Any]:
        try:
            if len(request.ops) == 1:
                return [self._one(request.ops[0])]
            pipe = self.client.pipeline(transaction=False)
            for op in request.ops:
                pipe.execute_command(*command(op))
            replies = pipe.execute(raise_on_error=False)
            out = []
            for op, reply in zip(request.ops, replies, strict=True):
                if isinstance(reply, NoScriptError):
                    reply = self._one(op)
                elif isinstance(reply, Exception):
                    raise reply
                out.append(reply)
            return out
        except UNREACHABLE as exc:
            raise unavailable(exc, self.where) from exc

    def _one(self, op: Op) -> Any:
        client = self.client
        if isinstance(op, Cmd):
            return client.execute_command(*op.args)
        if isinstance(op, Scan):
            return list(client.scan_iter(match=op.match, count=1000))
        execute = client.execute_command if self._connections is None else self._connections.execute
        try:
            return execute(*command(op))
        except NoScriptError:
            # The server lost its script cache (restart, SCRIPT FLUSH): EVAL reloads it.
            return execute("EVAL", op.script.source, len(op.keys), *op.keys, *op.args)


def connect(url: str, *, cluster: bool | None = None, **kwargs: Any) -> SyncClient:
    """A binary-safe client for `url`; `cluster=None` asks the server whether it is a cluster."""
    kwargs["decode_responses"] = False
    if cluster is None:
        probe = redis.Redis.from_url(url, **kwargs)
        try:
            cluster = bool(probe.info("cluster").get("cluster_enabled"))
        except UNREACHABLE as exc:
            raise unavailable(exc, describe_client(probe)) from exc
        finally:
            probe.close()
    if cluster:
        return RedisCluster.from_url(url, **kwargs)
    # Clients made by from_url don't retry by default: after a server restart, the first
    # command on each pooled (dead) connection would fail. Every script is safe to retry.
    kwargs.setdefault("retry", Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.5), 3))
    return redis.Redis.from_url(url, **kwargs)


class RedisSaver(RedisSaverBase):
    """A LangGraph checkpoint saver on plain Redis >= 6.2, Valkey or Redis Cluster (sync).

    Build it from a redis-py client (`decode_responses=False`; give it a `retry` policy, as
    `from_conn_string` does) or with `from_conn_string`. Its async methods run the sync ones in
    a worker thread; in async code prefer `AsyncRedisSaver`. See `checkpointer` for the storage
    layout and `RedisSaverBase` for the options; `write_delay` (seconds, default 0.005) is how
    long `put_writes` waits for the thread's next `put` to carry its writes (0: never waits, see
    `checkpointer.combine`). LangGraph calls both from its worker threads, so a step costs one
    round trip, as with `AsyncRedisSaver`.

    Example:
        ```python
        with RedisSaver.from_conn_string("redis://localhost:6379/0", ttl=60 * 24) as saver:
            graph = builder.compile(checkpointer=saver)
        ```
    """

    def __init__(
        self,
        client: SyncClient,
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
        self._exec = SyncExecutor(client)
        self._writes = ThreadWriteCombiner(self._send_writes, write_delay)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        url: str,
        *,
        ttl: TTL = None,
        key_prefix: str = DEFAULT_PREFIX,
        serde: SerializerProtocol | None = None,
        cluster: bool | None = None,
        write_delay: float = WRITE_DELAY,
        **client_kwargs: Any,
    ) -> Iterator[RedisSaver]:
        """A saver on a new client for `url` (closed on exit), checked with `setup()`."""
        client = connect(url, cluster=cluster, **client_kwargs)
        try:
            saver = cls(
                client, ttl=ttl, key_prefix=key_prefix, serde=serde, write_delay=write_delay
            )
            saver.setup()
            yield saver
        finally:
            client.close()

    def setup(self) -> None:
        """Check that the server is Redis >= 6.2 (nothing needs creating)."""
        try:
            check_version(self.client.info("server"))
        except UNREACHABLE as exc:
            raise unavailable(exc, self._exec.where) from exc

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint of `config` (its `checkpoint_id`, else the namespace's latest), with
        its values and pending writes (in `writes_sort_key` order); None if there is none."""
        return self._exec.run(plans.get_tuple(self.context(), config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first. `config=None` lists every thread; a config without
        `checkpoint_ns` lists every namespace of its thread, `checkpoint_ns=""` only the root.
        `filter` matches metadata keys by equality; `before` is an exclusive checkpoint bound."""
        return self._exec.stream(
            plans.list_checkpoints(self.context(), config, filter, before, limit)
        )

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint and the values of `new_versions` (one round trip). Writes parked
        for the thread are stored in the same call."""
        ctx = self.context()
        thread_id = config["configurable"]["thread_id"]
        with self._writes.putting(thread_id), carried(self._writes.take(thread_id)) as writes:
            return self._exec.run(
                plans.put(ctx, config, checkpoint, metadata, new_versions, writes)
            )

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes; idempotent per (task, index), except the special
        writes (error, interrupt, ...), which replace the previous one. Returns once stored;
        the writes wait up to `write_delay` seconds to be stored with the thread's next
        checkpoint (see `checkpointer.combine`)."""
        encoded = plans.encode_writes(self.context(), config, writes, task_id, task_path)
        if not encoded:
            return
        thread_id = config["configurable"]["thread_id"]
        if self._writes.delay > 0:
            self._writes.add(thread_id, encoded)
        else:
            self._send_writes(thread_id, encoded)

    def _send_writes(self, thread_id: Any, encoded: Sequence[Any]) -> None:
        self._exec.run(plans.put_writes(self.context(), thread_id, encoded))

    def parked_writes(self, thread_id: str) -> int:
        """How many writes of `thread_id` wait for its next put (at most `write_delay`)."""
        return self._writes.parked(thread_id)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of the thread."""
        self._writes.flush()
        self._exec.run(maintenance.delete_threads(self.context(), [thread_id]))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata `run_id` is in `run_ids`."""
        self._writes.flush()
        self._exec.run(maintenance.delete_for_runs(self.context(), run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy (merge) all checkpoints and writes of one thread into another."""
        self._writes.flush()
        self._exec.run(maintenance.copy_thread(self.context(), source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: keep each namespace's latest checkpoint (a finished subgraph call's
        namespace goes with the root checkpoint it started from); `delete`: delete the threads."""
        self._writes.flush()
        self._exec.run(maintenance.prune(self.context(), thread_ids, strategy))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)
