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
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request, status
from sse_starlette.sse import EventSourceResponse

from agents.test_analysis.jobs import TERMINAL
from agents.test_analysis.lifecycle import jobs_for, sync_graph_for
from agents.test_analysis.requests import AnalyzeRequest, prepare
from agents.test_analysis.results import AnalysisResponse
from agents.test_analysis.runs import persisted_batches, run_sync
from agents.test_analysis.state import AnalysisMode, AnalysisRequestData
from agents.test_analysis.validation import AnalysisInputError
from graph.security import Caller, CallerDep
from graph.sessions import SESSION_ID_PATTERN
from graph.turns import describe_failure

log = logging.getLogger(__name__)

router = APIRouter(tags=["analysis"])

AnalysisId = Annotated[
    str,
    Path(pattern=SESSION_ID_PATTERN, description="An analysis (thread) id from POST /analyses."),
]
#: How long one SSE read waits for new events before checking the analysis again.
EVENT_BLOCK_MS = 10_000


def _services(request: Request) -> Any:
    return request.app.state.services


def _validated(
    request: Request, body: AnalyzeRequest
) -> tuple[AnalysisRequestData, AnalysisMode, list[str]]:
    services = _services(request)
    settings = services.settings
    has_model = services.deps.llm(settings.analysis_llm_role) is not None
    try:
        return prepare(body, settings, has_model=has_model)
    except AnalysisInputError as exc:
        raise HTTPException(exc.status_code, exc.message) from None


@router.post("/api/v1/analyze", response_model=AnalysisResponse)
async def analyze(request: Request, body: AnalyzeRequest, who: CallerDep) -> dict[str, Any]:
    """Analyse files now and answer with the issues, a summary and metrics.

    For analyses longer than ANALYSIS_SYNC_TIMEOUT_SECONDS use POST /analyses.
    """
    services = _services(request)
    analysis, _mode, _warnings = _validated(request, body)
    timeout = services.settings.analysis_sync_timeout_seconds
    try:
        return await run_sync(sync_graph_for(services), analysis, owner=who.owner, timeout=timeout)
    except AnalysisInputError as exc:
        raise HTTPException(exc.status_code, exc.message) from None
    except TimeoutError:
        raise HTTPException(
            status.HTTP_504_GATEWAY_TIMEOUT,
            f"The analysis took longer than {timeout:g} s (ANALYSIS_SYNC_TIMEOUT_SECONDS); "
            "submit it with POST /analyses to run it in the background.",
        ) from None
    except Exception as exc:
        log.exception("synchronous analysis failed")
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, describe_failure(exc)) from exc


@router.post("/analyses", status_code=status.HTTP_202_ACCEPTED)
async def submit(request: Request, body: AnalyzeRequest, who: CallerDep) -> dict[str, Any]:
    """Queue an analysis to run in the background; poll GET /analyses/{id} or stream /events."""
    analysis, mode, warnings = _validated(request, body)
    thread_id = await jobs_for(_services(request)).create(who.owner, analysis, mode)
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


async def _owned(request: Request, thread_id: str, who: Caller) -> dict[str, str]:
    record = await jobs_for(_services(request)).get(thread_id)
    if record is None or record.get("owner") != who.owner:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Analysis {thread_id!r} not found. Submit one with POST /analyses.",
        )
    return record


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


@router.get("/analyses/{thread_id}")
async def get_analysis(request: Request, thread_id: AnalysisId, who: CallerDep) -> dict[str, Any]:
    """Status (queued | running | done | failed | cancelled), stages and LLM batches done, and
    the result once done. Batches done counts reviews whose result is saved: a resumed run
    never redoes them."""
    record = await _owned(request, thread_id, who)
    state = record.get("status", "queued")
    done = _int(record.get("batches_done"))
    if state != "done" and record.get("started_at"):
        done = len(await persisted_batches(_services(request).checkpointer, thread_id))
    body: dict[str, Any] = {
        "thread_id": thread_id,
        "status": state,
        "mode": record.get("mode"),
        "files": _int(record.get("files")),
        "stages_done": json.loads(record.get("stages") or "[]"),
        "batches": {"done": done, "total": _int(record.get("batches_total"))},
        "attempts": _int(record.get("attempts")),
        "worker": record.get("worker"),
        "cancel_requested": record.get("cancel_requested") == "1",
        "error": record.get("error") or None,
        "created_at": record.get("created_at"),
        "started_at": record.get("started_at"),
        "updated_at": record.get("updated_at"),
        "finished_at": record.get("finished_at"),
    }
    if state == "done" and record.get("result"):
        body["result"] = json.loads(record["result"])
    return body


@router.get("/analyses/{thread_id}/events")
async def analysis_events(
    request: Request, thread_id: AnalysisId, who: CallerDep
) -> EventSourceResponse:
    """Server-Sent Events of an analysis: queued, started, stage, batch, then done | failed |
    cancelled (the stream ends there, unless the analysis was resumed since). Reconnect with
    Last-Event-ID to continue."""
    await _owned(request, thread_id, who)
    jobs = jobs_for(_services(request))
    last = request.headers.get("last-event-id") or "0-0"

    async def events() -> AsyncIterator[dict[str, str]]:
        nonlocal last
        while not await request.is_disconnected():
            batch = await jobs.read_events(thread_id, last, block_ms=EVENT_BLOCK_MS)
            for event_id, event, data in batch:
                last = event_id
                yield {"id": event_id, "event": event, "data": data}
                # the end, unless the analysis was resumed since (then more events follow)
                if event in TERMINAL and not await jobs.read_events(thread_id, last):
                    return
            if not batch:
                record = await jobs.get(thread_id)
                if record is None or record.get("status") in TERMINAL:
                    # its events expired (or it ended without one): say how it ended
                    final = (record or {}).get("status", "expired")
                    yield {"event": final, "data": json.dumps({"status": final})}
                    return

    return EventSourceResponse(events(), ping=15)


@router.post("/analyses/{thread_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
async def cancel_analysis(
    request: Request, thread_id: AnalysisId, who: CallerDep
) -> dict[str, Any]:
    """Cancel a queued or running analysis (a running one stops within one heartbeat)."""
    await _owned(request, thread_id, who)
    verdict = await jobs_for(_services(request)).cancel(thread_id)
    if verdict == "cancelled":
        return {"thread_id": thread_id, "status": "cancelled", "cancel_requested": True}
    if verdict == "cancelling":
        return {
            "thread_id": thread_id,
            "status": "running",
            "cancel_requested": True,
            "message": "The worker running it stops within ANALYSIS_HEARTBEAT_SECONDS; its "
            "status then becomes cancelled. POST /analyses/{id}/resume continues it.",
        }
    raise HTTPException(
        status.HTTP_409_CONFLICT,
        f"Analysis {thread_id!r} is already {verdict}; only queued or running analyses can be "
        "cancelled.",
    )


@router.post("/analyses/{thread_id}/resume", status_code=status.HTTP_202_ACCEPTED)
async def resume_analysis(
    request: Request, thread_id: AnalysisId, who: CallerDep
) -> dict[str, Any]:
    """Queue a failed or cancelled analysis again; it continues from its last checkpoint
    (finished LLM batches are not redone)."""
    await _owned(request, thread_id, who)
    verdict = await jobs_for(_services(request)).resume(thread_id)
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
