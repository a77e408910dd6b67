"""Running one chat turn through the compiled graph: blocking, or as a stream of events.

A turn runs under the session's lock. Streaming runs the graph in a task of its own that feeds
a queue; the HTTP response only reads the queue, so a client that disconnects stops reading but
never cancels the run half-way: the turn completes, its checkpoints land, and the lock is
released when the run ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig

from graph.context import RunContext
from graph.sessions import SessionInfo, SessionStore
from graph.state import ChatInput
from graph.workflow import SwitchyardGraph

log = logging.getLogger(__name__)

#: Nodes whose model tokens are the answer the user sees (streamed as `token` events).
ANSWER_NODES = frozenset({"chat", "generate_answer"})


@dataclass
class TurnRequest:
    """One user message for one session."""

    session: SessionInfo
    message: str
    agent: str | None = None
    context: RunContext = field(default_factory=RunContext)


def run_config(session: SessionInfo) -> RunnableConfig:
    return {
        "configurable": {"thread_id": session.session_id},
        "metadata": {"owner": session.owner, "session_id": session.session_id},
        "recursion_limit": 100,
    }


def turn_input(request: TurnRequest) -> ChatInput:
    payload: ChatInput = {
        "messages": [HumanMessage(request.message)],
        "user_id": request.session.user_id,
        "session_id": request.session.session_id,
    }
    if request.agent:
        payload["target_agent"] = request.agent
    return payload


def turn_result(session: SessionInfo, state: dict[str, Any]) -> dict[str, Any]:
    """The API's view of a finished turn."""
    route = state.get("route") or {}
    answers = state.get("agent_answers") or {}
    ran = route.get("agents") or []
    data = {name: answers[name].get("data") or {} for name in ran if name in answers}
    methods = {name: answers[name].get("method") for name in ran if name in answers}
    return {
        "session_id": session.session_id,
        "answer": state.get("answer", ""),
        "agent": route.get("agent"),
        "agents": ran,
        "route": route,
        "turn": state.get("turn_count", 0),
        "handoffs": state.get("handoff_count", 0),
        "methods": methods,
        "data": data,
        "stage_ms": state.get("stage_ms") or {},
        "errors": state.get("errors") or [],
    }


async def run_turn(
    graph: SwitchyardGraph, sessions: SessionStore, request: TurnRequest
) -> dict[str, Any]:
    """Run a turn to completion (the caller holds the session lock)."""
    state = await graph.ainvoke(
        turn_input(request), run_config(request.session), context=request.context
    )
    result = turn_result(request.session, state)
    await sessions.record_agents(request.session, result["agents"])
    return result


async def _produce(
    graph: SwitchyardGraph,
    sessions: SessionStore,
    request: TurnRequest,
    queue: asyncio.Queue[dict[str, Any] | None],
) -> None:
    final: dict[str, Any] = {}
    try:
        async for mode, chunk in graph.astream(
            turn_input(request),
            run_config(request.session),
            context=request.context,
            stream_mode=["updates", "messages", "values"],
        ):
            if mode == "values" and isinstance(chunk, dict):
                final = chunk  # the state after each step; the last one is the turn's result
                continue
            for event in _events(mode, chunk):
                queue.put_nowait(event)
        result = turn_result(request.session, final)
        await sessions.record_agents(request.session, result["agents"])
        queue.put_nowait({"event": "answer", "data": result})
    except Exception as exc:
        log.exception("streamed turn failed for session %s", request.session.session_id)
        queue.put_nowait({"event": "error", "data": {"message": describe_failure(exc)}})
    finally:
        queue.put_nowait(None)


def _events(mode: str, chunk: Any) -> list[dict[str, Any]]:
    if mode == "messages":
        message, metadata = chunk
        node = metadata.get("langgraph_node")
        if isinstance(message, AIMessageChunk) and node in ANSWER_NODES:
            text = message.content if isinstance(message.content, str) else ""
            if text:
                return [{"event": "token", "data": {"node": node, "text": text}}]
        return []
    events = []
    for node, update in (chunk or {}).items():
        events.append({"event": "node", "data": {"node": node}})
        if node == "route" and isinstance(update, dict) and update.get("route"):
            events.append({"event": "route", "data": update["route"]})
    return events


async def stream_turn(
    graph: SwitchyardGraph,
    sessions: SessionStore,
    request: TurnRequest,
    *,
    on_done: Any,
    tasks: set[asyncio.Task[None]],
) -> AsyncIterator[dict[str, Any]]:
    """Events of a turn: `route`, `node`, `token`, then `answer` (or `error`).

    `on_done` runs when the graph run finishes (it releases the session lock), whether or not
    anyone is still reading.
    """
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    task = asyncio.create_task(_produce(graph, sessions, request, queue))
    tasks.add(task)

    def finished(done: asyncio.Task[None]) -> None:
        tasks.discard(done)
        asyncio.ensure_future(on_done())

    task.add_done_callback(finished)
    while True:
        event = await queue.get()
        if event is None:
            return
        yield event


def describe_failure(exc: BaseException) -> str:
    """A message for a failed turn that names the failing dependency, without internals."""
    name = type(exc).__name__
    packages = {cls.__module__.split(".")[0] for cls in type(exc).__mro__}
    if packages & {"openai", "langchain_openai", "httpx", "ollama", "langchain_ollama"}:
        return f"The language model provider failed ({name}: {exc}); try again later."
    if "redis" in packages:
        return f"The checkpoint store (Redis) failed ({name}); the session keeps its last turn."
    return f"The turn failed ({name}); the session keeps its last completed turn."
