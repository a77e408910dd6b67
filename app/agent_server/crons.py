"""Agent Server API: crons (``/runs/crons``, ``/threads/{thread_id}/runs/crons``).

A cron runs an assistant on a schedule: a cron expression read in its ``timezone`` (UTC by
default), until its ``end_time``, while ``enabled``. Each firing is a normal background run
(:func:`app.agent_server.submit.submit_run`): on the cron's thread (visible in
``GET /threads/{thread_id}/runs``), or, for a stateless cron, on a new thread that is deleted
after the run unless ``on_run_completed`` is ``keep``. Firing is the scheduler's
(:mod:`tools.scheduler`): one process among the replicas fires each due time, a missed period
fires once on recovery, and a re-delivered firing finds the run it made (its run id is derived
from the firing).

Crons are the caller's own, like threads: another key's cron is answered 404 and never listed.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Response, status
from pydantic import ValidationError

from app.agent_server.access import assistant, not_found, owned_thread
from app.agent_server.cron_models import (
    RUN_FIELDS,
    Cron,
    CronCount,
    CronCreate,
    CronPatch,
    CronRun,
    CronSearch,
    ThreadCronCreate,
)
from app.agent_server.cron_store import (
    CronRecord,
    CronStore,
    arm,
    cron_view,
    delete_cron,
)
from app.agent_server.inputs import check_nodes, unprocessable
from app.agent_server.jobs import scheduler_of
from app.agent_server.models import RunCreate
from app.agent_server.submit import check_run_sizes
from app.agent_server.threads import json_response
from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, error_responses
from app.quotas import check_metadata, quota_exceeded
from app.runs.store import now_iso
from app.runs.webhooks import WebhookRejected, check_webhook_url
from app.security import Caller, CallerDep
from app.services import Services, ServicesDep
from app.thread_ids import thread_key
from tools.scheduler import ScheduleError
from tools.scheduler.cron import check_cron, zone

router = APIRouter(tags=["crons"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

CronIdPath = Annotated[
    str, Path(pattern=r"^[0-9A-Za-z-]{8,64}$", description="A cron id (a uuid).")
]
ThreadIdPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="A thread id.")]


def _utc_text(moment: datetime | None) -> str:
    """An end time as stored: ISO 8601 UTC (a time without a zone is read as UTC)."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


async def _check_run(services: Services, payload: dict[str, Any]) -> None:
    """What each firing will run, validated now (422/413 before the cron exists)."""
    try:
        body = RunCreate.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise unprocessable(f"{where}: {first['msg']}") from None
    assistant(services, body.assistant_id)
    check_run_sizes(services, body)
    check_nodes(services.graph, body.interrupt_before, "interrupt_before")
    check_nodes(services.graph, body.interrupt_after, "interrupt_after")
    if body.webhook is not None:
        try:
            await check_webhook_url(body.webhook, services.settings)
        except WebhookRejected as exc:
            raise unprocessable(f"webhook: {exc}") from None


def _check_schedule(record: CronRecord) -> None:
    try:
        record.schedule = check_cron(record.schedule)
        zone(record.timezone)
    except ScheduleError as exc:
        raise unprocessable(str(exc)) from None


def _payload(body: CronRun, assistant_id: str, extra: dict[str, Any]) -> dict[str, Any]:
    given = body.model_dump(mode="json", exclude_none=True, include=set(RUN_FIELDS))
    given.pop("metadata", None)  # the cron's metadata, given to each run
    return {**given, **extra, "assistant_id": assistant_id}


async def _create(
    services: Services, who: Caller, body: CronCreate | ThreadCronCreate, thread: str
) -> Response:
    scheduler_of(services)  # 503 before anything is stored
    check_metadata(services.settings, body.metadata)
    store = CronStore(services.stores.redis)
    limit = services.settings.quotas.max_crons_per_owner
    if await store.count(who.owner) >= limit:
        raise quota_exceeded(
            f"This API key holds {limit:,} crons, the quota (MAX_CRONS_PER_OWNER); delete one "
            "with DELETE /runs/crons/{cron_id} first"
        )
    extra = {"multitask_strategy": body.multitask_strategy} if body.multitask_strategy else {}
    payload = _payload(body, body.assistant_id, extra)
    await _check_run(services, payload)
    stamp = now_iso()
    record = CronRecord(
        cron_id=str(uuid.uuid4()),
        owner=who.owner,
        assistant_id=assistant(services, body.assistant_id).assistant_id,
        schedule=body.schedule,
        thread_key=thread,
        timezone=body.timezone or "UTC",
        end_time=_utc_text(body.end_time),
        enabled=body.enabled is not False,
        on_run_completed=getattr(body, "on_run_completed", "delete"),
        payload=payload,
        metadata=dict(body.metadata or {}),
        created_at=stamp,
        updated_at=stamp,
    )
    _check_schedule(record)
    await store.save(record)
    await arm(services, record)
    return json_response(await cron_view(services, record))


