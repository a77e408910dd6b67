"""The scheduler component: the process's :class:`~tools.scheduler.Scheduler` and its runner.

At start-up (API and Studio) :func:`start_scheduler` makes the scheduler on the process's Redis,
provides it to the agents' services (``components.agents.engine(Scheduler)``: what other
components and the API register their kinds' handlers on and schedule with), starts the runner
loop unless SCHEDULER_ENABLED=false, and stops it at shutdown. The runner only claims kinds that
have a handler in this process, so handlers may be registered after it starts (their jobs are
claimed from the next poll), and a process without a kind's handler leaves its jobs to others.
"""

from __future__ import annotations

from typing import Any

from app.components.base import Component, Components
from tools.scheduler import Scheduler


async def start_scheduler(components: Components) -> None:
    """Make the scheduler, provide it, start its runner (SCHEDULER_ENABLED)."""
    settings = components.settings.scheduler
    scheduler = Scheduler(components.stores.redis, settings)
    components.agents.provide(scheduler)
    if settings.enabled:
        await scheduler.start()
        components.stack.push_async_callback(scheduler.stop)

    def snapshot() -> dict[str, Any]:
        return {
            "running": scheduler.running,
            "kinds": sorted(scheduler.handlers),
            "fired": scheduler.fired,
            "fired_by_kind": dict(scheduler.fired_by_kind),
            "failed": scheduler.failed,
        }

    components.metrics["scheduler"] = snapshot


#: The scheduler's part of the app: its engine (no operations or routes of its own).
COMPONENT = Component("scheduler", start_scheduler)
