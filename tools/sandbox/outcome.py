"""What one sandboxed execution returns, and the sandbox's own counters."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

ExecutionStatus = Literal["ok", "error", "timeout", "killed", "output_limit", "sandbox_error"]


class ExecutionOutcome(BaseModel):
    """The outcome of running a function in the sandbox (JSON-safe throughout)."""

    status: ExecutionStatus = Field(
        description="ok; error (the code raised); timeout (wall clock); killed (a resource "
        "limit); output_limit (stdout/stderr/result over its cap); sandbox_error (the sandbox "
        "itself failed)."
    )
    success: bool = Field(description="The function ran and returned a value.")
    result: dict[str, Any] | None = Field(
        default=None, description="The JSON-safe description of the returned value."
    )
    error: str | None = Field(default=None, description="What went wrong, in one message.")
    error_type: str | None = Field(default=None, description="The exception type, if any.")
    traceback: str | None = Field(default=None, description="The user code's traceback.")
    stdout: str = Field(default="", description="What the code printed (capped).")
    stderr: str = Field(default="", description="What the code wrote to stderr (capped).")
    duration_ms: float = Field(default=0.0, description="Wall time of the execution.")


class SandboxStats:
    """Thread-safe counters of executions by status, and their time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._total_ms = 0.0
        self._max_ms = 0.0

    def record(self, outcome: ExecutionOutcome) -> None:
        with self._lock:
            self._counts[outcome.status] += 1
            self._total_ms += outcome.duration_ms
            self._max_ms = max(self._max_ms, outcome.duration_ms)

    def record_refused(self) -> None:
        with self._lock:
            self._counts["refused"] += 1

    def snapshot(self) -> dict[str, Any]:
        """Counts by status, total executions, mean and max milliseconds."""
        with self._lock:
            runs = sum(n for status, n in self._counts.items() if status != "refused")
            return {
                "executions": runs,
                "by_status": dict(sorted(self._counts.items())),
                "mean_ms": round(self._total_ms / runs, 3) if runs else 0.0,
                "max_ms": round(self._max_ms, 3),
            }
