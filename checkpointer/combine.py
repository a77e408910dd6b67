"""Pending writes that ride along with the next put (both savers).

LangGraph saves a task's writes (`put_writes`) as the task finishes and the next checkpoint
(`put`) a moment later, at the end of the step; both go to the same thread. Instead of two
round trips, `put_writes` parks its writes for up to `delay` seconds: the thread's next put
takes them into its own script call (`carried`), else they are sent alone. `put_writes` still
returns only once its writes are stored (or raises the error that stopped them), so durability
is unchanged; parallel tasks finishing together share one call as well.

A delay that runs out while a put of the same thread is in flight is extended: LangGraph calls
the step's put only once the previous one returned, so on a loaded machine (a round trip of a
few milliseconds) the writes would otherwise go alone just before the put that would have
carried them. They wait for that put to finish, then for `delay` again (`Parking.putting`).

The bookkeeping (`Parking`: park, take, settle) is shared; only the waiting differs. The async
saver waits on an asyncio future and a loop timer sends expired writes (`WriteCombiner`). The
sync saver runs in LangGraph's worker threads, which call `put_writes` and `put` from different
threads: there the parked caller waits on a `concurrent.futures.Future` with a timeout and, if no
put took its writes meanwhile, sends them itself (`ThreadWriteCombiner`), so no timer thread is
needed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

Waiter = asyncio.Future[None] | concurrent.futures.Future[None]
#: Puts in flight a parked sync writer waits out, at most, before sending its writes alone
#: (each wait is one put's round trip; the step's put follows within a couple).
MAX_DEFERRALS = 3


@dataclass
class Parked:
    """Writes of one thread waiting for a put (or their delay to run out)."""

    thread_id: Any
    encoded: list[Any] = field(default_factory=list)
    waiters: list[Waiter] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    #: The delay ran out while a put of the thread was in flight (async saver): the timer is
    #: armed again when that put finishes.
    deferred: bool = False

    def done(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)

    def fail(self, exc: BaseException) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_exception(exc)


@contextmanager
def carried(parked: Parked | None) -> Iterator[Sequence[Any]]:
    """The parked writes a put stores with its checkpoint (`()` if none); once the put
    returns or raises, their callers return or raise with it."""
    try:
        yield parked.encoded if parked is not None else ()
    except BaseException as exc:  # handed to every waiter, who re-raises it
        if parked is not None:
            parked.fail(exc)
        raise
    if parked is not None:
        parked.done()


def check_delay(delay: float) -> float:
    """A write delay in seconds: 0 (writes never wait) up to 1."""
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 1:
        raise ValueError(
            f"write_delay must be between 0 and 1 second (got {delay!r}); a few milliseconds "
            "lets a task's writes ride with the step's checkpoint, 0 sends them at once"
        )
    return float(delay)


class Parking:
    """Parked writes by thread. Thread-safe: the sync saver parks and takes from several
    threads (for the async saver the lock is never contended)."""

    def __init__(self) -> None:
        self._parked: dict[str, Parked] = {}
        self._lock = threading.Lock()
        #: Puts in flight per thread, and an event set when the thread has none (sync saver).
        self._busy: dict[str, int] = {}
        self._idle: dict[str, threading.Event] = {}

    @contextmanager
    def putting(self, thread_id: Any) -> Iterator[None]:
        """Marks a put of `thread_id` in flight while the block runs."""
        key = str(thread_id)
        with self._lock:
            self._busy[key] = self._busy.get(key, 0) + 1
            idle = self._idle.get(key)
            if idle is not None:
                idle.clear()
        try:
            yield
        finally:
            with self._lock:
                left = self._busy.pop(key) - 1
                if left:
                    self._busy[key] = left
                else:
                    idle = self._idle.pop(key, None)
                    if idle is not None:
                        idle.set()

    def busy(self, thread_id: Any) -> bool:
        """A put of `thread_id` is in flight."""
        with self._lock:
            return str(thread_id) in self._busy

    def idle_event(self, thread_id: Any) -> threading.Event | None:
        """An event set once no put of `thread_id` is in flight; None if none is now."""
        key = str(thread_id)
        with self._lock:
            if key not in self._busy:
                return None
            event = self._idle.get(key)
            if event is None:
                event = self._idle[key] = threading.Event()
            return event

    def defer(self, parked: Parked) -> None:
        """Mark `parked` as due again when the thread's put in flight finishes."""
        with self._lock:
            parked.timer, parked.deferred = None, True

    def is_deferred(self, thread_id: Any) -> bool:
        with self._lock:
            parked = self._parked.get(str(thread_id))
            return parked is not None and parked.deferred

    def deferred(self, thread_id: Any) -> Parked | None:
        """The thread's parked writes whose delay ran out during a put, now due again."""
        with self._lock:
            parked = self._parked.get(str(thread_id))
            if parked is None or not parked.deferred:
                return None
            parked.deferred = False
            return parked

    def park(self, thread_id: Any, encoded: list[Any], waiter: Waiter) -> tuple[Parked, bool]:
        """Add `encoded` (and the caller's `waiter`) to the thread's parked writes; True if
        they are the first ones parked (the caller then starts the delay)."""
        with self._lock:
            key = str(thread_id)
            parked = self._parked.get(key)
            first = parked is None
            if parked is None:
                parked = self._parked[key] = Parked(thread_id)
            parked.encoded.extend(encoded)
            parked.waiters.append(waiter)
            return parked, first

    def take(self, thread_id: Any) -> Parked | None:
        """The writes parked for `thread_id`, now owned by the caller (who must settle them:
        `carried`, or `deliver`)."""
        with self._lock:
            parked = self._parked.pop(str(thread_id), None)
        if parked is not None and parked.timer is not None:
            parked.timer.cancel()
        return parked

    def take_exactly(self, parked: Parked) -> bool:
        """Take `parked` if it is still waiting (no put or flush took it meanwhile)."""
        with self._lock:
            key = str(parked.thread_id)
            if self._parked.get(key) is not parked:
                return False
            del self._parked[key]
            return True

    def count(self, thread_id: Any) -> int:
        """How many encoded writes wait for a put of `thread_id`."""
        with self._lock:
            parked = self._parked.get(str(thread_id))
            return len(parked.encoded) // 3 if parked is not None else 0

    def take_all(self) -> list[Parked]:
        with self._lock:
            taken, self._parked = list(self._parked.values()), {}
        for parked in taken:
            if parked.timer is not None:
                parked.timer.cancel()
        return taken


