"""REST for chat sessions: `/chat`, `/chat/stream` (SSE) and `/session/{id}`.

Every session is a LangGraph thread. Ids are issued by the server (`POST /chat` without a
`session_id` starts one), or chosen by the client with `POST /threads`; an id is the caller's
own (stored under `<owner>:<id>`, :mod:`app.thread_ids`), so another API key's session of the
same id is simply not there: 404, as for an unknown id. A message to a session whose turn is
still running answers 409.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

from fastapi import APIRouter, HTTPException, Path, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from sse_starlette.sse import EventSourceResponse

from agents.contract.context import AgentOptions
from app.bodies import StrictJSONRoute
from app.errors import (
    COMMON_ERRORS,
    SSE,
    DependencyUnavailable,
    error_responses,
)
from app.quotas import check_thread_quota
from app.runs.executor import RunFailed
from app.security import ANONYMOUS, Caller, CallerDep
from app.services import Services, ServicesDep
from app.sessions import SESSION_ID_PATTERN, SessionInfo
from app.turns import TurnRequest, run_turn, stream_turn
from graph.nodes import now_iso

log = logging.getLogger(__name__)

SessionId = Annotated[
    str,
    Path(
        pattern=SESSION_ID_PATTERN,
        description="A session id: 8-64 letters, digits, '_' or '-'.",
    ),
]


class ChatMessage(BaseModel):
    """One user message (``options`` is added per deployment: see :func:`chat_router`)."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="The user's message.")
    session_id: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description="Continue this session; omit to start a new one.",
    )
    user_id: str | None = Field(
        default=None,
        max_length=128,
        pattern=r"^[\w.@+-]+$",
        description="The caller's own user id, stored with a new session.",
    )
    agent: str | None = Field(
        default=None,
        pattern=r"^[a-z_][a-z0-9_]{0,39}$",
        description="Ask for an agent by name instead of routing.",
    )
    options: AgentOptions | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain more than whitespace")
        return value


async def _owned_session(services: Services, session_id: str, who: Caller) -> SessionInfo:
    info = await services.sessions.get_owned(who.owner, session_id)
    if info is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Session {session_id!r} not found. Start a new one with POST /chat without a "
            "session_id.",
        )
    return info


async def _prepare(services: Services, body: ChatMessage, who: Caller) -> TurnRequest:
    limit = services.settings.api.max_message_chars
    if len(body.message) > limit:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"message is {len(body.message)} characters; the limit is {limit} (MAX_MESSAGE_CHARS).",
        )
    if body.agent and body.agent not in services.registry:
        known = ", ".join(services.registry.names)
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"Unknown agent {body.agent!r}; known: {known}."
        )
    if body.session_id:
        session = await _owned_session(services, body.session_id, who)
    else:
        await check_thread_quota(services, who.owner)
        user = body.user_id or (who.owner if who.owner != ANONYMOUS else "anonymous")
        session = await services.sessions.create(who.owner, user, now_iso())
    context = services.context(body.options, owner=who.owner)
    return TurnRequest(session, body.message, context, body.agent)


def _busy(session_id: str) -> HTTPException:
    return HTTPException(
        status.HTTP_409_CONFLICT,
        f"Session {session_id!r} is still answering the previous message; send this one when "
        "it has finished.",
    )


async def _release(lock: Any) -> None:
    try:
        await lock.release()
    except Exception as exc:  # expired or lost: the turn is over either way
        log.warning("session lock release failed: %s", exc)


async def answer_turn(services: Services, body: ChatMessage, who: Caller) -> dict[str, Any]:
    """One turn on the caller's session (a new one without ``session_id``), run to completion
    under the session's lock: ``POST /chat``, and the MCP ``chat`` tool (``app.mcp``).

    Refusals are :class:`HTTPException` (404 unknown session, 409 busy, 422, 429 quota, 502 the
    model failed); an outage is :class:`DependencyUnavailable`.
    """
    turn = await _prepare(services, body, who)
    lock = services.sessions.lock(turn.session.key)
    if not await lock.acquire():
        raise _busy(turn.session.session_id)
    try:
        return await run_turn(services.graph, services.sessions, turn)
    except RunFailed as failed:
        failure = failed.failure
        if failure.dependency:  # answered 503 by the app's handler, in one log line
            raise DependencyUnavailable(failure.dependency, failure.error) from failure.error
        failure.log(f"turn of session {turn.session.session_id}")
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, failure.message) from failure.error
    finally:
        await _release(lock)


