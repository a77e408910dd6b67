"""`test_code`'s engine (and `POST /code/execute`'s): test data -> DataFrame -> sandbox.

`SandboxUnavailable` propagates (the caller decides: the tool reports it as the run's error,
a REST handler answers 503); every failure of the code itself is a `TestCodeOutput`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tools.coding.schemas import TestCodeOutput, TestData
from tools.sandbox import Sandbox

if TYPE_CHECKING:
    # config composes tools.*.settings: importing it here at run time would be circular.
    from config import Settings


@dataclass(frozen=True)
class CodeLimits:
    """The configured size limits of code and test data."""

    max_code_chars: int = 20_000
    max_rows: int = 10_000
    max_columns: int = 100

    @classmethod
    def from_settings(cls, settings: Settings) -> CodeLimits:
        return cls(
            max_code_chars=settings.coding.max_code_chars,
            max_rows=settings.coding.max_test_rows,
            max_columns=settings.coding.max_test_columns,
        )


def check_code_size(code: str, limits: CodeLimits) -> None:
    """Raise `ValueError` (naming the setting) when `code` is longer than allowed."""
    if len(code) > limits.max_code_chars:
        raise ValueError(
            f"the code has {len(code)} characters; at most {limits.max_code_chars} are accepted "
            "(CODING_MAX_CODE_CHARS)"
        )


def to_frame(test_data: TestData, limits: CodeLimits) -> Any:
    """The DataFrame of JSON `test_data` (records or columns), within the configured size.

    Raises `ValueError` with a message naming the problem (and the setting, for sizes).
    """
    import pandas as pd

    if isinstance(test_data, list):
        rows = len(test_data)
        columns: set[str] = set()
        for record in test_data:
            if not isinstance(record, dict):
                raise ValueError("test_data records must be JSON objects (column -> value)")
            columns.update(record)
            if len(columns) > limits.max_columns:
                break
    elif isinstance(test_data, dict):
        columns = set(test_data)
        lengths = {len(values) for values in test_data.values() if isinstance(values, list)}
        if len(lengths) > 1:
            raise ValueError(
                "test_data columns have different lengths "
                f"({', '.join(str(n) for n in sorted(lengths))}); give every column the same "
                "number of values"
            )
        rows = lengths.pop() if lengths else 0
    else:
        raise ValueError("test_data must be a list of records or an object of columns")
    if rows > limits.max_rows:
        raise ValueError(
            f"test_data has {rows} rows; at most {limits.max_rows} are accepted "
            "(CODING_MAX_TEST_ROWS)"
        )
    if len(columns) > limits.max_columns:
        raise ValueError(
            f"test_data has more than {limits.max_columns} columns (CODING_MAX_TEST_COLUMNS)"
        )
    return pd.DataFrame(test_data)


def data_summary(test_data: TestData | None, limits: CodeLimits) -> str:
    """One line describing the test data (rows, columns, dtypes) for prompts; never the data."""
    if test_data is None:
        return "no test data"
    try:
        frame = to_frame(test_data, limits)
    except ValueError as exc:
        return f"unusable test data: {exc}"
    dtypes = ", ".join(f"{column} ({dtype})" for column, dtype in frame.dtypes.items())
    return f"a pandas DataFrame of {len(frame)} rows with columns: {dtypes}"


async def execute_code(
    sandbox: Sandbox,
    code: str,
    function_name: str,
    test_data: TestData | None,
    limits: CodeLimits,
    *,
    owner: str | None = None,
) -> TestCodeOutput:
    """Run `function_name` of `code` in the sandbox on `test_data` (as a DataFrame, passed as
    the first argument; without data the function is called with no arguments), counted
    against `owner`'s share of the sandbox (`SandboxOwnerBusy` when it is used up)."""
    check_code_size(code, limits)
    frame = to_frame(test_data, limits) if test_data is not None else None
    outcome = await sandbox.arun(code, function_name, frame, owner=owner)
    return TestCodeOutput(
        success=outcome.success,
        result=outcome.result,
        error=outcome.error,
        error_type=outcome.error_type,
        traceback=outcome.traceback,
        stdout=outcome.stdout,
        duration_ms=outcome.duration_ms,
    )
