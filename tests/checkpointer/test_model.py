"""Model-based test: random sequences of put / put_writes / get / list / delete / copy / prune /
delete_for_runs on `RedisSaver` and on the reference model (`InMemorySaver` + `ModelSaver`),
compared after every step. List channels are built the way LangGraph's reducers build them
(new lists around the same element objects) so the element-range storage is exercised: appends,
removals, replacements, equal-but-new copies, repeated small ints, deleted elements."""

from __future__ import annotations

import asyncio
import builtins
import copy
import os
import threading
import time
import uuid
from typing import Any

import hypothesis.strategies as st
import redis
import redis.asyncio as aredis
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME

from checkpointer import AsyncRedisSaver, RedisSaver
from tests.checkpointer.conftest import SHARED_URL, delete_prefixed
from tests.checkpointer.model import ModelSaver

THREADS = ["t0", "{t1}", ""]  # braces and "" exercise the hash-tag escaping
NAMESPACES = ["", "child:a1", "sub"]  # "child:a1" is a subgraph call for prune
RUNS = ["r0", "r1", "r2"]
TASKS = ["task-a", "task-b", "task-c"]
WRITE_CHANNELS = ["ch", "messages", ERROR, INTERRUPT, RESUME]
LIST_EDITS = ["append", "append", "append", "remove", "replace", "keep_ends", "copy", "new"]
Key = tuple[str, str, str]


def config_view(config: Any) -> Any:
    if config is None:
        return None
    conf = config["configurable"]
    return (str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf.get("checkpoint_id"))


def view(t: CheckpointTuple | None) -> Any:
    if t is None:
        return None
    return (
        config_view(t.config),
        config_view(t.parent_config),
        t.checkpoint,
        t.metadata,
        t.pending_writes,
    )


def newest_first(tuples: list[CheckpointTuple]) -> list[CheckpointTuple]:
    """The saver's order across namespaces/threads: checkpoint id, then thread, then ns, desc."""
    return sorted(tuples, key=lambda t: config_view(t.config)[::-1], reverse=True)


class SaverMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.prefix = f"cpt-model-{uuid.uuid4().hex[:10]}"
        self.client = redis.Redis.from_url(SHARED_URL)
        self.saver = self._new_saver()
        self.model = ModelSaver()
        self.objects: dict[Key, dict[str, Any]] = {}  # the Python values each put was given
        self.counter = 0

    def _new_saver(self) -> Any:
        # A tiny element cache, so threads get evicted and rediscovered; a short write delay, as
        # most put_writes here are followed by no put.
        return RedisSaver(self.client, key_prefix=self.prefix, cache_threads=2, write_delay=0.002)

    def teardown(self) -> None:
        delete_prefixed(SHARED_URL, self.prefix)
        self.client.close()

    def _tick(self) -> int:
        self.counter += 1
        return self.counter

    def _stored(self) -> list[Key]:
        return [
            (tid, ns, cid)
            for tid, namespaces in self.model.storage.items()
            for ns, checkpoints in namespaces.items()
            for cid in checkpoints
        ]

    def _list_value(self, edit: str, old: list[Any]) -> list[Any]:
        n = self._tick()
        item: Any = (
            AIMessage(f"message {n}", id=f"m{n}") if n % 3 == 0 else {"text": f"item {n}", "n": n}
        )
        if edit == "append" or not old:
            return [*old, item]
        if edit == "remove":
            return old[: n % len(old)] + old[n % len(old) + 1 :]
        if edit == "replace":
            return [*old[:-1], item]
        if edit == "keep_ends":
            return [old[0], *old[-2:]]
        if edit == "copy":
            return copy.deepcopy(old)  # equal values, new objects
        return [item, n % 4, n % 4, 1, 1]  # repeated small ints: fragmented ranges

    @rule(
        thread=st.sampled_from(THREADS),
        ns=st.sampled_from(NAMESPACES),
        count=st.integers(1, 4),
        data=st.data(),
    )
    def put(self, thread: str, ns: str, count: int, data: st.DataObject) -> None:
        """`count` checkpoints, each a child of the previous (the first of a random parent)."""
        parents = [cid for tid, n, cid in self._stored() if tid == thread and n == ns]
        parent = data.draw(st.sampled_from([None, *parents]), label="parent")
        for _ in range(count):
            parent = self._put(thread, ns, parent, data)

    def _put(self, thread: str, ns: str, parent: str | None, data: st.DataObject) -> str:
        versions: dict[str, Any] = {}
        values: dict[str, Any] = {}
        if parent is not None:
            parent_tuple = self.model.get_tuple(
                {
                    "configurable": {
                        "thread_id": thread,
                        "checkpoint_ns": ns,
                        "checkpoint_id": parent,
                    }
                }
            )
            assert parent_tuple is not None
            versions = dict(parent_tuple.checkpoint["channel_versions"])
            values = dict(self.objects[(thread, ns, parent)])
        new_versions: dict[str, Any] = {}
        for channel in ("messages", "tags", "count", "note"):
            action = data.draw(st.sampled_from(["keep", "set", "set", "drop", "empty"]))
            if action == "keep" and channel in versions:
                continue
            versions.pop(channel, None)
            values.pop(channel, None)
            if action == "drop":
                continue
            n = self._tick()
            version = n if n % 2 else f"{n:06d}.v"
            versions[channel] = new_versions[channel] = version
            if action == "empty":
                continue  # a new version without a value: stored as "empty"
            if channel in ("messages", "tags"):
                old = self.objects.get((thread, ns, parent or ""), {}).get(channel, [])
                edit = data.draw(st.sampled_from(LIST_EDITS), label="edit")
                values[channel] = self._list_value(edit, old)
            elif channel == "count":
                values[channel] = n
            else:
                values[channel] = {"note": f"n{n}", "pair": (n, str(n))}
        cid = f"{self._tick():08d}"
        checkpoint: Any = {
            "v": 4,
            "id": cid,
            "ts": f"2026-01-01T00:00:{self.counter % 60:02d}+00:00",
            "channel_values": values,
            "channel_versions": versions,
            "versions_seen": {"node": dict(versions)},
            "updated_channels": sorted(new_versions),
        }
        # A subgraph call ("node:task" namespace) records the root checkpoint it started from.
        roots = [c for t, n, c in self._stored() if t == thread and n == ""]
        root = data.draw(st.sampled_from(roots), label="root") if roots and ":" in ns else None
        metadata: Any = {
            "source": "loop",
            "step": self.counter % 5,
            "run_id": data.draw(st.sampled_from(RUNS), label="run"),
            "parents": {"": root} if root else {},
        }
        conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
        if parent is not None:
            conf["checkpoint_id"] = parent
        got = self.saver.put({"configurable": conf}, checkpoint, metadata, new_versions)
        want = self.model.put({"configurable": dict(conf)}, checkpoint, metadata, new_versions)
        assert config_view(got) == config_view(want)
        self.objects[(thread, ns, cid)] = values
        return cid

    def _draw_writes(self, data: st.DataObject) -> tuple[RunnableConfig, Any, str, str]:
        thread, ns, cid = data.draw(st.sampled_from(self._stored()), label="checkpoint")
        task = data.draw(st.sampled_from(TASKS), label="task")
        path = data.draw(st.sampled_from(["", "~a", "~b"]), label="task_path")
        writes = data.draw(
            st.lists(
                st.tuples(st.sampled_from(WRITE_CHANNELS), st.integers(0, 9) | st.text(max_size=3)),
                max_size=3,
            ),
            label="writes",
        )
        config: RunnableConfig = {
            "configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}
        }
        return config, writes, task, path

    @precondition(lambda self: bool(self._stored()))
    @rule(data=st.data())
    def put_writes(self, data: st.DataObject) -> None:
        config, writes, task, path = self._draw_writes(data)
        self.saver.put_writes(config, writes, task, path)
        self.model.put_writes(config, writes, task, path)

    @precondition(lambda self: bool(self._stored()))
    @rule(ns=st.sampled_from(NAMESPACES), data=st.data())
    def put_writes_then_put(self, ns: str, data: st.DataObject) -> None:
        """A task's writes, parked by a worker thread, ride with the next put of their thread,
        made by another thread (as in LangGraph's sync loop), unless their delay runs out."""
        config, writes, task, path = self._draw_writes(data)
        thread = config["configurable"]["thread_id"]
        errors: builtins.list[BaseException] = []

        def write() -> None:
            try:
                self.saver.put_writes(config, writes, task, path)
            except BaseException as exc:
                errors.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 30
        while writer.is_alive() and not self.saver.parked_writes(thread):
            assert time.monotonic() < deadline, "put_writes neither parked nor returned"
            time.sleep(0.0001)
        self.model.put_writes(config, writes, task, path)
        parents = [cid for tid, n, cid in self._stored() if tid == thread and n == ns]
        self._put(thread, ns, data.draw(st.sampled_from([None, *parents]), label="parent"), data)
        writer.join()
        assert errors == []

    @rule(thread=st.sampled_from(THREADS), ns=st.sampled_from(NAMESPACES), data=st.data())
    def get_tuple(self, thread: str, ns: str, data: st.DataObject) -> None:
        ids = [c for t, n, c in self._stored() if t == thread and n == ns]
        cid = data.draw(st.sampled_from([None, "99999999", *ids]), label="checkpoint_id")
        conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
        if cid is not None:
            conf["checkpoint_id"] = cid
        assert view(self.saver.get_tuple({"configurable": conf})) == view(
            self.model.get_tuple({"configurable": conf})
        )

    @rule(
        thread=st.sampled_from([None, *THREADS]),
        ns=st.sampled_from([None, *NAMESPACES]),
        filter=st.sampled_from(
            [None, {}, {"run_id": "r1"}, {"step": 2}, {"source": "loop", "step": 0}]
        ),
        limit=st.sampled_from([None, 0, 1, 2, 5]),
        data=st.data(),
    )
    def list(
        self,
        thread: str | None,
        ns: str | None,
        filter: Any,
        limit: int | None,
        data: st.DataObject,
    ) -> None:
        ids = sorted({c for _, _, c in self._stored()})
        before_id = data.draw(st.sampled_from([None, *ids]), label="before")
        before: RunnableConfig | None = (
            {"configurable": {"checkpoint_id": before_id}} if before_id else None
        )
        config: Any = None
        if thread is not None:
            config = {"configurable": {"thread_id": thread}}
            if ns is not None:
                config["configurable"]["checkpoint_ns"] = ns
        got = list(self.saver.list(config, filter=filter, before=before, limit=limit))
        want = list(self.model.list(config, filter=filter, before=before))
        if config is None or ns is None:
            want = newest_first(want)
        if limit is not None:
            want = want[: max(limit, 0)]
        assert [view(t) for t in got] == [view(t) for t in want]

    @rule(thread=st.sampled_from(THREADS))
    def delete_thread(self, thread: str) -> None:
        self.saver.delete_thread(thread)
        self.model.delete_thread(thread)

    @rule(source=st.sampled_from(THREADS), destination=st.sampled_from(THREADS))
    def copy_thread(self, source: str, destination: str) -> None:
        target = destination
        self.saver.copy_thread(source, target)
        self.model.copy_thread(source, target)
        for (tid, ns, cid), values in list(self.objects.items()):
            if tid == source:
                self.objects[(target, ns, cid)] = values

    @rule(
        threads=st.lists(st.sampled_from(THREADS), max_size=3),
        strategy=st.sampled_from(["keep_latest", "keep_latest", "delete"]),
    )
    def prune(self, threads: builtins.list[str], strategy: str) -> None:
        self.saver.prune(threads, strategy=strategy)
        self.model.prune(threads, strategy=strategy)

    @rule(runs=st.lists(st.sampled_from(RUNS), max_size=2))
    def delete_for_runs(self, runs: builtins.list[str]) -> None:
        self.saver.delete_for_runs(runs)
        self.model.delete_for_runs(runs)

    @rule()
    def reopen(self) -> None:
        """A new saver on the same data: nothing cached (another process, a restart)."""
        self.saver = self._new_saver()

    @invariant()
    def same_threads(self) -> None:
        for thread in THREADS:
            config: RunnableConfig = {"configurable": {"thread_id": thread}}
            got = [view(t) for t in self.saver.list(config)]
            want = [view(t) for t in newest_first(list(self.model.list(config)))]
            assert got == want


