"""The Agent Server API's scheduled jobs: which kinds there are and how they are scheduled.

Three kinds, on the process's :class:`~tools.scheduler.Scheduler` (their handlers are in
:mod:`app.agent_server.firing`):

- ``run.delayed`` (job ``run:<run_id>``): a run created with ``after_seconds`` is stored pending
  and queued when due;
- ``cron`` (job ``cron:<cron_id>``): an enabled cron's next firing, a background run;
- ``thread.ttl`` (job ``thread-ttl:<thread key>``): a thread's ``ttl``, swept when due
  (``delete`` the thread, or ``keep_latest`` checkpoint).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import HTTPException, status

from app.services import Services
from tools.operations import EngineNotOpen
from tools.scheduler import Scheduler

__all__ = [
    "CRON",
    "DELAYED_RUN",
    "THREAD_TTL",
    "cancel_thread_ttl",
    "cron_job_id",
    "delay_run",
    "schedule_thread_ttl",
    "scheduler_of",
]

DELAYED_RUN = "run.delayed"
CRON = "cron"
THREAD_TTL = "thread.ttl"


def scheduler_of(services: Services) -> Scheduler:
    """The process's scheduler (503 naming the fix when its component is not open)."""
    try:
        return services.agents.engine(Scheduler)
    except EngineNotOpen:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "the scheduler is not open in this process (its component did not start); "
            "crons, after_seconds and thread ttl need it: check the start-up log",
        ) from None


def cron_job_id(cron_id: str) -> str:
    return f"cron:{cron_id}"


async def delay_run(services: Services, owner: str, run_id: str, after_seconds: float) -> None:
    """Queue the (stored, delayed) run ``run_id`` in ``after_seconds``."""
    due = datetime.now(UTC) + timedelta(seconds=after_seconds)
    await scheduler_of(services).schedule(
        f"run:{run_id}", kind=DELAYED_RUN, owner=owner, payload={"run_id": run_id}, due=due,
        quota=0,  # the runs quota (MAX_ACTIVE_RUNS_PER_OWNER) bounds these already
    )  # fmt: skip


def _ttl_job(thread_key: str) -> str:
    return f"thread-ttl:{thread_key}"


async def schedule_thread_ttl(
    services: Services, owner: str, thread_key: str, ttl: dict[str, Any]
) -> None:
    """Sweep the thread ``ttl["ttl"]`` minutes from now with ``ttl["strategy"]`` (replacing a
    TTL set before). The body was validated (:class:`app.agent_server.models.ThreadTTL`)."""
    due = datetime.now(UTC) + timedelta(minutes=float(ttl["ttl"]))
    payload = {"thread_key": thread_key, "strategy": ttl.get("strategy") or "delete"}
    await scheduler_of(services).schedule(
        _ttl_job(thread_key), kind=THREAD_TTL, owner=owner, payload=payload, due=due, quota=0
    )


async def cancel_thread_ttl(services: Services, thread_key: str) -> None:
    try:
        found = services.agents.engine(Scheduler)
    except EngineNotOpen:
        return
    await found.cancel(_ttl_job(thread_key))
