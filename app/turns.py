"""Running one chat turn through the compiled graph: blocking, or as a stream of events.

A turn runs under the session's lock. Streaming runs the graph in a task of its own that feeds
a queue; the HTTP response only reads the queue, so a client that disconnects stops reading but
never cancels the run half-way: the turn completes, its checkpoints land, and the lock is
released when the run ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from agents.contract.context import RunContext
from app.runs.events import Event, EventMapper
from app.runs.executor import RunFailed, execute
from app.sessions import SessionInfo, SessionStore
from graph.registry import AgentRegistry
from graph.state import ChatInput
from graph.workflow import SwitchyardGraph

log = logging.getLogger(__name__)


@dataclass
class TurnRequest:
    """One user message for one session, and the run's context (services and options)."""

    session: SessionInfo
    message: str
    context: RunContext
    agent: str | None = None
    message_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The id of the turn's user message: how a saved turn is recognised after an error."""


def run_config(session: SessionInfo) -> RunnableConfig:
    return {
        "configurable": {"thread_id": session.key},
        "metadata": {"owner": session.owner, "session_id": session.session_id},
        "recursion_limit": 100,
    }


def turn_input(request: TurnRequest) -> ChatInput:
    payload: ChatInput = {
        "messages": [HumanMessage(request.message, id=request.message_id)],
        "user_id": request.session.user_id,
        "session_id": request.session.session_id,
    }
    if request.agent:
        payload["target_agent"] = request.agent
    return payload


def run_result(state: dict[str, Any]) -> dict[str, Any]:
    """What a finished turn produced: the answer, who answered and how, their data."""
    route = state.get("route") or {}
    answers = state.get("agent_answers") or {}
    ran = route.get("agents") or []
    data = {name: answers[name].get("data") or {} for name in ran if name in answers}
    methods = {name: answers[name].get("method") for name in ran if name in answers}
    return {
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


def turn_result(session: SessionInfo, state: dict[str, Any]) -> dict[str, Any]:
    """The API's view of a finished turn."""
    return {"session_id": session.session_id, **run_result(state)}


async def _bookkeep(sessions: SessionStore, request: TurnRequest, result: dict[str, Any]) -> None:
    """Note the agents a saved turn used; the turn is saved either way, so a failure here is
    logged, never answered as a failed turn."""
    try:
        await sessions.record_agents(request.session, result["agents"])
    except Exception as exc:
        log.warning("session %s: agents not recorded (%s)", request.session.session_id, exc)


async def saved_turn(graph: SwitchyardGraph, request: TurnRequest) -> dict[str, Any] | None:
    """The turn's result when its checkpoint was saved although the run raised (a connection
    dropped after the commit, say): the thread is idle and its last answer follows the turn's
    own message. None when the turn was not saved, or the store cannot be read either."""
    try:
        snapshot = await graph.aget_state(run_config(request.session))
    except Exception:
        return None
    messages = (snapshot.values or {}).get("messages") or []
    ids = [getattr(m, "id", None) for m in messages]
    if snapshot.next or request.message_id not in ids:
        return None
    if ids.index(request.message_id) == len(ids) - 1 or messages[-1].type != "ai":
        return None
    return turn_result(request.session, dict(snapshot.values))


async def run_turn(
    graph: SwitchyardGraph, sessions: SessionStore, request: TurnRequest
) -> dict[str, Any]:
    """Run a turn to completion (the caller holds the session lock). A turn whose checkpoint
    was saved is answered with its result even if the run raised after saving it; otherwise
    the run's :class:`RunFailed` propagates."""
    try:
        state = await execute(
            graph, turn_input(request), run_config(request.session), context=request.context
        )
        result = turn_result(request.session, state or {})
    except RunFailed:
        recovered = await saved_turn(graph, request)
        if recovered is None:
            raise
        log.warning(
            "session %s: the turn was saved before an error; answering it",
            request.session.session_id,
        )
        result = recovered
    await _bookkeep(sessions, request, result)
    return result


async def _produce(
    graph: SwitchyardGraph,
    registry: AgentRegistry,
    sessions: SessionStore,
    request: TurnRequest,
    queue: asyncio.Queue[Event | None],
) -> None:
    try:
        result = await _stream_into(graph, registry, request, queue)
        if result is not None:
            await _bookkeep(sessions, request, result)
            queue.put_nowait(("answer", json.dumps(result, default=str)))
    finally:
        queue.put_nowait(None)


async def _stream_into(
    graph: SwitchyardGraph,
    registry: AgentRegistry,
    request: TurnRequest,
    queue: asyncio.Queue[Event | None],
) -> dict[str, Any] | None:
    """Stream the turn's events into ``queue``; the turn's result, or None after an `error`
    event (a turn saved before the error is answered with its result)."""

    async def put(event: Event) -> None:
        queue.put_nowait(event)

    try:
        state = await execute(
            graph,
            turn_input(request),
            run_config(request.session),
            context=request.context,
            mapper=EventMapper.chat(registry.streams),
            sink=put,
        )
        return turn_result(request.session, state or {})
    except RunFailed as failed:
        recovered = await saved_turn(graph, request)
        if recovered is not None:
            return recovered
        failed.failure.log(f"turn of session {request.session.session_id}")
        queue.put_nowait(("error", json.dumps(failed.failure.event(), default=str)))
        return None


async def stream_turn(
    graph: SwitchyardGraph,
    registry: AgentRegistry,
    sessions: SessionStore,
    request: TurnRequest,
    *,
    on_done: Any,
    tasks: set[asyncio.Task[None]],
) -> AsyncIterator[Event]:
    """Events of a turn (name, JSON data): `route`, `node`, `progress`, `token`, then `answer`
    (or `error`); :mod:`app.runs.events` maps them from the graph's stream.

    `on_done` runs when the graph run finishes (it releases the session lock), whether or not
    anyone is still reading.
    """
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.create_task(_produce(graph, registry, sessions, request, queue))
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
