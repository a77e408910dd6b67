"""The one quality gate every stage runs through: validate input, run, validate output, measure.

`gated(stage, node, ...)` wraps a node (sync or async) without changing how LangGraph calls it
(its signature, and so the injection of `config` / `runtime`, is preserved). It records per-stage
counts, errors and latency in process-wide `StageMetrics` (served at /metrics) and adds the
stage's latency to the state's `stage_ms`.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.types import Overwrite

Check = Callable[[Mapping[str, Any]], str | None]


class StageInputError(ValueError):
    """A stage received state it cannot work on (a bug upstream, not user input)."""


class StageOutputError(ValueError):
    """A stage produced an update that breaks its contract."""


@dataclass
class StageStats:
    """Counters of one stage."""

    count: int = 0
    errors: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0

    def as_dict(self) -> dict[str, float]:
        mean = self.total_ms / self.count if self.count else 0.0
        return {
            "count": self.count,
            "errors": self.errors,
            "mean_ms": round(mean, 3),
            "max_ms": round(self.max_ms, 3),
        }


@dataclass
class StageMetrics:
    """Thread-safe per-stage counters."""

    stages: dict[str, StageStats] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, stage: str, ms: float, *, failed: bool) -> None:
        with self._lock:
            stats = self.stages.setdefault(stage, StageStats())
            stats.count += 1
            stats.errors += int(failed)
            stats.total_ms += ms
            stats.max_ms = max(stats.max_ms, ms)

    def snapshot(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {name: stats.as_dict() for name, stats in sorted(self.stages.items())}


METRICS = StageMetrics()


def _finish(
    stage: str, update: Any, started: float, check_output: Check | None, metrics: StageMetrics
) -> Any:
    if check_output is not None and isinstance(update, Mapping):
        problem = check_output(update)
        if problem:
            raise StageOutputError(f"stage {stage!r} produced an invalid update: {problem}")
    ms = (time.perf_counter() - started) * 1000
    metrics.record(stage, ms, failed=False)
    if isinstance(update, dict):
        current = update.get("stage_ms")
        if isinstance(current, Overwrite):  # the stage resets the timings (a new turn)
            return {**update, "stage_ms": Overwrite({**current.value, stage: round(ms, 3)})}
        timings = dict(current or {})
        timings[stage] = timings.get(stage, 0.0) + round(ms, 3)
        return {**update, "stage_ms": timings}
    return update


def _start(stage: str, state: Any, check_input: Check | None) -> float:
    if check_input is not None and isinstance(state, Mapping):
        problem = check_input(state)
        if problem:
            raise StageInputError(f"stage {stage!r} cannot run: {problem}")
    return time.perf_counter()


def gated(
    stage: str,
    node: Callable[..., Any],
    *,
    check_input: Check | None = None,
    check_output: Check | None = None,
    metrics: StageMetrics = METRICS,
) -> Callable[..., Any]:
    """Wrap `node` in the quality gate for `stage`."""
    if inspect.iscoroutinefunction(node):

        @functools.wraps(node)
        async def run_async(state: Any, *args: Any, **kwargs: Any) -> Any:
            started = _start(stage, state, check_input)
            try:
                update = await node(state, *args, **kwargs)
            except GraphBubbleUp:  # interrupts and parent commands are control flow, not errors
                raise
            except BaseException:
                metrics.record(stage, (time.perf_counter() - started) * 1000, failed=True)
                raise
            return _finish(stage, update, started, check_output, metrics)

        return run_async

    @functools.wraps(node)
    def run_sync(state: Any, *args: Any, **kwargs: Any) -> Any:
        started = _start(stage, state, check_input)
        try:
            update = node(state, *args, **kwargs)
        except GraphBubbleUp:
            raise
        except BaseException:
            metrics.record(stage, (time.perf_counter() - started) * 1000, failed=True)
            raise
        return _finish(stage, update, started, check_output, metrics)

    return run_sync
