"""Agent Server API: runs on threads (``/threads/{id}/runs...``) and stateless runs (``/runs...``).

Create a run in the background (``POST .../runs``, answered at once), streamed
(``.../runs/stream``, Server-Sent Events) or waited for (``.../runs/wait``, its final values);
then list, get, join (wait for the end), re-attach to its stream, cancel (``interrupt`` keeps
what it saved, ``rollback`` deletes it) or delete it. Answers carry ``Content-Location`` (the
run) and, for streams and waits, ``Location`` (where to re-attach).

Over 400 lines because it is one resource's routes: every run endpoint of the Agent Server API
(threaded, stateless, batch, join, cancel) and the small helpers they share.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Body, Header, HTTPException, Path, Query, Response, status
from fastapi.responses import StreamingResponse
from sse_starlette.sse import EventSourceResponse

from app.agent_server.access import owned_run, owned_thread
from app.agent_server.models import Run, RunCreate, RunsCancel, RunStatus
from app.agent_server.streams import (
    LAST_EVENT_ID,
    event_stream,
    start_after,
    thread_stream,
    wait_body,
)
from app.agent_server.submit import Submitted, cancel_run, check_run_sizes, submit_run
from app.agent_server.threads import json_response
from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, SSE, error_responses
from app.quotas import check_run_quota, check_thread_quota
from app.runs.store import TERMINAL
from app.runs.views import agent_status, run_view
from app.security import Caller, CallerDep
from app.services import Services, ServicesDep
from app.sessions import SESSION_ID_PATTERN

router = APIRouter(tags=["runs"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

ThreadIdPath = Annotated[str, Path(pattern=SESSION_ID_PATTERN, description="A thread id.")]
RunIdPath = Annotated[str, Path(pattern=SESSION_ID_PATTERN, description="A run id.")]
LastEventId = Annotated[
    str | None,
    Header(
        alias="Last-Event-ID",
        pattern=LAST_EVENT_ID,
        description="Replay the events after this id (resumable runs); -1 from the start.",
    ),
]
OUTPUT = {
    "description": "The run's final values; with `__interrupt__` when it stopped at an "
    "interrupt, or `{'__error__': {error, message}}` when it failed.",
    "content": {"application/json": {"schema": {"type": "object"}}},
}
StreamModeQuery = Annotated[
    list[str] | None,
    Query(max_length=9, description="Only these stream modes (default: all of the run's)."),
]


def _locations(run: Submitted, tail: str) -> dict[str, str]:
    base = f"/threads/{run.thread_id}/runs/{run.run_id}"
    return {"Location": f"{base}/{tail}", "Content-Location": base}


async def _create(
    services: Services, who: Caller, body: RunCreate, thread_id: str | None
) -> Response:
    run = await submit_run(services, who, body, thread_id=thread_id)
    location = f"/threads/{run.thread_id}/runs/{run.run_id}"
    return json_response(run_view(run.run_id, run.record), headers={"Content-Location": location})


async def _stream(
    services: Services, who: Caller, body: RunCreate, thread_id: str | None
) -> EventSourceResponse:
    run = await submit_run(services, who, body, thread_id=thread_id)
    events = event_stream(
        services,
        run.run_id,
        run.thread_key,
        resumable=run.resumable,
        cancel_on_disconnect=body.on_disconnect == "cancel",
    )
    return EventSourceResponse(events, ping=5, headers=_locations(run, "stream"))


async def _wait(
    services: Services, who: Caller, body: RunCreate, thread_id: str | None
) -> StreamingResponse:
    run = await submit_run(services, who, body, thread_id=thread_id)
    content = wait_body(
        services, run.run_id, run.thread_key, cancel_on_disconnect=body.on_disconnect == "cancel"
    )
    return StreamingResponse(
        content, media_type="application/json", headers=_locations(run, "join")
    )


# --- on a thread ----------------------------------------------------------------------------
CREATE_ERRORS = error_responses(404, 409, 413)


@router.post("/threads/{thread_id}/runs", response_model=Run, responses=CREATE_ERRORS)
async def create_run(
    thread_id: ThreadIdPath, body: RunCreate, services: ServicesDep, who: CallerDep
) -> Response:
    """Start a run in the background; follow it with join, its stream, or GET."""
    return await _create(services, who, body, thread_id)


@router.post(
    "/threads/{thread_id}/runs/stream",
    response_class=EventSourceResponse,
    responses={200: SSE, **CREATE_ERRORS},
)
async def stream_run(
    thread_id: ThreadIdPath, body: RunCreate, services: ServicesDep, who: CallerDep
) -> EventSourceResponse:
    """Start a run and stream its events (``stream_mode``) as Server-Sent Events."""
    return await _stream(services, who, body, thread_id)


@router.post(
    "/threads/{thread_id}/runs/wait",
    response_class=StreamingResponse,
    responses={200: OUTPUT, **CREATE_ERRORS},
)
async def wait_run(
    thread_id: ThreadIdPath, body: RunCreate, services: ServicesDep, who: CallerDep
) -> StreamingResponse:
    """Start a run and answer with its final values when it ends."""
    return await _wait(services, who, body, thread_id)


@router.get("/threads/{thread_id}/runs", response_model=list[Run], responses=error_responses(404))
async def list_runs(
    thread_id: ThreadIdPath,
    services: ServicesDep,
    who: CallerDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    status_: Annotated[RunStatus | None, Query(alias="status")] = None,
    select: Annotated[list[str] | None, Query(max_length=16)] = None,
) -> Response:
    """The thread's runs, newest first."""
    info = await owned_thread(services, thread_id, who)
    ids = await services.runs.thread_run_ids(info.key, 0, 100_000)
    records = await services.runs.get_many(ids)
    views = [
        run_view(run_id, record)
        for run_id, record in zip(ids, records, strict=True)
        if record is not None
        and record.get("owner") == who.owner
        and (status_ is None or agent_status(record) == status_)
    ][offset : offset + limit]
    if select:
        views = [{k: v for k, v in view.items() if k in select} for view in views]
    return json_response(views)