@router.post("/runs/crons", response_model=Cron, responses=error_responses(404, 413, 429))
async def create_cron(body: CronCreate, services: ServicesDep, who: CallerDep) -> Response:
    """A stateless cron: each firing runs on a new thread (deleted after the run unless
    ``on_run_completed`` is ``keep``)."""
    return await _create(services, who, body, "")


@router.post(
    "/threads/{thread_id}/runs/crons",
    response_model=Cron,
    responses=error_responses(404, 413, 429),
)
async def create_thread_cron(
    thread_id: ThreadIdPath, body: ThreadCronCreate, services: ServicesDep, who: CallerDep
) -> Response:
    """A cron on the caller's thread: each firing is a run on it (``multitask_strategy`` says
    what happens when the thread is busy; default ``enqueue``)."""
    info = await owned_thread(services, thread_id, who)
    return await _create(services, who, body, info.key)


async def _owned(services: Services, who: Caller, cron_id: str) -> CronRecord:
    found = await CronStore(services.stores.redis).get_owned(who.owner, cron_id)
    if found is None:
        raise not_found(f"Cron {cron_id!r}", "List your crons with POST /runs/crons/search.")
    return found


@router.get("/runs/crons/{cron_id}", response_model=Cron, responses=error_responses(404))
async def get_cron(cron_id: CronIdPath, services: ServicesDep, who: CallerDep) -> Response:
    """A cron, with its next run date (null when disabled or past its end time)."""
    return json_response(await cron_view(services, await _owned(services, who, cron_id)))


@router.patch("/runs/crons/{cron_id}", response_model=Cron, responses=error_responses(404, 413))
async def patch_cron(
    cron_id: CronIdPath, body: CronPatch, services: ServicesDep, who: CallerDep
) -> Response:
    """Change a cron: the fields given replace the cron's (``metadata`` is merged,
    ``end_time: null`` clears the end time); its next run date follows."""
    record = await _owned(services, who, cron_id)
    given = body.model_fields_set
    if body.metadata is not None:
        record.metadata = {**record.metadata, **body.metadata}
        check_metadata(services.settings, record.metadata)
    changes = _payload(body, record.assistant_id, {})
    if changes.keys() - {"assistant_id"}:
        record.payload = {**record.payload, **changes}
        await _check_run(services, record.payload)
    if body.schedule is not None:
        record.schedule = body.schedule
    if body.timezone is not None:
        record.timezone = body.timezone
    if "end_time" in given:
        record.end_time = _utc_text(body.end_time)
    if body.enabled is not None:
        record.enabled = body.enabled
    if body.on_run_completed is not None and not record.thread_key:
        record.on_run_completed = body.on_run_completed
    _check_schedule(record)
    record.updated_at = now_iso()
    await CronStore(services.stores.redis).save(record)
    # only a change of when re-arms the job: a due time that is being fired (or about to be)
    # is not skipped because the input or metadata changed
    if given & {"schedule", "timezone", "end_time", "enabled"}:
        await arm(services, record)
    return json_response(await cron_view(services, record))


@router.delete(
    "/runs/crons/{cron_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404),
)
async def delete_cron_route(cron_id: CronIdPath, services: ServicesDep, who: CallerDep) -> Response:
    """Delete a cron (a firing in progress still makes its run; none after)."""
    await delete_cron(services, await _owned(services, who, cron_id))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _matches(
    services: Services,
    who: Caller,
    record: CronRecord,
    assistant_id: str | None,
    thread_id: str | None,
    metadata: dict[str, Any] | None,
) -> bool:
    if assistant_id is not None:
        try:
            wanted = assistant(services, assistant_id).assistant_id
        except HTTPException:  # an unknown assistant matches no cron
            return False
        if record.assistant_id != wanted:
            return False
    if thread_id is not None and record.thread_key != thread_key(who.owner, thread_id):
        return False
    return all(record.metadata.get(k) == v for k, v in (metadata or {}).items())


@router.post("/runs/crons/search", response_model=list[Cron])
async def search_crons(body: CronSearch, services: ServicesDep, who: CallerDep) -> Response:
    """The caller's crons matching the filters (exact matches), sorted and paged."""
    owned = await CronStore(services.stores.redis).owned(who.owner)
    found = [
        r
        for r in owned
        if _matches(services, who, r, body.assistant_id, body.thread_id, body.metadata)
        and (body.enabled is None or r.enabled == body.enabled)
    ]
    views = [await cron_view(services, r) for r in found]
    views.sort(key=lambda v: str(v.get(body.sort_by) or ""), reverse=body.sort_order == "desc")
    page = views[body.offset : body.offset + body.limit]
    if body.select:
        page = [{k: v for k, v in view.items() if k in body.select} for view in page]
    return json_response(page)


@router.post("/runs/crons/count", response_model=int)
async def count_crons(body: CronCount, services: ServicesDep, who: CallerDep) -> int:
    """How many of the caller's crons match the filters."""
    owned = await CronStore(services.stores.redis).owned(who.owner)
    return sum(
        _matches(services, who, r, body.assistant_id, body.thread_id, body.metadata) for r in owned
    )
