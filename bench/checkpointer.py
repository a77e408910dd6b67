"""Checkpointer bench: ``python -m bench.checkpointer [--threads N] [--turns N]``.

The same pipeline-shaped graph (7 nodes in a row, each appending one ~600-character message to
`messages`) is built twice: with sync nodes, run with `invoke` (how a script or a notebook uses
LangGraph), and with async nodes, run with `ainvoke` (how the server does; durability "async",
LangGraph's default, in both). Each runs 5 threads x 40 turns with every saver of its kind: no
checkpointer (the whole conversation passed in as input each turn, so the graph does the same
work without persistence), `InMemorySaver`, ours (`RedisSaver` on the sync graph,
`AsyncRedisSaver` on the async one), the official `PostgresSaver` / `AsyncPostgresSaver` (a
temporary database each on the machine's Postgres, dropped after) and `SqliteSaver` /
`AsyncSqliteSaver` (a file each in a temporary directory). All ten contenders take turns in
rounds (a round: turn t of thread k on every contender, sync and async), in one process, so
load from other processes on the shared machine hits all of them alike.

Printed, per graph: per-turn p50/p95 per saver, the ratio to InMemorySaver, the anchors
measured on this machine class, the targets, and the Redis round trips per turn of our saver
(commands sent on its connections, counted by the client: independent of load). Then Redis
bytes per thread (MEMORY USAGE with SAMPLES 0, summed over the thread's keys) after 10, 20 and
40 turns beside the serialized size of the messages stored in the thread. The load average is
printed at the start and the end. Redis: REDIS_URL (default redis://127.0.0.1:6379/0) under key
prefixes of the bench's own, deleted after. Postgres: BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import psycopg
import redis
import redis.asyncio.connection
import redis.connection
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from checkpointer import AsyncRedisSaver, RedisSaver
from checkpointer.keys import thread_keys

OURS = {"sync": "RedisSaver (ours)", "async": "AsyncRedisSaver (ours)"}
#: p50 ms per turn measured on this machine class: async from the first version of this bench;
#: sync from issue 18 (the sync saver before write combining: 1.90x InMemorySaver).
ANCHORS = {
    "sync": {"InMemorySaver": 9.30, OURS["sync"]: 17.70, "PostgresSaver": 24.49},
    "async": {"none": 1.5, "InMemorySaver": 6.0, "SqliteSaver": 15.1, "PostgresSaver": 19.3},
}
NODES = 7
SNAPSHOT_TURNS = (10, 20, 40)
TEXT = (
    "The deployment finished in 42 seconds; the canary served 5% of traffic without errors, "
    "latency p95 stayed at 180 ms and the error budget is untouched. Next, roll out to the "
    "remaining regions, watch the saturation dashboards, and keep the rollback plan ready. "
    "Tests: 1,284 passed, 3 skipped (network), 0 failed; coverage 87.2% (+0.4). "
)


class Conversation(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def reply(state: Conversation, index: int) -> dict[str, Any]:
    turn = sum(isinstance(m, HumanMessage) for m in state["messages"])
    text = f"[stage {index}, turn {turn}] " + TEXT[: 560 + 5 * index]
    return {"messages": [AIMessage(text, id=f"t{turn}-n{index}")]}


def build_graph(asynchronous: bool = True) -> StateGraph[Any]:
    """The bench's graph: `NODES` nodes in a row, async or sync ones."""
    builder = StateGraph(Conversation)

    def make_node(index: int) -> Any:
        if asynchronous:

            async def anode(state: Conversation) -> dict[str, Any]:
                return reply(state, index)

            return anode

        def node(state: Conversation) -> dict[str, Any]:
            return reply(state, index)

        return node

    previous = START
    for index in range(1, NODES + 1):
        name = f"stage_{index}"
        builder.add_node(name, make_node(index))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder


# Round trips: every command (or pipeline) a connection sends, per connection class.
SENT: dict[str, int] = {"sync": 0, "async": 0}


