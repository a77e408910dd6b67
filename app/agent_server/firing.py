"""The handlers of the Agent Server API's scheduled jobs (:mod:`app.agent_server.jobs`).

Each is called by the scheduler at least once per due time (more after a crash) and makes its
effect once:

- ``cron``: submits the firing's run with a run id derived from the firing (uuid5 of the job
  and due time): a re-delivered firing finds that run and submits nothing. A refusal that may
  pass (the owner's runs quota, 429; a busy thread with ``reject``, 409) is retried by the
  scheduler; one that will not (404/422) skips this firing. A cron whose thread is gone (it
  expired) is deleted.
- ``run.delayed``: queues the pending run (once: :meth:`app.runs.store.RunStore.release_delayed`).
- ``thread.ttl``: deletes the thread (strategy ``delete``) or prunes it to its latest
  checkpoint (``keep_latest``); a busy thread is swept a minute later.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from fastapi import HTTPException

from app.agent_server.cron_store import CronStore, delete_cron
from app.agent_server.jobs import CRON, DELAYED_RUN, THREAD_TTL, cron_job_id
from app.agent_server.models import RunCreate
from app.agent_server.submit import submit_run
from app.agent_server.threads import delete_thread_data
from app.security import Caller
from app.services import Services
from app.thread_ids import client_thread_id
from tools.operations import EngineNotOpen
from tools.scheduler import Firing, Scheduler

log = logging.getLogger(__name__)

__all__ = ["cron_run_id", "register_jobs"]

#: Namespace of the run ids of cron firings.
CRON_RUNS = uuid.UUID("6f1b3c59-3a51-4c1e-9d4e-2f0b7a6c9e11")
#: HTTP statuses of a refusal that may pass if the firing is tried again later.
RETRYABLE = frozenset({409, 429, 503})
#: A busy thread's TTL sweep waits this long.
BUSY_RETRY = timedelta(minutes=1)


def cron_run_id(firing: Firing) -> str:
    """The run of one firing: the same for every delivery of that due time."""
    return str(uuid.uuid5(CRON_RUNS, firing.firing_id))


def register_jobs(services: Services) -> None:
    """Fire the Agent Server's job kinds in this process (no-op without the scheduler)."""
    try:
        scheduler = services.agents.engine(Scheduler)
    except EngineNotOpen:
        return

    async def fire_cron(firing: Firing) -> datetime | None:
        cron_id = str(firing.job.payload.get("cron_id"))
        record = await CronStore(services.stores.redis).get(cron_id)
        if record is None or not record.enabled:  # deleted or disabled meanwhile
            await scheduler.cancel(cron_job_id(cron_id))
            return None
        if record.thread_key and await services.sessions.get(record.thread_key) is None:
            # its thread expired (CHECKPOINT_TTL_MINUTES) or went without the API: the cron
            # goes with it, as it does when the thread is deleted
            log.warning("cron %s: its thread is gone; deleting the cron", cron_id)
            await delete_cron(services, record)
            return None
        run_id = cron_run_id(firing)
        if await services.runs.get(run_id) is not None:
            log.info("cron %s: firing %s was delivered before", cron_id, firing.firing_id)
            return None
        payload = {**record.payload, "metadata": {**record.metadata, "cron_id": cron_id}}
        if not record.thread_key:
            payload["on_completion"] = record.on_run_completed
        thread_id = client_thread_id(record.thread_key) if record.thread_key else None
        who = Caller(owner=record.owner, client="cron")
        try:
            await submit_run(
                services, who, RunCreate.model_validate(payload), thread_id=thread_id,
                run_id=run_id,
            )  # fmt: skip
        except HTTPException as exc:
            if exc.status_code in RETRYABLE:
                raise RuntimeError(f"cron {cron_id}: {exc.detail}") from None
            log.warning("cron %s: firing skipped: %s", cron_id, exc.detail)
        return None

    async def release_run(firing: Firing) -> datetime | None:
        await services.runs.release_delayed(str(firing.job.payload.get("run_id")))
        return None

    async def sweep_thread(firing: Firing) -> datetime | None:
        key = str(firing.job.payload.get("thread_key"))
        if await services.sessions.get(key) is None:
            return None
        busy = await services.runs.active_run_ids(key) or await services.sessions.is_running(key)
        if busy:
            return firing.now + BUSY_RETRY
        if firing.job.payload.get("strategy") == "keep_latest":
            await services.checkpointer.aprune([key], strategy="keep_latest")
        else:
            await delete_thread_data(services, key)
        return None

    scheduler.register(CRON, fire_cron)
    scheduler.register(DELAYED_RUN, release_run)
    scheduler.register(THREAD_TTL, sweep_thread)
