"""What plans share: settings, the element registry, the run-index cache, reply decoding."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple, PendingWrite, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from checkpointer.keys import SEP
from checkpointer.lists import ElementData, ElementRegistry, Hints, KnownList, Location
from checkpointer.records import (
    LIST,
    VALUE,
    CheckpointRecord,
    decode_checkpoint,
    decode_write,
    expand_body,
    parse_segments,
    untyped,
)


class CorruptThreadError(RuntimeError):
    """A checkpoint references data that is not stored (the thread was damaged outside the
    saver, e.g. keys evicted by `maxmemory`)."""


class RunIndexCache:
    """(thread, run) pairs this process already added to the run index (bounded)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, thread_id: str, run_id: str) -> bool:
        with self._lock:
            return (thread_id, run_id) in self._seen

    def add(self, thread_id: str, run_id: str) -> None:
        with self._lock:
            self._seen[(thread_id, run_id)] = None
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)

    def forget(self, *, threads: Iterable[str] = (), runs: Iterable[str] = ()) -> None:
        gone_threads, gone_runs = set(threads), set(runs)
        with self._lock:
            for pair in [p for p in self._seen if p[0] in gone_threads or p[1] in gone_runs]:
                del self._seen[pair]


@dataclass
class Context:
    """Settings and caches of one saver, as the plans see them."""

    prefix: str
    serde: SerializerProtocol
    ttl_ms: int = 0
    refresh_on_read: bool = False
    #: A Redis Cluster client: no script may touch keys of two slots.
    cluster: bool = False
    elements: ElementRegistry = field(default_factory=ElementRegistry)
    runs: RunIndexCache = field(default_factory=RunIndexCache)

    @property
    def read_ttl_ms(self) -> int:
        """TTL a read re-applies (0: reads leave TTLs alone)."""
        return self.ttl_ms if self.refresh_on_read else 0


def checkpoint_config(thread_id: Any, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def read_tuple(
    ctx: Context,
    thread_id: Any,
    record: CheckpointRecord,
    replies: Iterator[Any],
    *,
    token: bytes | None = None,
    skipped: Hints | None = None,
) -> CheckpointTuple:
    """Decode a checkpoint from the load output that follows its member in a script reply.

    With `token`, the list elements read are registered so the next put can reference them;
    `skipped` are the element positions the script left out (the registry has their bytes).
    """
    serde = ctx.serde
    values: dict[str, Any] = {}
    located: list[Location] = []
    lists: list[tuple[bytes, KnownList]] = []
    data: list[ElementData] = []
    skipped = skipped or {}
    for channel, _version in record.versions:
        raw = next(replies)
        if raw is None:
            continue
        kind = raw[0]
        if kind == VALUE:
            values[channel] = serde.loads_typed(untyped(raw[1:]))
        elif kind == LIST:
            items: list[Any] = []
            segments = parse_segments(raw)
            for log, start, end in segments:
                known_below, known = skipped.get(log, (0, []))
                for pos in range(start, end):
                    if pos < known_below:
                        element = known[pos]
                    else:
                        element = next(replies)
                        if element is None:
                            raise CorruptThreadError(
                                f"thread {thread_id!r}: channel {channel!r} of checkpoint "
                                f"{record.checkpoint_id!r} lacks list element {log}{pos}; the "
                                "thread's keys were changed outside the saver (e.g. evicted by "
                                "maxmemory: use maxmemory-policy noeviction or volatile-*)"
                            )
                        data.append((log, pos, element))
                    item = serde.loads_typed(untyped(cast(bytes, element)))
                    items.append(item)
                    located.append((item, log, pos))
            values[channel] = items
            key = record.ns.encode() + SEP + channel.encode()
            lists.append((key, KnownList(tuple(items), tuple(segments))))
    writes = [decode_write(next(replies)) for _ in range(int(next(replies)))]
    writes.sort(key=lambda w: writes_sort_key(w.task_path, w.task_id, w.idx))
    pending: list[PendingWrite] = [
        (w.task_id, w.channel, serde.loads_typed(w.value)) for w in writes
    ]
    if token is not None and located:
        ctx.elements.learn(str(thread_id), token, located, lists, data)
    checkpoint = expand_body(serde.loads_typed(record.checkpoint), record)
    checkpoint["channel_values"] = values
    return CheckpointTuple(
        config=checkpoint_config(thread_id, record.ns, record.checkpoint_id),
        checkpoint=cast(Checkpoint, checkpoint),
        metadata=serde.loads_typed(record.metadata),
        parent_config=(
            checkpoint_config(thread_id, record.ns, record.parent_id) if record.parent_id else None
        ),
        pending_writes=pending,
    )


def read_loaded(
    ctx: Context, thread_id: Any, reply: list[Any]
) -> Iterator[tuple[CheckpointRecord, CheckpointTuple]]:
    """Decode a LOAD script reply: per requested checkpoint, its member and load output."""
    replies = iter(reply)
    for member in replies:
        if member is None:
            continue
        record = decode_checkpoint(member)
        yield record, read_tuple(ctx, thread_id, record, replies)
