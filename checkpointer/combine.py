"""Pending writes that ride along with the next put (async saver).

LangGraph saves a task's writes (`aput_writes`) as the task finishes and the next checkpoint
(`aput`) a moment later, at the end of the step; both go to the same thread. Instead of two
round trips, `aput_writes` parks its writes for up to `delay` seconds: the thread's next put
takes them into its own script call, else a timer sends them alone. `aput_writes` still returns
only once its writes are stored (or raises the error that stopped them), so durability is
unchanged; parallel tasks finishing together share one call as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Send = Callable[[Any, list[Any]], Awaitable[None]]


@dataclass
class Parked:
    """Writes of one thread waiting for a put (or the timer)."""

    thread_id: Any
    encoded: list[Any] = field(default_factory=list)
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None

    def done(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)

    def fail(self, exc: BaseException) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_exception(exc)


class WriteCombiner:
    def __init__(self, send: Send, delay: float) -> None:
        self._send = send
        self.delay = delay
        self._parked: dict[str, Parked] = {}
        self._sending: set[asyncio.Task[None]] = set()

    async def add(self, thread_id: Any, encoded: list[Any]) -> None:
        """Park `encoded` writes of `thread_id`; return once they are stored."""
        loop = asyncio.get_running_loop()
        key = str(thread_id)
        parked = self._parked.get(key)
        if parked is None:
            parked = self._parked[key] = Parked(thread_id)
            parked.timer = loop.call_later(self.delay, self._expire, key)
        parked.encoded.extend(encoded)
        waiter: asyncio.Future[None] = loop.create_future()
        parked.waiters.append(waiter)
        await waiter

    def take(self, thread_id: Any) -> Parked | None:
        """The writes parked for `thread_id`, for a put to store (it must call done/fail)."""
        parked = self._parked.pop(str(thread_id), None)
        if parked is not None and parked.timer is not None:
            parked.timer.cancel()
        return parked

    async def flush(self) -> None:
        """Send every parked write now (before operations that delete or copy threads)."""
        for key in list(self._parked):
            parked = self.take(key)
            if parked is not None:
                await self._deliver(parked)
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def _expire(self, key: str) -> None:
        parked = self._parked.pop(key, None)
        if parked is not None:
            task = asyncio.ensure_future(self._deliver(parked))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _deliver(self, parked: Parked) -> None:
        try:
            await self._send(parked.thread_id, parked.encoded)
        except BaseException as exc:  # handed to every waiter, who re-raises it
            parked.fail(exc)
        else:
            parked.done()
