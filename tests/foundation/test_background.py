"""`tools.background.stop_task`: a task that swallows a cancel is cancelled again; one that
swallows every cancel is left after the bound, with an error naming it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tools.background import stop_task, stop_tasks


async def _swallowing(times: int, started: asyncio.Event) -> str:
    """Goes on after the first `times` cancels, as a loop does whose library turned a cancel
    into an error it retries on."""
    started.set()
    swallowed = 0
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            swallowed += 1
            if swallowed > times:
                raise


async def test_a_swallowed_cancel_is_sent_again() -> None:
    started = asyncio.Event()
    task = asyncio.create_task(_swallowing(2, started))
    await started.wait()
    assert await asyncio.wait_for(stop_task(task, what="the poller"), 10) is True
    assert task.cancelled()


async def test_a_task_that_never_stops_is_left_after_the_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    released = asyncio.Event()

    async def stubborn() -> None:
        while not released.is_set():
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    with caplog.at_level(logging.ERROR, logger="tools.background"):
        assert await stop_task(task, what="the stubborn poller", timeout=0.3) is False
    assert "the stubborn poller did not stop within 0.3 s" in caplog.text
    assert not task.done()
    released.set()
    task.cancel()
    await task


async def test_several_tasks_and_finished_ones() -> None:
    async def fails() -> None:
        raise ValueError("a stopped task's error is not the caller's")

    done = asyncio.create_task(fails())
    await asyncio.sleep(0)
    started = asyncio.Event()
    running = asyncio.create_task(_swallowing(1, started))
    await started.wait()
    assert await stop_tasks([done, running], what="a sender") is True
    assert await stop_task(None, what="nothing") is True
