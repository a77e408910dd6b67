"""REST for test analysis: synchronous ``POST /api/v1/analyze`` and background ``/analyses``.

Both run the one graph (``plan_analysis -> parse_files ∥ check_rules ∥ review_with_llm[i] ->
synthesize_findings -> enhance_findings -> assure_quality``). Background analyses are owned by
the API key that submitted them: another key gets 404, as for an id that does not exist.
Errors are ``{"error": {"status", "message"}}`` (the app's handlers); bad input never reaches
the graph.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request, status
from sse_starlette.sse import EventSourceResponse

from agents.test_analysis.requests import AnalyzeRequest, prepare
from agents.test_analysis.results import AnalysisResponse
from agents.test_analysis.state import AGENT, STAGES, AnalysisMode, AnalysisRequestData
from app.analyses import analysis_input, config_of, progress_of, result_of_run, run_sync
from app.bodies import strict_json_route
from app.errors import (
    COMMON_ERRORS,
    SSE,
    DependencyUnavailable,
    error_responses,
)
from app.quotas import check_run_quota, check_thread_quota
from app.runs.executor import failure_of
from app.runs.store import TERMINAL, now_iso
from app.security import Caller, CallerDep
from app.services import Services, ServicesDep
from app.sessions import SESSION_ID_PATTERN
from tools.test_analysis.validation import AnalysisInputError

log = logging.getLogger(__name__)

# A file's content may hold text that is not Unicode: it is reported as that file's
# encoding-error finding, while the other files are analysed.
router = APIRouter(
    tags=["analysis"],
    route_class=strict_json_route("body.files[].content"),
    responses=COMMON_ERRORS,
)

AnalysisId = Annotated[
    str,
    Path(pattern=SESSION_ID_PATTERN, description="An analysis (thread) id from POST /analyses."),
]
#: How long one SSE read waits for new events before checking the analysis again.
EVENT_BLOCK_MS = 10_000


def _validated(
    services: Services, body: AnalyzeRequest
) -> tuple[AnalysisRequestData, AnalysisMode, list[str]]:
    settings = services.settings
    has_model = services.agents.llm(settings.analysis.llm_role) is not None
    try:
        return prepare(body, settings, has_model=has_model)
    except AnalysisInputError as exc:
        raise HTTPException(exc.status_code, exc.message) from None


@router.post(
    "/api/v1/analyze",
    response_model=AnalysisResponse,
    responses=error_responses(400, 413, 502, 504),
)
async def analyze(body: AnalyzeRequest, services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """Analyse files now and answer with the issues, a summary and metrics.

    For analyses longer than ANALYSIS_SYNC_TIMEOUT_SECONDS use POST /analyses.
    """
    analysis, _mode, _warnings = _validated(services, body)
    timeout = services.settings.analysis.sync_timeout_seconds
    try:
        return await run_sync(
            services.sync_graph,
            services.context(owner=who.owner),
            analysis,
            owner=who.owner,
            timeout=timeout,
        )
    except Exception as exc:
        failure = failure_of(exc, "analysis")  # a failed run's, or the missing result's
        error = failure.error
        if isinstance(error, AnalysisInputError):
            raise HTTPException(error.status_code, error.message) from None
        if failure.timed_out:
            raise HTTPException(
                status.HTTP_504_GATEWAY_TIMEOUT,
                f"The analysis took longer than {timeout:g} s (ANALYSIS_SYNC_TIMEOUT_SECONDS); "
                "submit it with POST /analyses to run it in the background.",
            ) from None
        if failure.dependency:
            raise DependencyUnavailable(failure.dependency, error) from error
        failure.log("synchronous analysis")
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, failure.message) from error


@router.post("/analyses", status_code=status.HTTP_202_ACCEPTED, responses=error_responses(400, 413))
async def submit(body: AnalyzeRequest, services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """Queue an analysis to run in the background; poll GET /analyses/{id} or stream /events."""
    analysis, mode, warnings = _validated(services, body)
    # A background analysis is a thread of its own and a run until it finishes.
    await check_thread_quota(services, who.owner)
    await check_run_quota(services, who.owner)
    thread_id = uuid.uuid4().hex
    # The analysis's checkpoints belong to a thread record like a chat's: without one, the id
    # would be an ownerless thread whose checkpoints another key could claim.
    thread = await services.sessions.create(
        who.owner, who.owner, now_iso(), thread_id=thread_id, metadata={"analysis": True}
    )
    await services.runs.submit(
        owner=who.owner,
        thread_id=thread.key,
        run_id=thread_id,
        run_input=analysis_input(analysis, thread_id=thread_id, user_id=who.owner),
        agent=AGENT,
        meta={"mode": mode, "files": len(analysis.get("files") or []), "warnings": warnings},
    )
    return {
        "thread_id": thread_id,
        "status": "queued",
        "mode": mode,
        "warnings": warnings,
        "links": {
            "self": f"/analyses/{thread_id}",
            "events": f"/analyses/{thread_id}/events",
            "cancel": f"/analyses/{thread_id}/cancel",
            "resume": f"/analyses/{thread_id}/resume",
        },
    }


async def _owned(services: Services, thread_id: str, who: Caller) -> dict[str, str]:
    record = await services.runs.get(thread_id)
    if record is None or record.get("owner") != who.owner or record.get("agent") != AGENT:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Analysis {thread_id!r} not found. Submit one with POST /analyses.",
        )
    return record


def _key_of(record: dict[str, str]) -> str:
    """The stored key of an analysis's thread (``<owner>:<id>``, :mod:`app.thread_ids`)."""
    return record.get("thread_id") or ""


