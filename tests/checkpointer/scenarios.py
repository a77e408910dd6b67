"""Graph scenarios, written once, run on any saver (sync or async API) and compared.

Each scenario drives a small graph through a `Runner` and returns an *observation*: what the
graph returned, its states and its whole state history, normalized so that two runs compare
equal when they behave the same (checkpoint, task and interrupt ids replaced by labels in order
of appearance, timestamps dropped).
"""

from __future__ import annotations

import asyncio
import operator
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Interrupt, PregelTask, Send, StateSnapshot, interrupt
from typing_extensions import TypedDict

Mode = Literal["sync", "async"]
_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")


class Normalizer:
    """Turns snapshots into plain data; ids become `#0`, `#1`... in order of appearance."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}

    def _label(self, match: re.Match[str]) -> str:
        return self.labels.setdefault(match.group(0), f"#{len(self.labels)}")

    def __call__(self, obj: Any) -> Any:
        if isinstance(obj, StateSnapshot):
            return {
                "values": self(obj.values),
                "next": obj.next,
                "config": self(obj.config),
                "metadata": self(obj.metadata),
                "parent_config": self(obj.parent_config),
                "tasks": [self(t) for t in obj.tasks],
                "interrupts": [self(i) for i in obj.interrupts],
            }
        if isinstance(obj, PregelTask):
            return {
                "id": self(obj.id),
                "name": obj.name,
                "path": self(obj.path),
                "error": repr(obj.error) if obj.error else None,
                "interrupts": [self(i) for i in obj.interrupts],
                "state": self(obj.state),
                "result": self(obj.result),
            }
        if isinstance(obj, Interrupt):
            return {"value": self(obj.value), "id": self(obj.id)}
        if isinstance(obj, BaseMessage):
            return self(obj.model_dump())
        if isinstance(obj, dict):
            return {self(k): self(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self(v) for v in obj]
        if isinstance(obj, str):
            return _IDS.sub(self._label, obj)
        return obj


@dataclass
class Runner:
    """A compiled graph driven through the sync or the async API (sync calls run in a thread,
    off the test's event loop)."""

    graph: Any
    mode: Mode

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "async":
            return await getattr(self.graph, "a" + name)(*args, **kwargs)
        return await asyncio.to_thread(getattr(self.graph, name), *args, **kwargs)

    async def invoke(self, value: Any, config: dict[str, Any], **kwargs: Any) -> Any:
        return await self._call("invoke", value, config, **kwargs)

    async def state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        return await self._call("get_state", config, subgraphs=subgraphs)

    async def update(self, config: dict[str, Any], values: Any, as_node: str) -> Any:
        return await self._call("update_state", config, values, as_node=as_node)

    async def history(self, config: dict[str, Any]) -> list[StateSnapshot]:
        if self.mode == "async":
            return [s async for s in self.graph.aget_state_history(config)]
        return await asyncio.to_thread(lambda: list(self.graph.get_state_history(config)))


@dataclass
class Env:
    """What a scenario gets: a saver, an API mode and a place to count node calls."""

    saver: BaseCheckpointSaver[Any]
    mode: Mode
    calls: dict[str, int] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)

    def run(self, builder: StateGraph[Any]) -> Runner:
        return Runner(builder.compile(checkpointer=self.saver), self.mode)

    def count(self, name: str) -> int:
        self.calls[name] = self.calls.get(name, 0) + 1
        return self.calls[name]


Scenario = Callable[[Env, str], Awaitable[Any]]


class Chat(TypedDict, total=False):
    messages: Annotated[list[BaseMessage], add_messages]
    approved: str
    results: Annotated[list[str], operator.add]
    summary: str


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def interrupt_and_resume(env: Env, thread_id: str) -> Any:
    """A node interrupts for approval; `Command(resume=...)` continues the run."""

    def draft(state: Chat) -> Chat:
        return {"messages": [AIMessage("draft", id="a-draft")]}

    def review(state: Chat) -> Chat:
        answer = interrupt({"question": "publish?", "draft": state["messages"][-1].content})
        return {"approved": answer}

    def publish(state: Chat) -> Chat:
        return {"messages": [AIMessage(f"published ({state['approved']})", id="a-pub")]}

    builder = StateGraph(Chat)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("publish", publish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", "publish")
    builder.add_edge("publish", END)
    graph, config, norm = env.run(builder), _config(thread_id), Normalizer()
    first = await graph.invoke({"messages": [HumanMessage("write", id="h1")]}, config)
    paused = await graph.state(config)
    final = await graph.invoke(Command(resume="yes"), config)
    return norm(
        {
            "first": first,
            "paused": paused,
            "final": final,
            "state": await graph.state(config),
            "history": await graph.history(config),
        }
    )


async def subgraph(env: Env, thread_id: str) -> Any:
    """A compiled subgraph as a node, interrupting inside; parent and child states compared."""

    def c1(state: Chat) -> Chat:
        return {"messages": [AIMessage("child step 1", id="c1")]}

    def c2(state: Chat) -> Chat:
        note = interrupt("child needs input")
        return {"messages": [AIMessage(f"child got {note}", id="c2")]}

    child = StateGraph(Chat)
    child.add_node("c1", c1)
    child.add_node("c2", c2)
    child.add_edge(START, "c1")
    child.add_edge("c1", "c2")
    child.add_edge("c2", END)

    def prep(state: Chat) -> Chat:
        return {"messages": [AIMessage("prepared", id="p1")]}

    def finish(state: Chat) -> Chat:
        return {"summary": f"{len(state['messages'])} messages"}

    parent = StateGraph(Chat)
    parent.add_node("prep", prep)
    parent.add_node("child", child.compile())
    parent.add_node("finish", finish)
    parent.add_edge(START, "prep")
    parent.add_edge("prep", "child")
    parent.add_edge("child", "finish")
    parent.add_edge("finish", END)
    graph, config, norm = env.run(parent), _config(thread_id), Normalizer()
    await graph.invoke({"messages": [HumanMessage("go", id="h1")]}, config)
    paused = await graph.state(config, subgraphs=True)
    final = await graph.invoke(Command(resume="ok"), config)
    return norm(
        {
            "paused": paused,
            "final": final,
            "history": await graph.history(config),
        }
    )


async def send_fan_out(env: Env, thread_id: str) -> Any:
    """A planner fans out five `Send` tasks that run in parallel; a reducer collects them."""

    def plan(state: Chat) -> Chat:
        return {"summary": "planned"}

    def fan_out(state: Chat) -> list[Send]:
        return [Send("work", {"summary": f"item-{i}"}) for i in range(5)]

    def work(state: Chat) -> Chat:
        return {"results": [state["summary"].upper()]}

    def combine(state: Chat) -> Chat:
        return {"summary": ",".join(sorted(state["results"]))}

    builder = StateGraph(Chat)
    builder.add_node("plan", plan)
    builder.add_node("work", work)
    builder.add_node("combine", combine)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["work"])
    builder.add_edge("work", "combine")
    builder.add_edge("combine", END)
    graph, config, norm = env.run(builder), _config(thread_id), Normalizer()
    final = await graph.invoke({"results": []}, config)
    return norm({"final": final, "history": await graph.history(config)})


