"""Write combining: a task's writes ride with its thread's next checkpoint (one script call per
graph step) in both savers, and still return only once stored, errors included."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import pytest
import redis
import redis.asyncio as aredis
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from checkpointer import AsyncRedisSaver, RedisSaver, RedisUnavailableError
from checkpointer.combine import ThreadWriteCombiner, carried
from tests.checkpointer.test_storage import checkpoint
from tests.support.servers import RedisServer

BASE: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
ALL_WRITES = [("a", 1), ("b", 2), ("c", 3), ("x", 1)]


@contextmanager
def client_commands(url: str) -> Iterator[list[str]]:
    """The commands clients send (not scripts' own) between entering and leaving."""
    seen: list[str] = []
    watcher = redis.Redis.from_url(url)
    try:
        with watcher.monitor() as monitor:
            marker = redis.Redis.from_url(url)
            marker.echo("begin")
            yield seen
            marker.echo("end")
            marker.close()
            for event in monitor.listen():
                command = event["command"]
                if command == "ECHO begin":
                    seen.clear()
                elif command == "ECHO end":
                    return
                elif event.get("client_type") != "lua":
                    seen.append(command.split(" ")[0])
    finally:
        watcher.close()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.0005)


class Counter(TypedDict):
    steps: Annotated[list[str], lambda a, b: a + b]


def pipeline(nodes: int, asynchronous: bool) -> StateGraph[Any]:
    builder = StateGraph(Counter)
    previous = START
    for index in range(nodes):

        def step(state: Counter, index: int = index) -> dict[str, Any]:
            return {"steps": [f"n{index}"]}

        async def astep(state: Counter, index: int = index) -> dict[str, Any]:
            return {"steps": [f"n{index}"]}

        builder.add_node(f"n{index}", astep if asynchronous else step)
        builder.add_edge(previous, f"n{index}")
        previous = f"n{index}"
    builder.add_edge(previous, END)
    return builder


def test_sync_graph_step_costs_one_round_trip(private_redis: RedisServer) -> None:
    """`invoke` on RedisSaver: one get_tuple, then one script call per checkpoint; every
    task's writes went with the next checkpoint (a long write_delay makes it load-proof)."""
    with RedisSaver.from_conn_string(private_redis.url, write_delay=1.0) as saver:
        graph = pipeline(3, asynchronous=False).compile(checkpointer=saver)
        graph.invoke({"steps": []}, {"configurable": {"thread_id": "warm-up"}})
        config: RunnableConfig = {"configurable": {"thread_id": "t"}}
        with client_commands(private_redis.url) as calls:
            assert graph.invoke({"steps": ["in"]}, config) == {"steps": ["in", "n0", "n1", "n2"]}
        checkpoints = len(list(saver.list(config)))
        assert checkpoints == 3 + 2  # input, start, one per node
        assert calls == ["EVALSHA"] * (1 + checkpoints)
        # The writes are stored: each checkpoint but the last lists the task that ran from it.
        history = list(saver.list(config))
        assert [len(t.pending_writes or []) > 0 for t in history] == [False] + [True] * 4


async def test_async_graph_step_costs_one_round_trip(private_redis: RedisServer) -> None:
    async with AsyncRedisSaver.from_conn_string(private_redis.url, write_delay=1.0) as saver:
        graph = pipeline(3, asynchronous=True).compile(checkpointer=saver)
        await graph.ainvoke({"steps": []}, {"configurable": {"thread_id": "warm-up"}})
        config: RunnableConfig = {"configurable": {"thread_id": "t"}}
        with client_commands(private_redis.url) as calls:
            await graph.ainvoke({"steps": ["in"]}, config)
        assert calls == ["EVALSHA"] * (1 + 5)


async def wait_until_async(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.0005)


async def test_writes_wait_for_the_put_in_flight(private_redis: RedisServer) -> None:
    """The writes' delay runs out while the thread's previous put waits for the server (here:
    paused; on a loaded machine: a slow round trip): they are not sent alone but wait for that
    put, then ride with the next one (LangGraph calls the step's put once the previous
    returned)."""
    async with AsyncRedisSaver.from_conn_string(private_redis.url, write_delay=0.001) as saver:
        first = await saver.aput(BASE, checkpoint({}, {}), {}, {})
        admin = aredis.Redis.from_url(private_redis.url)
        try:
            await admin.execute_command("CLIENT", "PAUSE", 60_000, "WRITE")
            put = asyncio.ensure_future(saver.aput(first, checkpoint({}, {}), {}, {}))
            await wait_until_async(lambda: saver._writes.busy("t"), "the put is in flight")
            writes = asyncio.ensure_future(saver.aput_writes(first, [("a", 1)], "task"))
            await wait_until_async(
                lambda: saver._writes.waiting_for_put("t"), "the writes' delay ran out"
            )
            assert saver.parked_writes("t") == 1 and not writes.done()  # not sent alone
        finally:
            await admin.execute_command("CLIENT", "UNPAUSE")
            await admin.aclose()
        second = await put
        # The next put carries them (or, if it comes later than the delay, they go alone).
        await saver.aput(second, checkpoint({}, {}), {}, {})
        await writes
        got = await saver.aget_tuple(first)
        assert got is not None and got.pending_writes == [("task", "a", 1)]