@router.get("/analyses/{thread_id}", responses=error_responses(404))
async def get_analysis(
    thread_id: AnalysisId, services: ServicesDep, who: CallerDep
) -> dict[str, Any]:
    """Status (queued | running | done | failed | cancelled), stages and LLM batches done, and
    the result once done. Batches done counts reviews whose result is saved: a resumed run
    never redoes them."""
    record = await _owned(services, thread_id, who)
    state = record.get("status", "queued")
    meta = json.loads(record.get("meta") or "{}")
    body: dict[str, Any] = {
        "thread_id": thread_id,
        "status": state,
        "mode": meta.get("mode"),
        "files": int(meta.get("files") or 0),
        "stages_done": [],
        "batches": {"done": 0, "total": 0},
        "attempts": int(record.get("attempts") or 0),
        "worker": record.get("worker"),
        "cancel_requested": record.get("cancel_requested") == "1",
        "error": record.get("error") or None,
        "created_at": record.get("created_at"),
        "started_at": record.get("started_at"),
        "updated_at": record.get("updated_at"),
        "finished_at": record.get("finished_at"),
    }
    if state == "done" and record.get("result"):
        result = result_of_run(json.loads(record["result"]))
        body["result"] = result
        batches = int(result.get("metrics", {}).get("llm_batches", 0))
        body["batches"] = {"done": batches, "total": batches}
        # the metrics time every stage before the last, which assembles them
        timings = {**(result.get("metrics", {}).get("stage_ms") or {}), "assure_quality": 0}
        body["stages_done"] = [s for s in STAGES if s in timings]
        body["mode"] = result.get("mode") or body["mode"]
    elif record.get("started_at"):
        snapshot = await services.graph.aget_state(config_of(_key_of(record)), subgraphs=True)
        progress = progress_of(snapshot)
        body["stages_done"] = progress.stages
        body["batches"] = {"done": len(progress.batches_done), "total": progress.batches_total}
        body["mode"] = progress.mode or body["mode"]
    return body


