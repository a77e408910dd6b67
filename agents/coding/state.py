"""The coding agent's own state: the chat messages plus the work on one function.

Fields the tools of one step may write in parallel (e.g. `check_code` and `test_code` in the
same model turn) have reducers, so parallel writes never conflict; per-run fields are reset at
the start of every run (`CodingLoop.before_agent`), so a thread's next request starts clean.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Annotated, Any, NotRequired, TypedDict

from langchain.agents import AgentState

from tools.coding.schemas import TestData


def latest(left: Any, right: Any) -> Any:
    """Reducer: the newest write wins (allows several writes in one step)."""
    return right


class Attempt(TypedDict, total=False):
    """One version of the code and what the tools found about it."""

    code: str
    """The module's source."""
    iteration: int
    """Which generation produced it (0 = code the user pasted)."""
    checked: bool
    """check_code ran on it."""
    static_ok: bool
    """check_code found no error-level issue."""
    issues: list[str]
    """check_code's findings, rendered."""
    error_count: int
    """How many of the findings are errors."""
    tested: bool
    """test_code ran it in the sandbox."""
    test_ok: bool
    """The sandboxed run returned a value."""
    runtime_error: str | None
    """The sandboxed run's error (type, message, traceback)."""
    execution_result: dict[str, Any] | None
    """The sandboxed run's JSON-safe result."""


def merge_attempts(
    left: dict[str, Attempt] | None, right: dict[str, Attempt] | None
) -> dict[str, Attempt]:
    """Reducer: merge what the tools found per code version (keyed by `code_key`)."""
    merged: dict[str, Attempt] = dict(left or {})
    for key, update in (right or {}).items():
        merged[key] = {**merged.get(key, {}), **update}
    return merged


def code_key(code: str) -> str:
    """The key of a code version in `attempts`."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


class CodingState(AgentState[Any]):
    """Messages (from `AgentState`) plus the coding agent's working fields."""

    execution_spec: NotRequired[Annotated[dict[str, Any] | None, latest]]
    """The function to write (an `ExecutionSpec` as a dict); from the caller, or from chat."""
    test_data: NotRequired[Annotated[TestData | None, latest]]
    """JSON test data (bounded) that test_code runs on; the model only sees its summary."""
    max_iterations: NotRequired[Annotated[int | None, latest]]
    """Bound of code generations in this run (per-call option; default CODING_MAX_ITERATIONS)."""
    generated_code: NotRequired[Annotated[str, latest]]
    """The current code: the latest generation (or the code the user pasted)."""
    code_issues: NotRequired[Annotated[list[str], latest]]
    """check_code's findings on the current code, rendered."""
    runtime_error: NotRequired[Annotated[str | None, latest]]
    """The current code's error in the sandbox, if it raised."""
    execution_result: NotRequired[Annotated[dict[str, Any] | None, latest]]
    """The current code's JSON-safe result in the sandbox, if it returned."""
    iteration_count: NotRequired[Annotated[int, operator.add]]
    """Code generations so far in this run (never above max_iterations)."""
    is_code_valid: NotRequired[Annotated[bool, latest]]
    """The current code passed check_code and, with test data, ran in the sandbox."""
    attempts: NotRequired[Annotated[dict[str, Attempt], merge_attempts]]
    """Every code version of this run and its findings (to return the best at the bound)."""
    model_calls: NotRequired[Annotated[int, operator.add]]
    """Agent model calls in this run (a backstop bound on the loop)."""