def test_writes_of_several_threads_ride_with_one_put(private_redis: RedisServer) -> None:
    """put_writes from two threads then put from a third: one script call, all stored, and
    each put_writes returns once it is."""
    with RedisSaver.from_conn_string(private_redis.url, write_delay=1.0) as saver:
        first = saver.put(BASE, checkpoint({}, {}), {}, {})
        saver.put_writes(first, [("x", 1)], "warm-up")  # scripts loaded (alone, after 1 s)
        writers = [
            threading.Thread(target=saver.put_writes, args=(first, [("a", 1), ("b", 2)], "t1")),
            threading.Thread(target=saver.put_writes, args=(first, [("c", 3)], "t2")),
        ]
        with client_commands(private_redis.url) as calls:
            for writer in writers:
                writer.start()
            wait_until(lambda: saver.parked_writes("t") == 3, "both tasks' writes are parked")
            saver.put(first, checkpoint({}, {}), {}, {})
            for writer in writers:
                writer.join()
        assert calls == ["EVALSHA"]
        got = saver.get_tuple(first)
        assert got is not None
        assert sorted(w[1:] for w in got.pending_writes or []) == ALL_WRITES


def test_failed_put_fails_the_writes_it_carried(private_redis: RedisServer) -> None:
    with RedisSaver.from_conn_string(private_redis.url, write_delay=1.0) as saver:
        stored = saver.put(BASE, checkpoint({}, {}), {}, {})
        errors: list[BaseException] = []

        def write() -> None:
            try:
                saver.put_writes(stored, [("a", 1)], "task")
            except BaseException as exc:
                errors.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        wait_until(lambda: saver.parked_writes("t") == 1, "the write is parked")
        private_redis.stop()
        try:
            with pytest.raises(RedisUnavailableError):
                saver.put(stored, checkpoint({}, {}), {}, {})
            writer.join()
        finally:
            private_redis.start()
        assert [type(e) for e in errors] == [RedisUnavailableError]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_write_errors_reach_the_caller(private_redis: RedisServer, mode: str) -> None:
    """Writes sent alone (no put came within the delay) raise their own error."""
    if mode == "async":
        async with AsyncRedisSaver.from_conn_string(private_redis.url) as asaver:
            stored = await asaver.aput(BASE, checkpoint({}, {}), {}, {})
            private_redis.stop()
            with pytest.raises(RedisUnavailableError):
                await asaver.aput_writes(stored, [("a", 1)], "task")
    else:
        with RedisSaver.from_conn_string(private_redis.url) as saver:
            stored = saver.put(BASE, checkpoint({}, {}), {}, {})
            private_redis.stop()
            with pytest.raises(RedisUnavailableError):
                await asyncio.to_thread(saver.put_writes, stored, [("a", 1)], "task")
    private_redis.start()


def test_deletes_store_parked_writes_first(shared_url: str, key_prefix: str) -> None:
    """delete_thread while a task's writes wait: they are stored first, then deleted with the
    thread (never stored after the delete, into a thread that is gone)."""
    with RedisSaver.from_conn_string(shared_url, key_prefix=key_prefix, write_delay=1.0) as saver:
        stored = saver.put(BASE, checkpoint({}, {}), {}, {})
        writer = threading.Thread(target=saver.put_writes, args=(stored, [("a", 1)], "task"))
        writer.start()
        wait_until(lambda: saver.parked_writes("t") == 1, "the write is parked")
        saver.delete_thread("t")
        writer.join()
        assert saver.get_tuple(BASE) is None
        assert list(saver.client.scan_iter(match=f"{key_prefix}*")) == []


async def test_parked_writes_ride_with_the_next_put(private_redis: RedisServer) -> None:
    """aput_writes then aput on one thread: one script call; alone, writes go after the delay."""
    async with AsyncRedisSaver.from_conn_string(private_redis.url) as saver:
        first = await saver.aput(BASE, checkpoint({}, {}), {}, {})
        await saver.aput_writes(first, [("x", 1)], "warm-up")  # scripts loaded
        with client_commands(private_redis.url) as calls:
            await asyncio.gather(
                saver.aput_writes(first, [("a", 1), ("b", 2)], "task-1"),
                saver.aput_writes(first, [("c", 3)], "task-2"),
                saver.aput(first, checkpoint({}, {}), {}, {}),
            )
        assert calls == ["EVALSHA"]
        got = await saver.aget_tuple(first)
        assert got is not None
        assert sorted(w[1:] for w in got.pending_writes or []) == ALL_WRITES


@pytest.mark.parametrize("delay", [-0.1, 1.5, True, "1"])
def test_write_delay_is_checked(delay: Any) -> None:
    with pytest.raises(ValueError, match="write_delay"):
        RedisSaver(redis.Redis(), write_delay=delay)
    with pytest.raises(ValueError, match="write_delay"):
        AsyncRedisSaver(aredis.Redis(), write_delay=delay)


def test_thread_combiner_stores_every_write_once() -> None:
    """Many threads park writes while another takes them for puts and the delays run out:
    every write is sent exactly once, alone or carried, and every caller returns."""
    sent: list[Any] = []
    lock = threading.Lock()

    def send(thread_id: Any, encoded: Any) -> None:
        with lock:
            sent.extend(encoded)

    combiner = ThreadWriteCombiner(send, delay=0.0005)
    expected = sorted(f"{w}-{i}" for w in range(8) for i in range(40))
    stop = threading.Event()

    def writer(w: int) -> None:
        for i in range(40):
            combiner.add(f"thread-{i % 2}", [f"{w}-{i}", b"member", b"0"])

    def putter() -> None:
        turn = 0
        while not stop.wait(0.0002):
            turn += 1
            with carried(combiner.take(f"thread-{turn % 2}")) as carried_writes:
                send(None, carried_writes)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    taker = threading.Thread(target=putter)
    taker.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    taker.join()
    assert sorted(sent[0::3]) == expected
    assert combiner.parked("thread-0") == combiner.parked("thread-1") == 0


def test_a_new_saver_has_nothing_parked() -> None:
    saver = RedisSaver(redis.Redis())
    assert saver.parked_writes(str(uuid.uuid4())) == 0
