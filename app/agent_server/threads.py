"""Agent Server API: threads (``/threads``), their state and history.

A thread is a chat session: ``POST /threads`` registers a thread that ``POST /chat`` can use
with ``session_id``, and a session started by ``/chat`` is listed, read and continued here.
Every operation is scoped to the caller's API key, and so are thread ids: ``t-1`` of one key
and ``t-1`` of another are two threads (stored under ``<owner>:t-1``, see
:mod:`app.thread_ids`); every answer shows the id the caller chose.

Over 400 lines because it is one resource's routes: every thread endpoint of the Agent Server API
(threads, their state and history) and the helpers they share.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Path, Query, Response, status
from langchain_core.runnables import RunnableConfig
from langgraph.errors import InvalidUpdateError
from langgraph.types import StateUpdate

from app.agent_server.access import (
    assistants,
    claim_thread,
    live_status,
    not_found,
    owned_thread,
    thread_view,
)
from app.agent_server.cron_store import delete_thread_crons
from app.agent_server.ids import thread_defaults
from app.agent_server.inputs import check_nodes, check_state_values, unprocessable
from app.agent_server.jobs import cancel_thread_ttl, schedule_thread_ttl, scheduler_of
from app.agent_server.models import (
    Checkpoint,
    HistoryRequest,
    StateAtCheckpoint,
    StateSelect,
    StateUpdateRequest,
    StateUpdateResult,
    Thread,
    ThreadCount,
    ThreadCreate,
    ThreadPatch,
    ThreadPrune,
    ThreadPruneResult,
    ThreadSearch,
    ThreadState,
    ThreadStatus,
)
from app.agent_server.state import checkpoint_view, select_state, snapshot_view
from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, error_responses
from app.quotas import check_metadata, check_run_input, check_thread_quota
from app.runs.store import now_iso
from app.security import ANONYMOUS, Caller, CallerDep
from app.serde import dumpb, jsonable
from app.services import Services, ServicesDep
from app.sessions import SESSION_ID_PATTERN, SessionInfo
from app.thread_ids import thread_key

router = APIRouter(tags=["threads"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

ThreadIdPath = Annotated[
    str, Path(pattern=SESSION_ID_PATTERN, description="A thread id (a chat session id).")
]
CheckpointPath = Annotated[
    str, Path(pattern=r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$", description="A checkpoint id.")
]


def json_response(
    body: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON answer serialised with :mod:`app.serde` (LangGraph's types included)."""
    return Response(dumpb(body), status_code, headers, media_type="application/json")


def busy(thread_id: str) -> HTTPException:
    return HTTPException(
        status.HTTP_409_CONFLICT,
        f"Thread {thread_id!r} is busy (a run or a chat turn is in progress); wait for it or "
        "cancel its runs first.",
    )


def thread_config(thread_id: str, checkpoint: Checkpoint | None = None) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint is not None:
        configurable["checkpoint_ns"] = checkpoint.checkpoint_ns
        if checkpoint.checkpoint_id:
            configurable["checkpoint_id"] = checkpoint.checkpoint_id
    return {"configurable": configurable}


async def _require_idle(services: Services, info: SessionInfo) -> None:
    if await live_status(services, info) == "busy":
        raise busy(info.session_id)


# --- create, read, update, delete, copy -----------------------------------------------------
@router.post("/threads", response_model=Thread, responses=error_responses(404, 409, 413))
async def create_thread(body: ThreadCreate, services: ServicesDep, who: CallerDep) -> Response:
    """Create a thread (``if_exists``: raise → 409, do_nothing → the existing thread).

    ``thread_id`` is the caller's own: another key's thread of that id changes nothing. An id
    whose checkpoints outlived the caller's record is answered 404 (never adopted). ``ttl``
    sweeps it ``ttl.ttl`` minutes from now (``delete`` it, or ``keep_latest`` checkpoint)."""
    if body.ttl is not None:
        scheduler_of(services)  # 503 before anything is created
    settings = services.settings
    check_metadata(settings, body.metadata)
    if body.supersteps:
        check_run_input(
            settings, [step.model_dump(mode="json") for step in body.supersteps], "supersteps"
        )
    sessions = services.sessions
    if body.thread_id is None or await sessions.get_owned(who.owner, body.thread_id) is None:
        await check_thread_quota(services, who.owner)
    user = who.owner if who.owner != ANONYMOUS else "anonymous"
    if body.thread_id:  # orphaned checkpoints under the caller's key: 404, as for no thread
        info, created = await claim_thread(
            services, who, user, now_iso(), body.thread_id, body.metadata
        )
    else:
        info, created = await services.sessions.create_if_absent(
            who.owner, user, now_iso(), thread_id=str(uuid.uuid4()), metadata=body.metadata
        )
    if not created:
        if body.if_exists == "raise":
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"Thread {info.session_id!r} already exists; use another thread_id or "
                "if_exists='do_nothing'.",
            )
        return json_response(await thread_view(services, info))
    if body.supersteps:
        try:
            await _apply_supersteps(services, info, body)
        except HTTPException:
            await services.sessions.delete(info.key)  # no half-made thread
            raise
    if body.ttl is not None:
        await schedule_thread_ttl(services, who.owner, info.key, body.ttl.model_dump())
    return json_response(await thread_view(services, info))


