"""List-valued channels: each element stored once, each version stored as element ranges.

A `messages` channel (add_messages) gets a new version at every step and each version holds the
whole conversation, so storing every version whole grows quadratically with the conversation.
Instead, each element of a list is serialized once into the thread's `e` hash, at a position of
an append-only *log* (field `<log id><position>`), and a list version is stored in the `b` hash
as the ranges of log positions that make it up: `L log,start,end;...`. Appending a message to a
100-message list writes one element and a ~25-byte record; removing or replacing messages (e.g.
"keep the first and the last N") only changes the ranges. Reading a version is one HMGET of its
elements inside the load script.

To recognise elements already stored, the saver keeps, per recently used thread, the objects of
the lists it last wrote or read with their positions (`ElementRegistry`), matched by identity:
LangGraph's reducers build new lists around the same element objects (add_messages copies the
list, not the messages), and checkpointed values are treated as immutable, the rule LangGraph
states for state. An element not recognised (another process wrote it, the registry evicted the
thread) is simply stored again: that costs space, never correctness.

Positions are only reused under a per-thread *token* kept in the `e` hash: every operation that
deletes elements (prune, delete_for_runs) replaces it, and a put that references known elements
sends the token it learnt; the put script refuses a stale token and the saver replans the put
with every element new. Log ids are random per registry entry, so two writers never share a log;
the put script still refuses to overwrite an existing element field.

The registry also keeps the serialized bytes of the elements it knows (elements are write-once),
so `get_tuple` tells the script which leading positions of each log it already has (under the
same token) and receives only the others: a long conversation is not re-sent at every turn. The
values are still deserialized afresh from those bytes, never shared between reads.
"""

from __future__ import annotations

import operator
import random
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkpointer.records import Segment, Typed, element_field, list_record, typed, value_record

Location = tuple[Any, str, int]  # (element object, log id, position)
ListKey = bytes  # ns \0 channel


def new_log() -> str:
    return secrets.token_hex(6)


def new_token() -> bytes:
    # Made for every put: `random` (reseeded after fork), not `secrets`, whose os.urandom call
    # releases the GIL, a thread switch that costs a saver in LangGraph's worker threads up to
    # a switch interval (5 ms) while the graph computes. A token is no secret, only unique.
    return b"%016x" % random.getrandbits(64)


@dataclass(slots=True)
class KnownList:
    """A list value stored or read, with the ranges it is made of."""

    items: tuple[Any, ...]
    segments: tuple[Segment, ...]


@dataclass(slots=True)
class LogData:
    """Serialized elements of one log known to the registry, by position."""

    items: list[bytes | None] = field(default_factory=list)
    upto: int = 0  # every position below is known

    def add(self, position: int, data: bytes) -> None:
        items = self.items
        if position >= len(items):
            items.extend([None] * (position + 1 - len(items)))
        items[position] = data
        while self.upto < len(items) and items[self.upto] is not None:
            self.upto += 1


@dataclass(slots=True)
class _ThreadElements:
    token: bytes | None
    log: str
    next_pos: int = 0
    locations: dict[int, Location] = field(default_factory=dict)
    lists: dict[ListKey, KnownList] = field(default_factory=dict)
    data: dict[str, LogData] = field(default_factory=dict)
    data_count: int = 0
    #: Per channel, the last list stored whole because it replaced the channel's previous
    #: list (see `ElementRegistry.plan`).
    replaced: dict[ListKey, tuple[Any, ...]] = field(default_factory=dict)

    def forget(self) -> None:
        self.locations, self.lists, self.data, self.data_count = {}, {}, {}, 0
        self.replaced = {}
        self.log, self.next_pos = new_log(), 0


#: (log id, position, serialized element) of elements just stored or read.
ElementData = tuple[str, int, bytes]
#: What a reader may skip: per log, (positions known below, their bytes).
Hints = dict[str, tuple[int, list[bytes | None]]]


@dataclass(slots=True)
class ListPlan:
    """What a put writes for its list-valued channels."""

    thread_id: str
    expected_token: bytes
    new_token: bytes
    records: list[tuple[bytes, bytes]]
    elements: list[tuple[bytes, bytes]]
    pending: list[Location]
    stored: list[tuple[ListKey, KnownList]]
    data: list[ElementData]


def _max_segments(length: int) -> int:
    # Beyond this a list is too fragmented for ranges to pay off; store it whole.
    return 4 + length // 8


def _extends(value: list[Any], base: tuple[Any, ...] | None) -> bool:
    """`value` is `base` (the same objects) followed by more."""
    return base is not None and len(value) > len(base) and all(map(operator.is_, value, base))


