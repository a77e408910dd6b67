"""Judging code versions: which is valid, which is evaluated, which is best; the six fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.coding.state import Attempt, code_key
from tools.coding.schemas import CodingResult


def is_valid(attempt: Attempt, has_data: bool) -> bool:
    """Passed the static check and, when there is test data, ran in the sandbox."""
    if not attempt.get("static_ok"):
        return False
    return bool(attempt.get("test_ok")) if has_data else True


def is_evaluated(attempt: Attempt, has_data: bool) -> bool:
    """Everything the loop can learn about this version is known."""
    if not attempt.get("checked"):
        return False
    return bool(attempt.get("tested")) or not has_data or not attempt.get("static_ok")


def _rank(attempt: Attempt, has_data: bool) -> tuple[int, int, int, int, int]:
    return (
        int(is_valid(attempt, has_data)),
        int(bool(attempt.get("test_ok"))),
        int(bool(attempt.get("static_ok"))),
        -attempt.get("error_count", 0),
        attempt.get("iteration", 0),
    )


def best_attempt(attempts: Mapping[str, Attempt], has_data: bool) -> Attempt | None:
    """The best version: valid first, then ran, then statically clean, fewer errors, newer."""
    candidates = [a for a in attempts.values() if a.get("code")]
    if not candidates:
        return None
    return max(candidates, key=lambda attempt: _rank(attempt, has_data))


def current_attempt(state: Mapping[str, Any]) -> Attempt | None:
    """The attempt of the state's current code."""
    code = state.get("generated_code") or ""
    if not code:
        return None
    return (state.get("attempts") or {}).get(code_key(code))


def result_of(state: Mapping[str, Any], *, note: str | None = None) -> CodingResult:
    """The six-field result of a finished run: the best version and its findings."""
    has_data = state.get("test_data") is not None
    best = best_attempt(state.get("attempts") or {}, has_data)
    iterations = int(state.get("iteration_count") or 0)
    if best is None:
        issues = [note] if note else ["no code was produced"]
        return CodingResult(
            generated_code="",
            iteration_count=iterations,
            is_code_valid=False,
            code_issues=issues,
            runtime_error=None,
            execution_result=None,
        )
    issues = list(best.get("issues") or [])
    if not best.get("checked"):
        issues.append("not checked")
    if has_data and best.get("static_ok") and not best.get("tested"):
        issues.append("not run on the test data")
    return CodingResult(
        generated_code=best.get("code", ""),
        iteration_count=iterations,
        is_code_valid=is_valid(best, has_data),
        code_issues=issues,
        runtime_error=best.get("runtime_error"),
        execution_result=best.get("execution_result"),
    )
