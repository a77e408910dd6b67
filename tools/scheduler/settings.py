"""The scheduler's settings group (SCHEDULER_*: the runner loop, leases, batches, quotas).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tools.settings_group import SettingsGroup


class SchedulerSettings(SettingsGroup):
    """Scheduled jobs (crons, reminders, thread TTLs) on Redis (group `scheduler`)."""

    env_prefix: ClassVar[str] = "SCHEDULER_"

    enabled: bool = Field(
        True,
        description="Run the scheduler's runner loop in this process (due jobs are fired by "
        "whichever enabled process claims them first; false: this process only schedules).",
    )
    poll_seconds: float = Field(
        1.0,
        gt=0,
        le=60,
        description="How often the runner looks for due jobs (a job fires at most this late, "
        "unless it was scheduled in this process, which wakes the runner at once).",
    )
    lease_seconds: float = Field(
        30.0,
        ge=0.5,
        le=3600,
        description="How long a claimed job is held by the process firing it (renewed while it "
        "fires); a process that dies holding it lets another claim it after this long.",
    )
    batch_size: int = Field(
        100, ge=1, le=10_000, description="Most due jobs of one kind one runner claims at once."
    )
    max_attempts: int = Field(
        5,
        ge=1,
        le=100,
        description="Firings of one due time that may fail before it is given up (a cron then "
        "moves to its next time, a one-shot job is dropped).",
    )
    retry_seconds: float = Field(
        10.0, gt=0, le=86_400, description="Delay before a failed firing is tried again."
    )
    max_jobs_per_owner: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Most scheduled jobs of one kind one API key may hold (e.g. its crons).",
    )
