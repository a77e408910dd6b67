"""The one run executor (app.runs.executor) and the one event mapper (app.runs.events):
cancellation, the deadline and failures are decided in one place, and one progress event is
rendered for every wire. Nodes wait on asyncio events, never on sleeps."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from redis.exceptions import ConnectionError as RedisConnectionError

from app.runs.events import Event, EventMapper
from app.runs.executor import (
    Deadline,
    RunCancelled,
    RunFailed,
    execute,
    failure_of,
)
from app.runs.spec import RunSpec


class State(TypedDict, total=False):
    steps: list[str]


class Gates:
    """A node that reports progress, says it started, and waits until it is let through."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.finished = False

    async def node(self, state: State) -> dict[str, Any]:
        get_stream_writer()({"stage": "start"})
        self.entered.set()
        await self.release.wait()
        self.finished = True
        return {"steps": [*state.get("steps", []), "gated"]}


def graph_of(node: Any, checkpointer: Any = None) -> Any:
    builder = StateGraph(State)
    builder.add_node("work", node)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile(checkpointer=checkpointer)


CONFIG: Any = {"configurable": {"thread_id": "t"}}


async def test_the_cancel_event_stops_a_running_run() -> None:
    gates = Gates()
    cancel = asyncio.Event()
    run = asyncio.create_task(
        execute(graph_of(gates.node), {}, CONFIG, context=None, cancel=cancel)
    )
    await gates.entered.wait()
    cancel.set()
    with pytest.raises(RunCancelled):
        await run
    assert not gates.finished
    assert not run.cancelled()  # the executor's own cancel is taken back: the task ends normally


async def test_a_cancel_set_before_the_run_stops_it_before_any_node() -> None:
    gates = Gates()
    cancel = asyncio.Event()
    cancel.set()
    with pytest.raises(RunCancelled):
        await execute(graph_of(gates.node), {}, CONFIG, context=None, cancel=cancel)
    assert not gates.entered.is_set()


async def test_cancelling_the_callers_task_is_not_a_run_cancel() -> None:
    """A worker that stops cancels its task: that propagates as CancelledError (the run is
    handed over, not cancelled)."""
    gates = Gates()
    run = asyncio.create_task(
        execute(graph_of(gates.node), {}, CONFIG, context=None, cancel=asyncio.Event())
    )
    await gates.entered.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run


async def test_the_deadline_fails_the_run_as_a_timeout() -> None:
    gates = Gates()  # never released: only the deadline ends the run
    deadline = Deadline(0.05, "RUN_TIMEOUT_SECONDS")
    with pytest.raises(RunFailed) as failed:
        await execute(graph_of(gates.node), {}, CONFIG, context=None, deadline=deadline, what="run")
    failure = failed.value.failure
    assert gates.entered.is_set() and not gates.finished
    assert failure.timed_out and failure.kind == "timeout" and failure.dependency is None
    assert failure.message == "The run took longer than 0.05 s (RUN_TIMEOUT_SECONDS)."


async def test_a_timeout_inside_the_graph_is_a_failure_not_the_deadline() -> None:
    async def node(state: State) -> dict[str, Any]:
        raise TimeoutError("an LLM call timed out")

    with pytest.raises(RunFailed) as failed:
        await execute(graph_of(node), {}, CONFIG, context=None, deadline=Deadline(60, "X"))
    assert not failed.value.failure.timed_out
    assert failed.value.failure.kind == "TimeoutError"


async def test_a_failure_is_mapped_once() -> None:
    async def node(state: State) -> dict[str, Any]:
        get_stream_writer()({"stage": "start"})
        raise ValueError("secret internal detail /etc/passwd")

    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    mapper = EventMapper.chat(lambda agent, node: False)
    with pytest.raises(RunFailed) as failed:
        await execute(graph_of(node), {}, CONFIG, context=None, mapper=mapper, sink=sink)
    failure = failed.value.failure
    assert failure.kind == "ValueError" and isinstance(failure.error, ValueError)
    assert "secret" not in failure.message and "(ValueError)" in failure.message
    assert failure.event() == {"message": failure.message}
    assert failure_of(failed.value) is failure  # never wrapped twice
    assert [name for name, _ in events] == ["progress"]  # events before the failure, no error


async def test_a_dependency_failure_names_the_dependency() -> None:
    async def node(state: State) -> dict[str, Any]:
        raise RedisConnectionError("connection refused to 10.0.0.7:6379")

    with pytest.raises(RunFailed) as failed:
        await execute(graph_of(node), {}, CONFIG, context=None, what="analysis")
    failure = failed.value.failure
    assert failure.dependency == "redis" and failure.event()["dependency"] == "redis"
    assert "10.0.0.7" not in failure.message and "this analysis" in failure.message


async def test_the_result_is_what_ainvoke_returns_with_interrupts() -> None:
    def ask(state: State) -> dict[str, Any]:
        return {"steps": [interrupt({"question": "ok?"})]}

    graph = graph_of(ask, InMemorySaver())
    expected = await graph.ainvoke({}, {"configurable": {"thread_id": "a"}})
    got = await execute(graph, {}, {"configurable": {"thread_id": "b"}}, context=None)
    assert got is not None and "__interrupt__" in got
    assert [i.value for i in got["__interrupt__"]] == [i.value for i in expected["__interrupt__"]]
    done = graph_of(lambda state: {"steps": ["x"]})
    assert await execute(done, {}, CONFIG, context=None) == await done.ainvoke({}, CONFIG)


async def test_one_progress_event_on_every_wire() -> None:
    """The same stream-writer chunk, from inside an agent's subgraph, on each wire."""
    namespace = ("analytics:1",)
    chunk = {"tool": "sql", "stage": "start"}
    compact = json.loads(
        EventMapper.chat(lambda a, n: False).events(namespace, "custom", chunk)[0][1]
    )
    assert compact == {"agent": "analytics", "data": chunk}
    turn = EventMapper(RunSpec(kind="turn"))
    assert turn.events(namespace, "custom", chunk) == [("progress", json.dumps(compact))]
    agent = EventMapper(RunSpec(kind="agent", stream_modes=["custom"], subgraphs=True))
    ((name, data),) = agent.events(namespace, "custom", chunk)
    assert name == "custom|analytics:1" and json.loads(data) == chunk
    root_only = EventMapper(RunSpec(kind="agent", stream_modes=["custom"]))
    assert root_only.events(namespace, "custom", chunk) == []
    assert [e for e, _ in root_only.events((), "custom", chunk)] == ["custom"]
    assert EventMapper.result().events(namespace, "custom", chunk) == []


async def test_chat_and_turn_wires_through_the_executor() -> None:
    gates = Gates()
    gates.release.set()
    chat: list[Event] = []
    turn: list[Event] = []

    async def to_chat(event: Event) -> None:
        chat.append(event)

    async def to_turn(event: Event) -> None:
        turn.append(event)

    graph = graph_of(gates.node)
    mapper = EventMapper.chat(lambda a, n: False)
    state = await execute(graph, {}, CONFIG, context=None, mapper=mapper, sink=to_chat)
    assert state == {"steps": ["gated"]}
    turn_mapper = EventMapper(RunSpec(kind="turn"))
    assert await execute(graph, {}, CONFIG, context=None, mapper=turn_mapper, sink=to_turn) is None
    progress = ("progress", json.dumps({"agent": "", "data": {"stage": "start"}}))
    node = ("node", json.dumps({"agent": "", "node": "work"}))
    assert chat == turn == [progress, node]