async def failure_then_resume(env: Env, thread_id: str) -> Any:
    """One of three parallel tasks fails; resuming reruns only that task (the finished
    tasks' writes were kept as pending writes)."""

    def fan_out(state: Chat) -> list[Send]:
        return [Send("work", {"summary": f"t{i}"}) for i in range(3)]

    def work(state: Chat) -> Chat:
        name = state["summary"]
        if env.count(name) == 1 and name == "t1":
            # Fail once the other two tasks have finished and their writes had time to be
            # saved; a task still running when one fails is not saved by LangGraph (it reruns).
            deadline = time.monotonic() + 5
            while not {"t0", "t2"} <= env.finished and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)
            raise RuntimeError("transient failure in t1")
        env.finished.add(name)
        return {"results": [name]}

    def combine(state: Chat) -> Chat:
        return {"summary": "+".join(sorted(state["results"]))}

    builder = StateGraph(Chat)
    builder.add_node("work", work)
    builder.add_node("combine", combine)
    builder.add_conditional_edges(START, fan_out, ["work"])
    builder.add_edge("work", "combine")
    builder.add_edge("combine", END)
    graph, config, norm = env.run(builder), _config(thread_id), Normalizer()
    try:
        await graph.invoke({"results": []}, config)
        failed = None
    except RuntimeError as exc:
        failed = str(exc)
    after_failure = await graph.state(config)
    final = await graph.invoke(None, config)
    return norm(
        {
            "failed": failed,
            "after_failure": after_failure,
            "final": final,
            "calls": dict(sorted(env.calls.items())),
            "history": await graph.history(config),
        }
    )


async def time_travel(env: Env, thread_id: str) -> Any:
    """Three turns, then a new turn from the checkpoint after the first (a fork), then a state
    update on an old checkpoint."""

    def respond(state: Chat) -> Chat:
        last = state["messages"][-1]
        count = len(state["messages"])
        return {"messages": [AIMessage(f"reply to {last.content}", id=f"r{count}-{last.id}")]}

    builder = StateGraph(Chat)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    graph, config, norm = env.run(builder), _config(thread_id), Normalizer()
    for turn in range(3):
        await graph.invoke({"messages": [HumanMessage(f"turn {turn}", id=f"h{turn}")]}, config)
    history = await graph.history(config)
    after_first = next(s for s in reversed(history) if len(s.values.get("messages", [])) == 2)
    forked = await graph.invoke(
        {"messages": [HumanMessage("another path", id="h-fork")]}, after_first.config
    )
    updated = await graph.update(
        after_first.config, {"messages": [AIMessage("edited", id="r1-h0")]}, as_node="respond"
    )
    return norm(
        {
            "forked": forked,
            "updated": await graph.state(updated),
            "latest": await graph.state(config),
            "history": await graph.history(config),
        }
    )


def _extend(state: list[str] | None, writes: Sequence[list[str]]) -> list[str]:
    return [*(state or []), *(item for write in writes for item in write)]


class Journal(TypedDict, total=False):
    journal: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=3)]


async def delta_channel(env: Env, thread_id: str) -> Any:
    """A DeltaChannel (beta): values rebuilt from ancestors' writes and periodic snapshots."""

    def note(state: Journal) -> Journal:
        return {"journal": [f"entry {len(state.get('journal', []))}"]}

    builder = StateGraph(Journal)
    builder.add_node("note", note)
    builder.add_edge(START, "note")
    builder.add_edge("note", END)
    graph, config, norm = env.run(builder), _config(thread_id), Normalizer()
    results = [await graph.invoke({"journal": [f"input {turn}"]}, config) for turn in range(5)]
    return norm({"results": results, "history": await graph.history(config)})


SCENARIOS: dict[str, Scenario] = {
    "interrupt_and_resume": interrupt_and_resume,
    "subgraph": subgraph,
    "send_fan_out": send_fan_out,
    "failure_then_resume": failure_then_resume,
    "time_travel": time_travel,
    "delta_channel": delta_channel,
}