@router.get(
    "/threads/{thread_id}/runs/{run_id}", response_model=Run, responses=error_responses(404)
)
async def get_run(
    thread_id: ThreadIdPath, run_id: RunIdPath, services: ServicesDep, who: CallerDep
) -> Response:
    """A run: status (pending, running, success, error, timeout, interrupted), metadata,
    what it was asked to do."""
    _, record = await owned_run(services, thread_id, run_id, who)
    return json_response(run_view(run_id, record))


@router.delete(
    "/threads/{thread_id}/runs/{run_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404, 409),
)
async def delete_run(
    thread_id: ThreadIdPath, run_id: RunIdPath, services: ServicesDep, who: CallerDep
) -> Response:
    """Delete a finished run (409 while it is pending or running: cancel it first)."""
    info, record = await owned_run(services, thread_id, run_id, who)
    if record.get("status") not in TERMINAL:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"Run {run_id!r} is {agent_status(record)}; cancel it first, then delete it.",
        )
    await services.runs.delete(run_id, info.key)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/threads/{thread_id}/runs/{run_id}/join",
    response_class=StreamingResponse,
    responses={200: OUTPUT, **error_responses(404)},
)
async def join_run(
    thread_id: ThreadIdPath,
    run_id: RunIdPath,
    services: ServicesDep,
    who: CallerDep,
    cancel_on_disconnect: bool = False,
) -> StreamingResponse:
    """Wait for the run to end; answer with its final values."""
    info, _ = await owned_run(services, thread_id, run_id, who)
    base = f"/threads/{thread_id}/runs/{run_id}"
    return StreamingResponse(
        wait_body(services, run_id, info.key, cancel_on_disconnect=cancel_on_disconnect),
        media_type="application/json",
        headers={"Location": f"{base}/join", "Content-Location": base},
    )


@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=EventSourceResponse,
    responses={200: SSE, **error_responses(404)},
)
async def join_run_stream(
    thread_id: ThreadIdPath,
    run_id: RunIdPath,
    services: ServicesDep,
    who: CallerDep,
    last_event_id: LastEventId = None,
    stream_mode: StreamModeQuery = None,
    cancel_on_disconnect: bool = False,
) -> EventSourceResponse:
    """Re-attach to a run's stream: new events, or with ``Last-Event-ID`` (runs created with
    ``stream_resumable``) the events after that id."""
    info, record = await owned_run(services, thread_id, run_id, who)
    meta = json.loads(record.get("meta") or "{}")
    resumable = bool(meta.get("resumable"))
    after = await start_after(services, run_id, last_event_id if resumable else None)
    modes = _modes(stream_mode)
    base = f"/threads/{thread_id}/runs/{run_id}"
    return EventSourceResponse(
        event_stream(
            services,
            run_id,
            info.key,
            after=after,
            resumable=resumable,
            modes=modes,
            cancel_on_disconnect=cancel_on_disconnect,
        ),
        ping=5,
        headers={"Location": f"{base}/stream", "Content-Location": base},
    )


def _modes(stream_mode: list[str] | None) -> set[str] | None:
    """``stream_mode`` as the SDK sends it: repeated, or one JSON list."""
    if not stream_mode:
        return None
    modes: set[str] = set()
    for value in stream_mode:
        if not value:  # the SDK sends `stream_mode=` for "all"
            continue
        if value.startswith("["):
            try:
                modes.update(str(m) for m in json.loads(value))
            except ValueError:
                pass
        else:
            modes.add(value)
    if "messages-tuple" in modes:
        modes.add("messages")
    return modes or None


@router.get(
    "/threads/{thread_id}/stream",
    response_class=EventSourceResponse,
    responses={200: SSE, **error_responses(404)},
)
async def join_thread_stream(
    thread_id: ThreadIdPath,
    services: ServicesDep,
    who: CallerDep,
    stream_mode: StreamModeQuery = None,
) -> EventSourceResponse:
    """The events of the thread's runs from now on (the running one, then the queued ones),
    until the thread has no run left (``stream_mode``: ``run_modes`` or a list of modes)."""
    info = await owned_thread(services, thread_id, who)
    modes = _modes([m for m in stream_mode or [] if m != "run_modes"])
    return EventSourceResponse(thread_stream(services, info.key, modes), ping=5)