def chat_router(options_model: type[AgentOptions]) -> APIRouter:
    """``POST /chat`` and ``/chat/stream``, whose ``options`` are the registered agents'."""
    router = APIRouter(tags=["chat"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)
    request_model: Any = create_model(
        "ChatRequest",
        __base__=ChatMessage,
        __doc__="One user message, with per-run option overrides.",
        options=(
            cast(Any, options_model | None),
            Field(None, description="Per-run overrides of the agents' settings."),
        ),
    )

    async def chat(
        body: request_model,
        services: ServicesDep,
        who: CallerDep,
    ) -> dict[str, Any]:
        """Send a message; the answer comes back when the turn is complete."""
        return await answer_turn(services, body, who)

    async def chat_stream(
        body: request_model,
        services: ServicesDep,
        who: CallerDep,
    ) -> EventSourceResponse:
        """Send a message; Server-Sent Events: `session`, `route`, `node`, `progress`, `token`,
        then `answer` (or `error`)."""
        turn = await _prepare(services, body, who)
        lock = services.sessions.lock(turn.session.key)
        if not await lock.acquire():
            raise _busy(turn.session.session_id)

        async def release() -> None:
            await _release(lock)

        async def events() -> AsyncIterator[dict[str, str]]:
            session = {"session_id": turn.session.session_id}
            yield {"event": "session", "data": json.dumps(session)}
            async for name, data in stream_turn(
                services.graph,
                services.registry,
                services.sessions,
                turn,
                on_done=release,
                tasks=services.background,
            ):
                yield {"event": name, "data": data}

        return EventSourceResponse(events(), ping=15)

    # The body's model is built here, so its annotation cannot be a name FastAPI resolves
    # from the module (annotations are strings under `from __future__ import annotations`).
    for endpoint in (chat, chat_stream):
        endpoint.__annotations__["body"] = request_model
    router.add_api_route(
        "/chat", chat, methods=["POST"], responses=error_responses(404, 409, 413, 502)
    )
    router.add_api_route(
        "/chat/stream",
        chat_stream,
        methods=["POST"],
        response_class=EventSourceResponse,
        responses={200: SSE, **error_responses(404, 409, 413)},
    )
    return router


sessions_router = APIRouter(tags=["chat"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)


@sessions_router.get("/session/{session_id}", responses=error_responses(404))
async def get_session(
    session_id: SessionId, services: ServicesDep, who: CallerDep
) -> dict[str, Any]:
    """A session's summary: turns, agents used, times and the last messages."""
    info = await _owned_session(services, session_id, who)
    snapshot = await services.graph.aget_state({"configurable": {"thread_id": info.key}})
    values = dict(snapshot.values or {})
    messages = values.get("messages", [])
    return {
        "session_id": session_id,
        "user_id": info.user_id,
        "turns": values.get("turn_count", 0),
        "agents_used": info.agents,
        "current_agent": values.get("current_agent"),
        "created_at": values.get("created_at") or info.created_at,
        "updated_at": values.get("updated_at") or info.created_at,
        "running": bool(snapshot.next) or await services.sessions.is_running(info.key),
        "last_messages": [_message_view(m) for m in messages[-10:]],
    }


def _message_view(message: Any) -> dict[str, Any]:
    content = message.content if isinstance(message.content, str) else str(message.content)
    return {
        "role": {"human": "user", "ai": "assistant"}.get(message.type, message.type),
        "content": content,
        "agent": getattr(message, "name", None),
        "id": message.id,
    }


@sessions_router.get("/session/{session_id}/history", responses=error_responses(404))
async def session_history(
    session_id: SessionId,
    services: ServicesDep,
    who: CallerDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The session's checkpoints, newest first: step, the node that wrote it, time."""
    info = await _owned_session(services, session_id, who)
    graph = services.graph
    snapshots = [
        s
        async for s in graph.aget_state_history(
            {"configurable": {"thread_id": info.key}}, limit=limit + 1
        )
    ]
    entries = []
    for i, snap in enumerate(snapshots[:limit]):
        parent = snapshots[i + 1] if i + 1 < len(snapshots) else None
        meta = snap.metadata or {}
        wrote = list(parent.next) if parent is not None else (["input"] if meta else [])
        entries.append(
            {
                "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
                "step": meta.get("step"),
                "source": meta.get("source"),
                "nodes": wrote,
                "next": list(snap.next),
                "created_at": snap.created_at,
            }
        )
    return {"session_id": session_id, "checkpoints": entries}


@sessions_router.delete(
    "/session/{session_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404, 409),
)
async def delete_session(session_id: SessionId, services: ServicesDep, who: CallerDep) -> Response:
    """Delete the session and every checkpoint of its thread."""
    info = await _owned_session(services, session_id, who)
    lock = services.sessions.lock(info.key)
    if not await lock.acquire():
        raise _busy(session_id)
    try:
        await services.checkpointer.adelete_thread(info.key)
        await services.sessions.delete(info.key)
    finally:
        await _release(lock)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