_LOOP: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """An event loop in a daemon thread, for AsyncRedisSaver's sync API (other threads only)."""
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
        threading.Thread(target=_LOOP.run_forever, daemon=True).start()
    return _LOOP


class AsyncSaverMachine(SaverMachine):
    """The same sequences on AsyncRedisSaver (its parked writes, its own reads), driven through
    its sync API from the test thread while its event loop runs in another."""

    def _new_saver(self) -> Any:
        async def make() -> AsyncRedisSaver:
            client = aredis.Redis.from_url(SHARED_URL)
            return AsyncRedisSaver(client, key_prefix=self.prefix, cache_threads=2)

        saver = asyncio.run_coroutine_threadsafe(make(), _background_loop()).result()
        self.__dict__.setdefault("async_clients", []).append(saver.client)
        return saver

    def teardown(self) -> None:
        super().teardown()
        for client in self.__dict__.get("async_clients", []):
            asyncio.run_coroutine_threadsafe(client.aclose(), _background_loop()).result()


EXAMPLES = int(os.environ.get("CHECKPOINTER_MODEL_EXAMPLES", "250"))
SaverMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
AsyncSaverMachine.TestCase.settings = settings(
    SaverMachine.TestCase.settings, max_examples=max(1, EXAMPLES // 4)
)
test_saver_matches_model = SaverMachine.TestCase
test_async_saver_matches_model = AsyncSaverMachine.TestCase