class CountingConnection(redis.connection.Connection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT["sync"] += 1
        super().send_packed_command(command, check_health)


class AsyncCountingConnection(redis.asyncio.connection.Connection):
    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT["async"] += 1
        await super().send_packed_command(command, check_health)


@dataclass
class Contender:
    mode: str  # "sync" (invoke) or "async" (ainvoke)
    name: str
    saver: BaseCheckpointSaver[Any] | None
    graph: Any = None
    times: list[float] = field(default_factory=list)
    history: dict[str, list[AnyMessage]] = field(default_factory=dict)

    def turn(self, loop: asyncio.AbstractEventLoop, thread: str, turn: int) -> None:
        question = HumanMessage(
            f"Turn {turn}: what changed since the last deploy? " * 3, id=f"t{turn}-h"
        )
        config = {"configurable": {"thread_id": thread}}
        if self.saver is None:
            value: Any = {"messages": [*self.history.get(thread, []), question]}
        else:
            value = {"messages": [question]}
        if self.mode == "sync":
            start = time.perf_counter()
            result = self.graph.invoke(value, config)
            self.times.append(time.perf_counter() - start)
        else:
            result = loop.run_until_complete(self._timed_ainvoke(value, config))
        if self.saver is None:
            self.history[thread] = result["messages"]

    async def _timed_ainvoke(self, value: Any, config: Any) -> Any:
        start = time.perf_counter()
        result = await self.graph.ainvoke(value, config)
        self.times.append(time.perf_counter() - start)
        return result


@contextmanager
def temporary_database(base_url: str) -> Iterator[str]:
    """The URL of a new database on the server of `base_url`, dropped after."""
    name = f"bench_checkpointer_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def postgres_saver(base_url: str) -> Iterator[PostgresSaver]:
    with temporary_database(base_url) as url, PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        yield saver


@asynccontextmanager
async def async_postgres_saver(url: str) -> AsyncIterator[AsyncPostgresSaver]:
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await saver.setup()
        yield saver


def thread_bytes(client: redis.Redis | redis.RedisCluster, prefix: str, thread: str) -> int:
    total = 0
    for key in thread_keys(prefix, thread).all:
        total += int(client.memory_usage(key, samples=0) or 0)
    return total


def message_bytes(messages: list[AnyMessage]) -> int:
    serde = JsonPlusSerializer()
    return sum(len(serde.dumps_typed(m)[1]) for m in messages)


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(threads: int, turns: int) -> None:
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    pg_url = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    prefixes = {mode: f"bench-{mode}-{uuid.uuid4().hex[:10]}" for mode in ("sync", "async")}
    load_before = load_average()
    loop = asyncio.new_event_loop()
    with ExitStack() as stack:
        stack.callback(loop.close)
        astack = AsyncExitStack()
        stack.callback(lambda: loop.run_until_complete(astack.aclose()))
        enter = loop.run_until_complete
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for prefix in prefixes.values():
            stack.callback(_delete_prefix, redis_url, prefix)
        ours_sync = stack.enter_context(
            RedisSaver.from_conn_string(
                redis_url,
                key_prefix=prefixes["sync"],
                cluster=False,
                connection_class=CountingConnection,
            )
        )
        ours_async = enter(
            astack.enter_async_context(
                AsyncRedisSaver.from_conn_string(
                    redis_url,
                    key_prefix=prefixes["async"],
                    cluster=False,
                    connection_class=AsyncCountingConnection,
                )
            )
        )
        apg_url = stack.enter_context(temporary_database(pg_url))
        contenders = [
            Contender("sync", "none", None),
            Contender("sync", "InMemorySaver", InMemorySaver()),
            Contender("sync", OURS["sync"], ours_sync),
            Contender("sync", "PostgresSaver", stack.enter_context(postgres_saver(pg_url))),
            Contender(
                "sync",
                "SqliteSaver",
                stack.enter_context(SqliteSaver.from_conn_string(str(tmp / "sync.sqlite"))),
            ),
            Contender("async", "none", None),
            Contender("async", "InMemorySaver", InMemorySaver()),
            Contender("async", OURS["async"], ours_async),
            Contender(
                "async",
                "PostgresSaver",
                enter(astack.enter_async_context(async_postgres_saver(apg_url))),
            ),
            Contender(
                "async",
                "SqliteSaver",
                enter(
                    astack.enter_async_context(
                        AsyncSqliteSaver.from_conn_string(str(tmp / "async.sqlite"))
                    )
                ),
            ),
        ]
        for c in contenders:
            c.graph = build_graph(asynchronous=c.mode == "async").compile(checkpointer=c.saver)
            for turn in range(1, 4):  # warm-up: scripts, prepared statements, imports
                c.turn(loop, "warm-up", turn)
            c.times.clear()
        sizes: dict[int, tuple[float, float, float, float]] = {}
        gc.collect()
        sent_before = dict(SENT)
        for turn in range(1, turns + 1):
            for t in range(threads):
                for c in contenders:
                    c.turn(loop, f"thread-{t}", turn)
            if turn in SNAPSHOT_TURNS:
                sizes[turn] = snapshot(ours_sync.client, prefixes, threads)
        round_trips = {mode: (SENT[mode] - sent_before[mode]) / (threads * turns) for mode in SENT}
        print(
            f"Checkpointer bench: {NODES}-node pipeline graph, {threads} threads x {turns} turns, "
            "one ~600-char message per node, turns interleaved across all savers (sync and "
            f"async) in one process; load average {load_before} at the start, "
            f"{load_average()} at the end"
        )
        for mode in ("sync", "async"):
            print()
            report(mode, [c for c in contenders if c.mode == mode], round_trips[mode])
        print()
        report_sizes(sizes)


def snapshot(
    client: redis.Redis | redis.RedisCluster, prefixes: dict[str, str], threads: int
) -> tuple[float, float, float, float]:
    """Mean Redis bytes per thread (sync saver, async saver), and the messages of thread 0."""
    stored = {
        mode: statistics.mean(thread_bytes(client, prefix, f"thread-{t}") for t in range(threads))
        for mode, prefix in prefixes.items()
    }
    reader = RedisSaver(client, key_prefix=prefixes["sync"])
    state = reader.get_tuple({"configurable": {"thread_id": "thread-0"}})
    assert state is not None
    messages = state.checkpoint["channel_values"]["messages"]
    return stored["sync"], stored["async"], float(message_bytes(messages)), float(len(messages))


def _delete_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.unlink(*keys[start : start + 500])
    finally:
        client.close()


def report(mode: str, contenders: list[Contender], round_trips: float) -> None:
    p50 = {c.name: statistics.median(c.times) * 1e3 for c in contenders}
    base = p50["InMemorySaver"]
    call = "invoke" if mode == "sync" else "ainvoke"
    print(f"{mode} graph ({call}), per turn")
    print(f"{'saver':<24}{'p50 ms':>9}{'p95 ms':>9}{'p50 / InMemory':>16}{'anchor p50 ms':>15}")
    for c in contenders:
        anchor = ANCHORS[mode].get(c.name)
        print(
            f"{c.name:<24}{p50[c.name]:>9.2f}{percentile(c.times, 95) * 1e3:>9.2f}"
            f"{p50[c.name] / base:>15.2f}x{(f'{anchor:.2f}' if anchor else '-'):>15}"
        )
    ours = p50[OURS[mode]]
    vs_memory, vs_pg = ours / base, ours / p50["PostgresSaver"]
    print(
        f"target: ours <= 1.3x InMemorySaver and <= 0.5x PostgresSaver -> "
        f"{vs_memory:.2f}x InMemorySaver ({'ok' if vs_memory <= 1.3 else 'MISSED'}), "
        f"{vs_pg:.2f}x PostgresSaver ({'ok' if vs_pg <= 0.5 else 'MISSED'})"
    )
    print(
        f"Redis round trips per turn ({OURS[mode]}, commands sent): {round_trips:.2f} "
        f"(a turn: 1 get_tuple + {NODES + 2} checkpoints)"
    )


def report_sizes(sizes: dict[int, tuple[float, float, float, float]]) -> None:
    print(
        "Redis bytes per thread (MEMORY USAGE SAMPLES 0, the thread's keys) vs its messages "
        "(serialized size)"
    )
    print(
        f"{'turns':>5}{'messages':>10}{'message bytes':>15}{'sync saver':>12}{'async saver':>13}"
        f"{'redis/msgs':>12}"
    )
    for turn, (sync_bytes, async_bytes, msg_bytes, count) in sorted(sizes.items()):
        ratio = async_bytes / msg_bytes
        print(
            f"{turn:>5}{count:>10.0f}{msg_bytes:>15,.0f}{sync_bytes:>12,.0f}{async_bytes:>13,.0f}"
            f"{ratio:>11.2f}x"
        )
    shown = sorted(sizes)
    for a, b in zip(shown, shown[1:], strict=False):
        print(
            f"growth {a}->{b} turns: messages x{sizes[b][2] / sizes[a][2]:.2f}, "
            f"redis x{sizes[b][1] / sizes[a][1]:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--threads", type=int, default=5)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    run(args.threads, args.turns)


if __name__ == "__main__":
    main()