@router.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    status_code=status.HTTP_202_ACCEPTED,
    response_class=Response,
    responses={
        200: OUTPUT,
        202: {"description": "Cancel requested (without wait)."},
        **error_responses(404, 409),
    },
)
async def cancel(
    thread_id: ThreadIdPath,
    run_id: RunIdPath,
    services: ServicesDep,
    who: CallerDep,
    wait: bool = False,
    action: Annotated[str, Query(pattern="^(interrupt|rollback)$")] = "interrupt",
) -> Response:
    """Cancel a pending or running run: ``interrupt`` keeps what it saved, ``rollback``
    deletes the run and its checkpoints. A running run stops within RUN_HEARTBEAT_SECONDS;
    with ``wait`` the answer comes when it has."""
    info, record = await owned_run(services, thread_id, run_id, who)
    verdict = await cancel_run(services, run_id, info.key, action)
    if verdict not in ("cancelled", "cancelling"):
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"Run {run_id!r} is already {agent_status(record)}; only pending or running runs "
            "can be cancelled.",
        )
    if not wait:
        return Response(status_code=status.HTTP_202_ACCEPTED)
    base = f"/threads/{thread_id}/runs/{run_id}"
    return StreamingResponse(
        wait_body(services, run_id, info.key),
        media_type="application/json",
        headers={"Location": f"{base}/join", "Content-Location": base},
    )


# --- stateless (a temporary thread) -----------------------------------------------------------
@router.post("/runs", response_model=Run, responses=CREATE_ERRORS)
async def create_stateless_run(body: RunCreate, services: ServicesDep, who: CallerDep) -> Response:
    """Start a run on a new temporary thread (deleted when the run ends, unless
    ``on_completion='keep'``)."""
    return await _create(services, who, body, None)


@router.post(
    "/runs/stream", response_class=EventSourceResponse, responses={200: SSE, **CREATE_ERRORS}
)
async def stream_stateless_run(
    body: RunCreate, services: ServicesDep, who: CallerDep
) -> EventSourceResponse:
    """A run on a temporary thread, streamed."""
    return await _stream(services, who, body, None)


@router.post(
    "/runs/wait", response_class=StreamingResponse, responses={200: OUTPUT, **CREATE_ERRORS}
)
async def wait_stateless_run(
    body: RunCreate, services: ServicesDep, who: CallerDep
) -> StreamingResponse:
    """A run on a temporary thread; the answer is its final values."""
    return await _wait(services, who, body, None)


@router.post("/runs/batch", response_model=list[Run], responses=CREATE_ERRORS)
async def create_run_batch(
    body: Annotated[list[RunCreate], Body(min_length=1, max_length=100)],
    services: ServicesDep,
    who: CallerDep,
) -> Response:
    """Several stateless background runs (at most 100). Each run counts toward the rate limit
    and the quotas (threads, active runs): a batch that does not fit is refused whole, before
    any of its runs is queued."""
    # The request itself was counted once by the caller dependency; its other runs count now.
    if len(body) > 1:
        await services.rate_limiter.check(who.client, cost=len(body) - 1)
    for item in body:
        check_run_sizes(services, item)
    await check_thread_quota(services, who.owner, adding=len(body))
    await check_run_quota(services, who.owner, adding=len(body))
    runs = [await submit_run(services, who, item, thread_id=None) for item in body]
    return json_response([run_view(r.run_id, r.record) for r in runs])


@router.post(
    "/runs/cancel",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=error_responses(404),
)
async def cancel_runs(
    body: RunsCancel,
    services: ServicesDep,
    who: CallerDep,
    action: Annotated[str, Query(pattern="^(interrupt|rollback)$")] = "interrupt",
) -> Response:
    """Cancel runs: of one thread (``thread_id`` and ``run_ids``), or every pending and/or
    running run of the caller (``status``)."""
    if body.status is not None:
        if body.thread_id or body.run_ids:
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT,
                "send either status, or thread_id and run_ids, not both",
            )
        wanted = {"pending": ("queued",), "running": ("running",)}.get(
            body.status, ("queued", "running")
        )
        for key in await services.sessions.owned_ids(who.owner):
            for run_id in await services.runs.active_run_ids(key):
                record = await services.runs.get(run_id)
                if record and record.get("owner") == who.owner and record.get("status") in wanted:
                    await cancel_run(services, run_id, key, action)
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    if not body.thread_id or not body.run_ids:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "send thread_id and run_ids (or a status to cancel all such runs)",
        )
    info = await owned_thread(services, body.thread_id, who)
    for run_id in body.run_ids:
        await owned_run(services, body.thread_id, run_id, who)
    for run_id in body.run_ids:
        await cancel_run(services, run_id, info.key, action)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


__all__ = ["router"]