class WriteCombiner:
    """Write combining for the async saver: `add` awaits; a loop timer sends expired writes."""

    def __init__(self, send: Callable[[Any, Sequence[Any]], Awaitable[None]], delay: float) -> None:
        self._send = send
        self.delay = check_delay(delay)
        self._parking = Parking()
        self._sending: set[asyncio.Task[None]] = set()

    async def add(self, thread_id: Any, encoded: list[Any]) -> None:
        """Park `encoded` writes of `thread_id`; return once they are stored."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        parked, first = self._parking.park(thread_id, encoded, waiter)
        if first:
            parked.timer = loop.call_later(self.delay, self._expire, parked)
        await waiter

    def take(self, thread_id: Any) -> Parked | None:
        """The writes parked for `thread_id`, for a put to store (see `carried`)."""
        return self._parking.take(thread_id)

    def parked(self, thread_id: Any) -> int:
        """How many writes of `thread_id` wait for its next put."""
        return self._parking.count(thread_id)

    def busy(self, thread_id: Any) -> bool:
        """A put of `thread_id` is in flight."""
        return self._parking.busy(thread_id)

    def waiting_for_put(self, thread_id: Any) -> bool:
        """The thread's parked writes ran out of delay during a put in flight: they are due
        again `delay` after it finishes (or go with the next put)."""
        return self._parking.is_deferred(thread_id)

    @contextmanager
    def putting(self, thread_id: Any) -> Iterator[None]:
        """Wraps a put of `thread_id`: writes whose delay runs out meanwhile wait for it, then
        for the delay again (the step's own put usually follows at once)."""
        with self._parking.putting(thread_id):
            yield
        if not self._parking.busy(thread_id):
            parked = self._parking.deferred(thread_id)
            if parked is not None:
                loop = asyncio.get_running_loop()
                parked.timer = loop.call_later(self.delay, self._expire, parked)

    async def flush(self) -> None:
        """Send every parked write now (before operations that delete or copy threads)."""
        for parked in self._parking.take_all():
            await self._deliver(parked)
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def _expire(self, parked: Parked) -> None:
        # Runs on the loop, as `putting` does: the put cannot finish between these lines.
        if self._parking.busy(parked.thread_id):
            self._parking.defer(parked)
            return
        if self._parking.take_exactly(parked):
            task = asyncio.ensure_future(self._deliver(parked))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _deliver(self, parked: Parked) -> None:
        try:
            with carried(parked):
                await self._send(parked.thread_id, parked.encoded)
        except Exception:  # the parked callers raise it
            pass


class ThreadWriteCombiner:
    """Write combining for the sync saver: the parked caller is its own timer."""

    def __init__(self, send: Callable[[Any, Sequence[Any]], None], delay: float) -> None:
        self._send = send
        self.delay = check_delay(delay)
        self._parking = Parking()

    def add(self, thread_id: Any, encoded: list[Any]) -> None:
        """Park `encoded` writes of `thread_id`; return once they are stored."""
        waiter: concurrent.futures.Future[None] = concurrent.futures.Future()
        parked, _first = self._parking.park(thread_id, encoded, waiter)
        done, _ = concurrent.futures.wait((waiter,), timeout=self.delay)
        # A put of the thread in flight: the step's own put follows it, wait for that one.
        for _ in range(MAX_DEFERRALS):
            idle = None if done else self._parking.idle_event(thread_id)
            if idle is None:
                break
            idle.wait()
            done, _ = concurrent.futures.wait((waiter,), timeout=self.delay)
        # No put took them in time: send them (with any parked beside them) ourselves, unless
        # a put or flush took them meanwhile; then wait for that one.
        if not done and self._parking.take_exactly(parked):
            self._deliver(parked)
        waiter.result()

    def take(self, thread_id: Any) -> Parked | None:
        """The writes parked for `thread_id`, for a put to store (see `carried`)."""
        return self._parking.take(thread_id)

    def parked(self, thread_id: Any) -> int:
        """How many writes of `thread_id` wait for its next put."""
        return self._parking.count(thread_id)

    def putting(self, thread_id: Any) -> AbstractContextManager[None]:
        """Wraps a put of `thread_id` (parked writers whose delay ran out wait for it)."""
        return self._parking.putting(thread_id)

    def flush(self) -> None:
        """Send every parked write now (before operations that delete or copy threads)."""
        for parked in self._parking.take_all():
            self._deliver(parked)

    def _deliver(self, parked: Parked) -> None:
        try:
            with carried(parked):
                self._send(parked.thread_id, parked.encoded)
        except Exception:  # the parked callers raise it
            pass
