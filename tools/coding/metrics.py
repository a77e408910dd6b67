"""Counters of the coding tools and loops, for /metrics; and the log line of every tool call."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

logger = logging.getLogger("tools.coding")

#: ok: the tool did its job and the outcome is positive (code valid, run passed, ...);
#: failed: it ran, the outcome is negative; error: the tool itself raised.
ToolStatus = Literal["ok", "failed", "error"]


@dataclass
class _ToolStats:
    calls: int = 0
    failed: int = 0
    errors: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0


class CodingMetrics:
    """Thread-safe counters: per tool (calls, failed, errors, latency) and per loop (runs,
    valid results, iterations). `snapshot()` is what /metrics shows under "coding"."""

    def __init__(self, extra: Callable[[], dict[str, Any]] | None = None) -> None:
        """`extra`: more figures to merge into the snapshot (e.g. the sandbox's own stats)."""
        self._lock = threading.Lock()
        self._tools: dict[str, _ToolStats] = {}
        self._runs = {"total": 0, "valid": 0, "iterations": 0, "bound_reached": 0}
        self._extra = extra

    def record_tool(self, tool: str, status: ToolStatus, ms: float) -> None:
        """Count one tool call and log it (tool name, status, duration)."""
        logger.info("coding tool %s: %s in %.1f ms", tool, status, ms)
        with self._lock:
            stats = self._tools.setdefault(tool, _ToolStats())
            stats.calls += 1
            stats.failed += status == "failed"
            stats.errors += status == "error"
            stats.total_ms += ms
            stats.max_ms = max(stats.max_ms, ms)

    def record_run(self, *, valid: bool, iterations: int, bound_reached: bool) -> None:
        """Count one finished coding loop."""
        logger.info(
            "coding loop done: valid=%s after %d iteration(s)%s",
            valid,
            iterations,
            " (bound reached)" if bound_reached else "",
        )
        with self._lock:
            self._runs["total"] += 1
            self._runs["valid"] += int(valid)
            self._runs["iterations"] += iterations
            self._runs["bound_reached"] += int(bound_reached)

    def snapshot(self) -> dict[str, Any]:
        """Per-tool and per-loop figures (plus `extra`'s)."""
        with self._lock:
            tools = {
                name: {
                    "calls": s.calls,
                    "failed": s.failed,
                    "errors": s.errors,
                    "mean_ms": round(s.total_ms / s.calls, 3) if s.calls else 0.0,
                    "max_ms": round(s.max_ms, 3),
                }
                for name, s in sorted(self._tools.items())
            }
            runs = dict(self._runs)
        out: dict[str, Any] = {"tools": tools, "runs": runs}
        if self._extra is not None:
            out.update(self._extra())
        return out
