"""`tools.background`: a task that swallows a cancel is cancelled again; one that swallows
every cancel is left after the bound, with an error naming it; a shutdown step that hangs or
fails is named in the log and the steps after it still run."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tools.background import bounded_step, stop_task, stop_tasks


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


async def test_a_shutdown_step_that_hangs_is_named_and_left(
    caplog: pytest.LogCaptureFixture,
) -> None:
    forever = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="tools.background"):
        assert await bounded_step(forever.wait(), what="the stores", timeout=0.2) is False
        assert await bounded_step(_fails(), what="the LLM clients", timeout=5) is False
        assert await bounded_step(asyncio.sleep(0), what="the worker", timeout=5) is True
    assert "shutdown: the stores took more than 0.2 s" in caplog.text
    assert "shutdown: the LLM clients failed: ValueError('closed twice')" in caplog.text


async def _fails() -> None:
    raise ValueError("closed twice")