@router.get(
    "/analyses/{thread_id}/events",
    response_class=EventSourceResponse,
    responses={200: SSE, **error_responses(404)},
)
async def analysis_events(
    request: Request, thread_id: AnalysisId, services: ServicesDep, who: CallerDep
) -> EventSourceResponse:
    """Server-Sent Events of an analysis: queued, started, stage, batch, then done | failed |
    cancelled (the stream ends there, unless the analysis was resumed since). Reconnect with
    Last-Event-ID to continue."""
    record = await _owned(services, thread_id, who)
    runs = services.runs
    last = request.headers.get("last-event-id") or "0-0"
    # Counted by batch id, starting from what is saved: a resumed run's replayed or redone
    # batches never count twice.
    progress = progress_of(
        await services.graph.aget_state(config_of(_key_of(record)), subgraphs=True)
    )
    stages, batches = list(progress.stages), set(progress.batches_done)

    def translate(event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if event == "node":
            node = data.get("node")
            if data.get("agent") != AGENT or node not in STAGES or node == "review_with_llm":
                return None
            if node not in stages:
                stages.append(node)
            return "stage", {"stage": node, "stages": list(stages)}
        if event == "progress":
            payload = data.get("data") or {}
            if data.get("agent") != AGENT or payload.get("analysis") != "batch":
                return None
            batches.add(str(payload.get("batch_id")))
            return "batch", {"batches_done": len(batches)}
        if event == "started":
            return event, {**data, "batches_done": len(batches)}
        if event == "done":
            result = result_of_run(data.get("result") or {})
            return event, {"status": "done", "summary": result.get("summary", {})}
        return event, data

    async def events() -> AsyncIterator[dict[str, str]]:
        nonlocal last
        while not await request.is_disconnected():
            batch = await runs.read_events(thread_id, last, block_ms=EVENT_BLOCK_MS)
            for event_id, event, raw in batch:
                last = event_id
                shown = translate(event, json.loads(raw))
                if shown is not None:
                    yield {"id": event_id, "event": shown[0], "data": json.dumps(shown[1])}
                # the end, unless the analysis was resumed since (then more events follow)
                if event in TERMINAL and not await runs.read_events(thread_id, last):
                    return
            if not batch:
                record = await runs.get(thread_id)
                if record is None or record.get("status") in TERMINAL:
                    # its events expired (or it ended without one): say how it ended
                    final = (record or {}).get("status", "expired")
                    yield {"event": final, "data": json.dumps({"status": final})}
                    return

    return EventSourceResponse(events(), ping=15)


@router.post(
    "/analyses/{thread_id}/cancel",
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(404, 409),
)
async def cancel_analysis(
    thread_id: AnalysisId, services: ServicesDep, who: CallerDep
) -> dict[str, Any]:
    """Cancel a queued or running analysis (a running one stops within one heartbeat)."""
    await _owned(services, thread_id, who)
    verdict = await services.runs.cancel(thread_id)
    if verdict == "cancelled":
        return {"thread_id": thread_id, "status": "cancelled", "cancel_requested": True}
    if verdict == "cancelling":
        return {
            "thread_id": thread_id,
            "status": "running",
            "cancel_requested": True,
            "message": "The worker running it stops within RUN_HEARTBEAT_SECONDS; its "
            "status then becomes cancelled. POST /analyses/{id}/resume continues it.",
        }
    raise HTTPException(
        status.HTTP_409_CONFLICT,
        f"Analysis {thread_id!r} is already {verdict}; only queued or running analyses can be "
        "cancelled.",
    )


@router.post(
    "/analyses/{thread_id}/resume",
    status_code=status.HTTP_202_ACCEPTED,
    responses=error_responses(404, 409),
)
async def resume_analysis(
    thread_id: AnalysisId, services: ServicesDep, who: CallerDep
) -> dict[str, Any]:
    """Queue a failed or cancelled analysis again; it continues from its last checkpoint
    (finished LLM batches are not redone)."""
    record = await _owned(services, thread_id, who)
    if record.get("status") in ("failed", "cancelled"):
        await check_run_quota(services, who.owner)
    verdict = await services.runs.resume(thread_id)
    if verdict == "queued":
        return {"thread_id": thread_id, "status": "queued"}
    hint = (
        f"its result is at GET /analyses/{thread_id}"
        if verdict == "done"
        else "wait for it to finish, or cancel it first"
    )
    raise HTTPException(
        status.HTTP_409_CONFLICT,
        f"Analysis {thread_id!r} is {verdict}; only failed or cancelled analyses can be "
        f"resumed ({hint}).",
    )
