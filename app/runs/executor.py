"""The one run executor: every run of the graph (a chat turn, an analysis, a coding or analytics
request, a background or Agent Server run) goes through :func:`execute`.

Given the compiled graph, the input, the config and the runtime context, the event mapper (its
stream modes and wire, :mod:`app.runs.events`), a cancellation event and a deadline, it runs the
graph, hands each mapped event to the caller's sink, and returns the root state it last saw.
It is also the one place that decides how a run ends otherwise:

- the ``cancel`` event set (before or during the run): :class:`RunCancelled`;
- the deadline passed: :class:`RunFailed` whose :class:`Failure` is a ``timeout``;
- anything the graph raised: :class:`RunFailed` with the :class:`Failure` saying the class of
  failure (``kind``), the dependency that is down if any, and the message a client may see
  (never the exception's text: it may quote internal hosts, paths, SQL or a sandbox's stderr);
- a cancellation of the calling task itself (a worker stopping) is left alone: it propagates.

Callers turn a failure into their wire's shape: ``/chat/stream`` an ``error`` event
(:meth:`Failure.event`), a background run a ``failed`` status (``error`` and ``error_kind``), a
synchronous endpoint an HTTP error (503 for a dependency, 504 for the deadline, 502 else).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from app.errors import DEPENDENCIES, dependency_of
from app.runs.events import Event, EventMapper

__all__ = [
    "Deadline",
    "Failure",
    "RunCancelled",
    "RunFailed",
    "describe_failure",
    "execute",
    "failure_of",
]

log = logging.getLogger(__name__)

Sink = Callable[[Event], Awaitable[None]]
INTERRUPT = "__interrupt__"


@dataclass(frozen=True)
class Deadline:
    """How long a run may take, and the setting that says so (named in the timeout's message)."""

    seconds: float
    setting: str = ""

    def message(self, what: str) -> str:
        named = f" ({self.setting})" if self.setting else ""
        return f"The {what} took longer than {self.seconds:g} s{named}."


@dataclass(frozen=True)
class Failure:
    """How a run failed, decided once for every caller."""

    kind: str
    """``timeout``, or the exception's class name."""
    message: str
    """What a client may be told (the class of failure and what to do)."""
    dependency: str | None
    error: BaseException

    @property
    def timed_out(self) -> bool:
        return self.kind == "timeout"

    def event(self) -> dict[str, Any]:
        """The data of an ``error`` event: the message, and the dependency that is down."""
        data: dict[str, Any] = {"message": self.message}
        if self.dependency:
            data["dependency"] = self.dependency
        return data

    def log(self, what: str) -> None:
        """An outage or a deadline is one line; anything else is a bug worth its traceback."""
        if self.timed_out:
            log.warning("%s timed out: %s", what, self.message)
        elif self.dependency:
            log.warning("%s failed: %s is unavailable (%s)", what, self.dependency, self.error)
        else:
            log.error("%s failed", what, exc_info=self.error)


class RunFailed(Exception):
    """A run ended with a failure (see :class:`Failure`)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class RunCancelled(Exception):
    """A run stopped because its ``cancel`` event was set."""


def describe_failure(exc: BaseException, what: str = "turn") -> str:
    """A message for a failed turn (or run): the class of failure and what to do, never the
    exception's text (it may quote internal hosts, paths, SQL or a sandbox's stderr; the log
    has it, with the traceback)."""
    name = type(exc).__name__
    packages = {cls.__module__.split(".")[0] for cls in type(exc).__mro__}
    if packages & {"openai", "langchain_openai", "httpx", "ollama", "langchain_ollama"}:
        return f"The language model provider failed ({name}); try again later."
    dependency = dependency_of(exc)
    if dependency:
        return (
            f"{DEPENDENCIES.get(dependency, dependency)} is unavailable ({name}); nothing of "
            f"this {what} was saved after its last checkpoint. Retry when it is back."
        )
    if what == "turn":
        return f"The turn failed ({name}); the session keeps its last completed turn."
    return (
        f"The {what} failed ({name}). Try again; if it fails again, the server log has the "
        f"cause: give its operator the {what}'s id."
    )


def failure_of(exc: BaseException, what: str = "turn", deadline: Deadline | None = None) -> Failure:
    """The :class:`Failure` of ``exc`` (a ``TimeoutError`` of the run's deadline is a timeout)."""
    if isinstance(exc, RunFailed):
        return exc.failure
    if isinstance(exc, TimeoutError) and deadline is not None:
        return Failure("timeout", deadline.message(what), None, exc)
    return Failure(type(exc).__name__, describe_failure(exc, what), dependency_of(exc), exc)


async def execute(
    graph: Pregel[Any, Any, Any, Any],
    inp: Any,
    config: RunnableConfig,
    *,
    context: Any,
    mapper: EventMapper | None = None,
    sink: Sink | None = None,
    cancel: asyncio.Event | None = None,
    deadline: Deadline | None = None,
    what: str = "turn",
    **options: Any,
) -> dict[str, Any] | None:
    """Run the graph once; each mapped event goes to ``sink`` as it comes.

    Returns the root state it last saw (with ``__interrupt__`` when the run stopped at an
    interrupt), or None when the mapper asked for no ``values``. ``options`` go to
    ``astream`` (``durability``, ``interrupt_before``, ``interrupt_after``). Raises
    :class:`RunCancelled` or :class:`RunFailed` (see the module's docstring).
    """
    mapper = mapper or EventMapper.result()
    run = _bounded(graph, inp, config, context, mapper, sink, deadline, what, options)
    if cancel is None:
        return await run
    if cancel.is_set():
        run.close()
        raise RunCancelled
    # The run races the cancel event in a task of its own: a cancel lands only on the run,
    # never as a stray cancellation of the caller's task after the run has ended.
    work = asyncio.ensure_future(run)
    stop = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait((work, stop), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the caller's task is being stopped: stop the run too
        work.cancel()
        with contextlib.suppress(BaseException):
            await work
        raise
    finally:
        stop.cancel()
    if work.done():  # it ended first (a cancel that comes with its end changes nothing)
        return work.result()
    work.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await work
    raise RunCancelled


async def _bounded(
    graph: Pregel[Any, Any, Any, Any],
    inp: Any,
    config: RunnableConfig,
    context: Any,
    mapper: EventMapper,
    sink: Sink | None,
    deadline: Deadline | None,
    what: str,
    options: dict[str, Any],
) -> dict[str, Any] | None:
    """The run under its deadline; any exception it raises becomes :class:`RunFailed`."""
    timeout = asyncio.timeout(deadline.seconds if deadline is not None else None)
    try:
        async with timeout:
            return await _stream(graph, inp, config, context, mapper, sink, options)
    except Exception as exc:
        raise RunFailed(failure_of(exc, what, deadline if timeout.expired() else None)) from exc


async def _stream(
    graph: Pregel[Any, Any, Any, Any],
    inp: Any,
    config: RunnableConfig,
    context: Any,
    mapper: EventMapper,
    sink: Sink | None,
    options: dict[str, Any],
) -> dict[str, Any] | None:
    final: dict[str, Any] | None = None
    interrupts: list[Any] = []
    modes = mapper.modes
    stream: Any = graph.astream(
        inp,
        config,
        context=context,
        stream_mode=cast(Any, modes),
        subgraphs=mapper.subgraphs,
        **options,
    )
    async for item in stream:
        namespace, mode, chunk = item if mapper.subgraphs else ((), *item)
        if not namespace:
            if mode == "values":
                final = chunk  # the root state after each step; the last is the result
            elif mode == "updates" and isinstance(chunk, dict) and INTERRUPT in chunk:
                interrupts.extend(chunk[INTERRUPT])
        if sink is not None:
            for event in mapper.events(namespace, mode, chunk):
                await sink(event)
    if sink is not None:
        for event in mapper.finish():
            await sink(event)
    if interrupts and final is not None:
        return {**final, INTERRUPT: interrupts}
    return final
