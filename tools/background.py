"""Stopping background tasks within a bound, whatever the libraries under them do with a cancel.

A single ``task.cancel()`` followed by ``await task`` waits forever when the task's loop goes on
after the cancel: redis-py turns a cancel that lands as its socket timeout fires into a
``TimeoutError`` (an ``OSError``) that a poller catches as "Redis unreachable", and Python
3.11's ``asyncio.wait_for`` returns a result instead of raising when its inner await finishes
with the cancel. Either way the app's shutdown never returned (a test's ``TestClient`` exit hung
until pytest-timeout). :func:`stop_task` cancels again while the task runs on and gives up,
logging what was left, after a bound; the loops also check a stop flag of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Iterable
from typing import Any

log = logging.getLogger(__name__)

#: How long one cancel is given before it is sent again.
RECANCEL_SECONDS = 0.5
#: Default bound on stopping one task.
STOP_TIMEOUT_SECONDS = 10.0


async def stop_task(
    task: asyncio.Future[Any] | None, *, what: str, timeout: float = STOP_TIMEOUT_SECONDS
) -> bool:
    """Cancel `task` (again every RECANCEL_SECONDS while it runs on) and wait up to `timeout`
    seconds for it to end; False, with an error naming `what`, when it did not. Its result or
    exception is consumed (a stopped task's error is not the caller's)."""
    if task is None:
        return True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not task.done():
        remaining = deadline - loop.time()
        if remaining <= 0:
            log.error(
                "%s did not stop within %.1f s of being cancelled; shutting down without it",
                what,
                timeout,
            )
            return False
        task.cancel()
        await asyncio.wait({task}, timeout=min(RECANCEL_SECONDS, remaining))
    with contextlib.suppress(BaseException):
        task.result()
    return True


async def stop_tasks(
    tasks: Iterable[asyncio.Future[Any]], *, what: str, timeout: float = STOP_TIMEOUT_SECONDS
) -> bool:
    """:func:`stop_task` for each of `tasks` at once; True when every one ended."""
    results = await asyncio.gather(*(stop_task(task, what=what, timeout=timeout) for task in tasks))
    return all(results)


async def bounded_step(step: Awaitable[Any], *, what: str, timeout: float) -> bool:
    """Run one shutdown step for up to `timeout` seconds; past that, it is stopped (as by
    :func:`stop_task`) with an error naming `what`, and False is returned. The step's own
    error is logged, not raised: the steps after it must still run."""
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        log.error("shutdown: %s took more than %.1f s; stopping it", what, timeout)
        await stop_task(task, what=what, timeout=RECANCEL_SECONDS * 4)
        return False
    if not task.cancelled() and task.exception() is not None:
        log.warning("shutdown: %s failed: %r", what, task.exception())
        return False
    return True
