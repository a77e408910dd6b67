"""The scheduler capability: jobs due at a time or on a cron, on Redis, fired once per due time
by one process among replicas (see :mod:`tools.scheduler.engine`)."""

from __future__ import annotations

from tools.scheduler.cron import ScheduleError, next_fire
from tools.scheduler.engine import Firing, Handler, Job, QuotaExceeded, Scheduler
from tools.scheduler.settings import SchedulerSettings

__all__ = [
    "Firing",
    "Handler",
    "Job",
    "QuotaExceeded",
    "ScheduleError",
    "Scheduler",
    "SchedulerSettings",
    "next_fire",
]