class ElementRegistry:
    """Per-thread map from element objects to their stored positions (bounded LRU)."""

    def __init__(self, max_threads: int = 128, max_elements: int = 8192) -> None:
        self.max_threads = max_threads
        self.max_elements = max_elements
        self._threads: OrderedDict[str, _ThreadElements] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, thread_id: str) -> _ThreadElements:
        entry = self._threads.get(thread_id)
        if entry is None:
            entry = self._threads[thread_id] = _ThreadElements(token=None, log=new_log())
            while len(self._threads) > self.max_threads:
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(thread_id)
        return entry

    def drop(self, thread_id: str) -> None:
        with self._lock:
            self._threads.pop(thread_id, None)

    def plan(
        self,
        thread_id: str,
        lists: Sequence[tuple[bytes, ListKey, list[Any]]],
        dumps: Callable[[Any], Typed],
    ) -> ListPlan:
        """Match each list's elements against the registry; new ones get fresh positions.

        The common case, a list that extends the last one of its channel, is matched in C
        (identity of the common prefix) and only the new tail element by element.

        A list that shares no element with what the registry knows, in a channel whose previous
        list it knows, *replaced* that list (a node rewrites a list of documents each step):
        it is stored whole, one value instead of an element per item (elements pay off only
        when later versions reuse them). A list that extends the last replacing one is growing
        again, and goes back to elements."""
        records: list[tuple[bytes, bytes]] = []
        plain: list[tuple[bytes, list[Any]]] = []
        pending: dict[int, Location] = {}
        stored: list[tuple[ListKey, KnownList]] = []
        uses_known = False
        with self._lock:
            entry = self._entry(thread_id)
            known = entry.locations if entry.token is not None else {}
            for blob_field, list_key, value in lists:
                base = entry.lists.get(list_key) if entry.token is not None else None
                start = 0
                segments: list[list[Any]] = []
                if (
                    base is not None
                    and len(value) >= len(base.items)
                    and all(map(operator.is_, value, base.items))
                ):
                    start = len(base.items)
                    segments = [list(segment) for segment in base.segments]
                    uses_known = uses_known or start > 0
                fresh: list[int] = []
                for item in value[start:] if start else value:
                    key = id(item)
                    loc = known.get(key)
                    if loc is not None and loc[0] is item:
                        uses_known = True
                    else:
                        loc = pending.get(key)
                        if loc is None:
                            loc = pending[key] = (item, entry.log, entry.next_pos)
                            entry.next_pos += 1
                            fresh.append(key)
                    last = segments[-1] if segments else None
                    if last is not None and last[0] == loc[1] and last[2] == loc[2]:
                        last[2] += 1
                    else:
                        segments.append([loc[1], loc[2], loc[2] + 1])
                replaced = (
                    base is not None
                    and len(fresh) == len(value)
                    and not _extends(value, entry.replaced.get(list_key))
                )
                if replaced or len(segments) > _max_segments(len(value)):
                    for key in fresh:
                        del pending[key]
                    # Give the positions back (they were the last taken): a gap in the log
                    # would stop reads from skipping the elements after it (`LogData.upto`).
                    entry.next_pos -= len(fresh)
                    plain.append((blob_field, value))
                    if replaced:
                        entry.replaced[list_key] = tuple(value)
                    continue
                entry.replaced.pop(list_key, None)
                ranges = tuple((log, a, b) for log, a, b in segments)
                stored.append((list_key, KnownList(tuple(value), ranges)))
                records.append((blob_field, list_record(ranges)))
            token = entry.token if uses_known and entry.token is not None else b""
        records.extend((blob_field, value_record(dumps(value))) for blob_field, value in plain)
        data = [(log, pos, typed(dumps(item))) for item, log, pos in pending.values()]
        return ListPlan(
            thread_id=thread_id,
            expected_token=token,
            new_token=new_token(),
            records=records,
            elements=[(element_field(log, pos), raw) for log, pos, raw in data],
            pending=list(pending.values()),
            stored=stored,
            data=data,
        )

    def hints(self, thread_id: str) -> tuple[bytes, Hints]:
        """The token and, per log, the leading positions whose bytes a read can skip."""
        with self._lock:
            entry = self._threads.get(thread_id)
            if entry is None or entry.token is None:
                return b"", {}
            return entry.token, {
                log: (known.upto, known.items) for log, known in entry.data.items() if known.upto
            }

    def commit(self, plan: ListPlan, token: bytes) -> None:
        """Register a plan's new elements once the put that stored them succeeded."""
        self.learn(plan.thread_id, token, plan.pending, plan.stored, plan.data)

    def learn(
        self,
        thread_id: str,
        token: bytes,
        located: list[Location],
        lists: list[tuple[ListKey, KnownList]],
        data: list[ElementData],
    ) -> None:
        """Register elements stored or read, valid under `token`."""
        with self._lock:
            entry = self._entry(thread_id)
            if entry.token != token:
                if entry.token is not None:
                    # Something deleted elements since: forget every position learnt before.
                    entry.forget()
                entry.token = token
            locations = entry.locations
            for loc in located:
                locations[id(loc[0])] = loc
            entry.lists.update(lists)
            for log, pos, raw in data:
                entry.data.setdefault(log, LogData()).add(pos, raw)
            entry.data_count += len(data)
            if entry.data_count > self.max_elements:
                entry.data, entry.data_count = {}, 0
            live = sum(len(known.items) for known in entry.lists.values())
            if len(locations) > min(self.max_elements, 2 * live + 64):
                # Keep what the latest lists use; the rest is what long-gone versions held, or
                # what earlier reads returned: values the graph will not put again, which would
                # stay alive (memory, and longer full garbage collections for the process).
                kept: dict[int, Location] = {}
                for known in entry.lists.values():
                    for item in known.items:
                        found = locations.get(id(item))
                        if found is not None and found[0] is item:
                            kept[id(item)] = found
                entry.locations = kept