async def _apply_supersteps(services: Services, info: SessionInfo, body: ThreadCreate) -> None:
    graph = services.graph
    limit = services.settings.api.max_message_chars
    steps = []
    for s, step in enumerate(body.supersteps or []):
        updates = []
        for u, update in enumerate(step.updates):
            check_nodes(graph, [update.as_node], f"supersteps[{s}].updates[{u}].as_node")
            values = update.values
            if isinstance(values, dict):
                values = check_state_values(
                    graph, values, limit, f"supersteps[{s}].updates[{u}].values"
                )
            elif values is not None:
                raise unprocessable(f"supersteps[{s}].updates[{u}].values must be an object")
            updates.append(StateUpdate(values, update.as_node))
        steps.append(updates)
    try:
        await graph.abulk_update_state(thread_config(info.key), steps)
    except InvalidUpdateError as exc:
        await services.checkpointer.adelete_thread(info.key)
        raise unprocessable(f"supersteps could not be applied: {exc}") from None


@router.get("/threads/{thread_id}", response_model=Thread, responses=error_responses(404))
async def get_thread(
    thread_id: ThreadIdPath,
    services: ServicesDep,
    who: CallerDep,
    include: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    """A thread: metadata, status, and the values and interrupts of its latest checkpoint."""
    info = await owned_thread(services, thread_id, who)
    return json_response(await thread_view(services, info))


@router.patch(
    "/threads/{thread_id}",
    response_model=Thread,
    responses={
        204: {"description": "Updated (Prefer: return=minimal)."},
        **error_responses(404, 413),
    },
)
async def patch_thread(
    thread_id: ThreadIdPath,
    body: ThreadPatch,
    services: ServicesDep,
    who: CallerDep,
    prefer: Annotated[str | None, Header(max_length=64)] = None,
) -> Response:
    """Merge metadata into the thread's; ``ttl`` replaces its TTL (counted from now)."""
    info = await owned_thread(services, thread_id, who)
    if body.ttl is not None:
        await schedule_thread_ttl(services, who.owner, info.key, body.ttl.model_dump())
    merged = {**info.metadata, **(body.metadata or {})}
    if len(merged) > 64:
        raise unprocessable("a thread's metadata holds at most 64 keys")
    check_metadata(services.settings, merged, "the thread's metadata with this patch merged")
    await services.sessions.update(info, metadata=merged, updated_at=now_iso())
    if prefer and "return=minimal" in prefer:
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    return json_response(await thread_view(services, info))


@router.delete(
    "/threads/{thread_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404, 409),
)
async def delete_thread(thread_id: ThreadIdPath, services: ServicesDep, who: CallerDep) -> Response:
    """Delete the thread, its checkpoints and its runs (409 while it is busy)."""
    info = await owned_thread(services, thread_id, who)
    await _require_idle(services, info)
    await delete_thread_data(services, info.key)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def delete_thread_data(services: Services, key: str) -> None:
    """Delete the thread stored at ``key``: its crons, TTL, checkpoints, runs and record."""
    await delete_thread_crons(services, key)
    await cancel_thread_ttl(services, key)
    await services.checkpointer.adelete_thread(key)
    while run_ids := await services.runs.thread_run_ids(key, 0, 500):
        for run_id in run_ids:
            await services.runs.delete(run_id, key)
    await services.sessions.delete(key)


@router.post("/threads/{thread_id}/copy", response_model=Thread, responses=error_responses(404))
async def copy_thread(thread_id: ThreadIdPath, services: ServicesDep, who: CallerDep) -> Response:
    """A new thread with a copy of this thread's checkpoints and metadata."""
    info = await owned_thread(services, thread_id, who)
    await check_thread_quota(services, who.owner)
    copy = await services.sessions.create(
        who.owner, info.user_id, now_iso(), thread_id=str(uuid.uuid4()), metadata=info.metadata
    )
    await services.checkpointer.acopy_thread(info.key, copy.key)
    return json_response(await thread_view(services, copy))


# --- search, count, prune -------------------------------------------------------------------
def _matches(metadata: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return all(metadata.get(k) == v for k, v in (wanted or {}).items())


def _by_assistant(services: Services, wanted: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``graph_id`` that names an agent's assistant means the threads run with it.

    agent-chat-ui lists threads with ``metadata.graph_id`` = the Assistant ID it was given when
    that is a name (``assistant_id`` when it is a UUID); every thread's graph is
    ``switchyard``, but a run stamps the assistant it ran with (``assistant_id``), so an
    agent's name as the UI's assistant id lists the threads talked to through that agent.
    """
    if not wanted or "assistant_id" in wanted or not isinstance(wanted.get("graph_id"), str):
        return wanted
    for found in assistants(services):
        if found.agent is not None and wanted["graph_id"] == found.name:
            rest = {k: v for k, v in wanted.items() if k != "graph_id"}
            return {**rest, "assistant_id": found.assistant_id}
    return wanted


async def _candidates(
    services: Services,
    who: Caller,
    *,
    ids: list[str] | None,
    metadata: dict[str, Any] | None,
    status_filter: ThreadStatus | None,
    values: dict[str, Any] | None,
) -> list[tuple[SessionInfo, str]]:
    """The caller's threads that pass the filters, with their live status, oldest first."""
    metadata = _by_assistant(services, metadata)
    owned = await services.sessions.owned_ids(who.owner)
    if ids is not None:
        wanted = {thread_key(who.owner, i) for i in ids}
        owned = [i for i in owned if i in wanted]
    found: list[SessionInfo] = []
    gone: list[str] = []
    for start in range(0, len(owned), 500):
        chunk = owned[start : start + 500]
        for key, info in zip(chunk, await services.sessions.get_many(chunk), strict=True):
            if info is None:
                gone.append(key)
            elif _matches({**thread_defaults(), **info.metadata}, metadata):
                found.append(info)
    await services.sessions.forget(who.owner, gone)
    locked = await services.sessions.running([i.key for i in found])
    active = await services.runs.active_counts([i.key for i in found])
    out = []
    for info, held, waiting in zip(found, locked, active, strict=True):
        if waiting and not held:  # confirm (drops runs that ended without settling)
            waiting = len(await services.runs.active_run_ids(info.key))
        now = "busy" if held or waiting else info.status
        if status_filter is None or now == status_filter:
            out.append((info, now))
    if values:
        kept = []
        for info, now in out:
            snapshot = await services.graph.aget_state(thread_config(info.key))
            if _matches(jsonable(snapshot.values or {}), values):
                kept.append((info, now))
        out = kept
    return out


#: Thread views (each a checkpoint read) a search builds at once.
VIEW_CONCURRENCY = 16

_PATH_PART = re.compile(r"([A-Za-z0-9_-]+)|\[(-?\d+)\]")


def _extract(view: dict[str, Any], path: str) -> Any:
    """``values.messages[-1].content``-style paths into a thread view (None when absent)."""
    current: Any = view
    for key, index in _PATH_PART.findall(path.replace(".", " ")):
        if key:
            current = current.get(key) if isinstance(current, dict) else None
        elif isinstance(current, list):
            i = int(index)
            current = current[i] if -len(current) <= i < len(current) else None
        else:
            current = None
        if current is None:
            return None
    return current


@router.post("/threads/search", response_model=list[Thread])
async def search_threads(body: ThreadSearch, services: ServicesDep, who: CallerDep) -> Response:
    """The caller's threads matching metadata, status and values (exact matches per key),
    sorted and paged."""
    for alias, path in (body.extract or {}).items():
        if path.split(".", 1)[0].split("[", 1)[0] not in (
            "values",
            "metadata",
            "config",
            "interrupts",
        ):
            raise unprocessable(
                f"extract.{alias}: paths start with values, metadata, config or interrupts"
            )
    found = await _candidates(
        services,
        who,
        ids=body.ids,
        metadata=body.metadata,
        status_filter=body.status,
        values=body.values,
    )
    sort_by = body.sort_by or "created_at"
    descending = (body.sort_order or "desc") == "desc"

    def key(item: tuple[SessionInfo, str]) -> str:
        info, now = item
        return {
            "thread_id": info.session_id,
            "status": now,
            "created_at": info.created_at,
            "updated_at": info.updated_at,
            "state_updated_at": info.updated_at,
        }[sort_by]

    page = sorted(found, key=key, reverse=descending)[body.offset : body.offset + body.limit]
    select = set(body.select or [])
    with_values = not select or bool(select & {"values", "interrupts"}) or bool(body.extract)
    # A page may hold up to 1,000 threads, each view a checkpoint read: a bounded number at a
    # time, so one search cannot take every connection of the Redis pool (it raised "Too many
    # connections", answered 503, for a page of a few hundred).
    gate = asyncio.Semaphore(VIEW_CONCURRENCY)

    async def view_of(info: SessionInfo, now: str) -> dict[str, Any]:
        async with gate:
            return await thread_view(services, info, with_values=with_values, status_now=now)

    views = await asyncio.gather(*(view_of(i, s) for i, s in page))
    out = []
    for view in views:
        if body.extract:
            view["extracted"] = {a: _extract(view, p) for a, p in body.extract.items()}
        if select:
            view = {k: v for k, v in view.items() if k in select or k == "extracted"}
        out.append(view)
    return json_response(out)


@router.post("/threads/count", response_model=int)
async def count_threads(body: ThreadCount, services: ServicesDep, who: CallerDep) -> int:
    """How many of the caller's threads match the filters."""
    found = await _candidates(
        services, who, ids=None, metadata=body.metadata, status_filter=body.status,
        values=body.values,
    )  # fmt: skip
    return len(found)


@router.post("/threads/prune", response_model=ThreadPruneResult)
async def prune_threads(body: ThreadPrune, services: ServicesDep, who: CallerDep) -> Response:
    """Delete threads (``delete``) or their checkpoints but the latest (``keep_latest``);
    threads that are not the caller's or are busy are skipped."""
    pruned = 0
    for thread_id in dict.fromkeys(body.thread_ids):
        info = await services.sessions.get_owned(who.owner, thread_id)
        if info is None:
            continue
        if await live_status(services, info) == "busy":
            continue
        if body.strategy == "delete":
            await delete_thread_data(services, info.key)
        else:
            await services.checkpointer.aprune([info.key], strategy="keep_latest")
        pruned += 1
    return json_response({"pruned_count": pruned})


# --- state and history ----------------------------------------------------------------------
async def _state(
    services: Services,
    info: SessionInfo,
    checkpoint: Checkpoint | None,
    subgraphs: bool,
    select: list[str] | None,
) -> Response:
    config = thread_config(info.key, checkpoint)
    if checkpoint is not None and checkpoint.checkpoint_id:
        if await services.checkpointer.aget_tuple(config) is None:
            raise not_found(
                f"Checkpoint {checkpoint.checkpoint_id!r} of thread {info.session_id!r}",
                "List checkpoints with POST /threads/{thread_id}/history.",
            )
    snapshot = await services.graph.aget_state(config, subgraphs=subgraphs)
    return json_response(select_state(snapshot_view(snapshot), select))


@router.get(
    "/threads/{thread_id}/state", response_model=ThreadState, responses=error_responses(404)
)
async def get_state(
    thread_id: ThreadIdPath,
    services: ServicesDep,
    who: CallerDep,
    subgraphs: bool = False,
    select: Annotated[list[StateSelect] | None, Query(max_length=16)] = None,
) -> Response:
    """The thread's latest state (``subgraphs``: with the agents' states of pending tasks)."""
    info = await owned_thread(services, thread_id, who)
    return await _state(services, info, None, subgraphs, select)


@router.get(
    "/threads/{thread_id}/state/{checkpoint_id}",
    response_model=ThreadState,
    responses=error_responses(404),
)
async def get_state_at(
    thread_id: ThreadIdPath,
    checkpoint_id: CheckpointPath,
    services: ServicesDep,
    who: CallerDep,
    subgraphs: bool = False,
) -> Response:
    """The thread's state at one checkpoint."""
    info = await owned_thread(services, thread_id, who)
    return await _state(services, info, Checkpoint(checkpoint_id=checkpoint_id), subgraphs, None)


@router.post(
    "/threads/{thread_id}/state/checkpoint",
    response_model=ThreadState,
    responses=error_responses(404),
)
async def post_state_at(
    thread_id: ThreadIdPath, body: StateAtCheckpoint, services: ServicesDep, who: CallerDep
) -> Response:
    """The thread's state at a checkpoint given as an object."""
    info = await owned_thread(services, thread_id, who)
    return await _state(services, info, body.checkpoint, body.subgraphs, body.select)


@router.post(
    "/threads/{thread_id}/state",
    response_model=StateUpdateResult,
    responses=error_responses(404, 409, 413),
)
async def update_state(
    thread_id: ThreadIdPath, body: StateUpdateRequest, services: ServicesDep, who: CallerDep
) -> Response:
    """Update the state as if ``as_node`` had run (a new checkpoint; from ``checkpoint`` if
    given, which forks the thread there)."""
    info = await owned_thread(services, thread_id, who)
    graph = services.graph
    if body.as_node is not None:
        check_nodes(graph, [body.as_node], "as_node")
    if isinstance(body.values, list):
        raise unprocessable("values must be an object of state keys (or null)")
    check_run_input(services.settings, body.values, "values")
    values = body.values
    if values is not None:
        values = check_state_values(graph, values, services.settings.api.max_message_chars)
    checkpoint = body.checkpoint
    if body.checkpoint_id and checkpoint is None:
        checkpoint = Checkpoint(checkpoint_id=body.checkpoint_id)
    config = thread_config(info.key, checkpoint)
    if checkpoint is not None and checkpoint.checkpoint_id:
        if await services.checkpointer.aget_tuple(config) is None:
            raise not_found(f"Checkpoint {checkpoint.checkpoint_id!r}", "See the history.")
    lock = services.sessions.lock(info.key)
    if await services.runs.active_run_ids(info.key) or not await lock.acquire():
        raise busy(thread_id)
    try:
        updated = await graph.aupdate_state(config, values, as_node=body.as_node)
        snapshot = await graph.aget_state(thread_config(info.key))
        await services.sessions.update(
            info,
            updated_at=now_iso(),
            status="interrupted" if snapshot.next or snapshot.interrupts else "idle",
            error="",
        )
    except InvalidUpdateError as exc:
        raise unprocessable(f"the update cannot be applied: {exc}") from None
    finally:
        await lock.release()
    return json_response({"checkpoint": checkpoint_view(updated)})


async def _history(services: Services, info: SessionInfo, body: HistoryRequest) -> Response:
    before: RunnableConfig | None = None
    if body.before is not None:
        before_id = body.before if isinstance(body.before, str) else body.before.checkpoint_id
        if before_id:
            before = {"configurable": {"thread_id": info.key, "checkpoint_id": before_id}}
    config = thread_config(info.key, body.checkpoint)
    states = [
        select_state(snapshot_view(s), body.select)
        async for s in services.graph.aget_state_history(
            config, filter=body.metadata, before=before, limit=body.limit
        )
    ]
    return json_response(states)


@router.get(
    "/threads/{thread_id}/history",
    response_model=list[ThreadState],
    responses=error_responses(404),
)
async def get_history(
    thread_id: ThreadIdPath,
    services: ServicesDep,
    who: CallerDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    before: Annotated[str | None, Query(pattern=r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")] = None,
) -> Response:
    """The thread's checkpoints as states, newest first."""
    info = await owned_thread(services, thread_id, who)
    return await _history(services, info, HistoryRequest(limit=limit, before=before))


@router.post(
    "/threads/{thread_id}/history",
    response_model=list[ThreadState],
    responses=error_responses(404),
)
async def post_history(
    thread_id: ThreadIdPath, body: HistoryRequest, services: ServicesDep, who: CallerDep
) -> Response:
    """The thread's checkpoints as states, newest first, filtered by checkpoint metadata."""
    info = await owned_thread(services, thread_id, who)
    return await _history(services, info, body)
