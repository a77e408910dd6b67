"""Input and output schemas of the four coding tools, and the shapes they share.

Static bounds here keep a request's size sane before anything else runs; the configured limits
(`CODING_MAX_CODE_CHARS`, `CODING_MAX_TEST_ROWS`, `CODING_MAX_TEST_COLUMNS`) are applied by the
engines, which raise `ValueError` with the limit's name.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.operations import Arguments

#: Hard ceilings of the schemas (the settings may only lower them).
MAX_CODE_CHARS = 1_000_000
MAX_TEXT_CHARS = 20_000
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,99}$"

JsonScalar = str | int | float | bool | None
#: Test data as JSON: records (`[{"col": value, ...}, ...]`) or columns (`{"col": [values]}`).
TestData = list[dict[str, JsonScalar]] | dict[str, list[JsonScalar]]


class ExecutionSpec(BaseModel):
    """What the function must do: its name, a description, its parameters."""

    model_config = ConfigDict(extra="forbid")

    function_name: str = Field(pattern=IDENTIFIER, description="Name of the function to write.")
    description: str = Field(
        min_length=1, max_length=MAX_TEXT_CHARS, description="What the function does."
    )
    parameters: dict[str, str] = Field(
        default_factory=dict,
        max_length=30,
        description="Parameter name -> its type / meaning, in order (e.g. "
        '{"df": "pandas.DataFrame with columns region, amount"}).',
    )
    returns: str | None = Field(
        default=None, max_length=2000, description="What the function returns."
    )


class CodeIssue(BaseModel):
    """One finding of `check_code`."""

    severity: Literal["error", "warning"] = Field(
        description="error: the code cannot pass as is; warning: worth fixing."
    )
    code: str = Field(description="What kind of finding, e.g. syntax, no-return, ruff:F821.")
    message: str = Field(description="The finding, in one sentence.")
    line: int | None = Field(default=None, description="Line of the code it concerns.")

    def render(self) -> str:
        """One line for people and prompts: `line 3: error: ... [ruff:F821]`."""
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.severity}: {self.message} [{self.code}]"


class GenerateCodeInput(Arguments):
    """Arguments of `generate_code`."""

    execution_spec: ExecutionSpec
    previous_code: str | None = Field(
        default=None, max_length=MAX_CODE_CHARS, description="The code to improve, if any."
    )
    issues_to_fix: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="Problems of the previous code to fix (check issues, runtime errors).",
    )


class GenerateCodeOutput(BaseModel):
    """What `generate_code` returns."""

    code: str = Field(description="The generated module (imports at the top), or empty.")
    success: bool = Field(description="The answer held code defining the function.")
    message: str = Field(description="What happened, e.g. why no code came back.")


class CheckCodeInput(Arguments):
    """Arguments of `check_code`."""

    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    function_name: str = Field(pattern=IDENTIFIER)


class CheckCodeOutput(BaseModel):
    """What `check_code` returns."""

    is_valid: bool = Field(description="No error-level issue was found.")
    issues: list[CodeIssue] = Field(default_factory=list)


class TestCodeInput(Arguments):
    """Arguments of `test_code`."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    code: str = Field(min_length=1, max_length=MAX_CODE_CHARS)
    function_name: str = Field(pattern=IDENTIFIER)
    test_data: TestData | None = Field(
        default=None,
        description="JSON records or columns; they become the DataFrame the function gets.",
    )


class TestCodeOutput(BaseModel):
    """What `test_code` returns (and `POST /code/execute`)."""

    __test__: ClassVar[bool] = False

    success: bool = Field(description="The function ran in the sandbox and returned.")
    result: dict[str, Any] | None = Field(
        default=None, description="JSON-safe description of the returned value."
    )
    error: str | None = Field(default=None, description="What went wrong, in one message.")
    error_type: str | None = Field(default=None, description="The exception type, if any.")
    traceback: str | None = Field(default=None, description="The code's traceback, if any.")
    stdout: str = Field(default="", description="What the function printed (capped).")
    duration_ms: float = Field(default=0.0, description="Wall time of the sandboxed run.")


class AnalyzeErrorInput(Arguments):
    """Arguments of `analyze_error`."""

    code: str = Field(default="", max_length=MAX_CODE_CHARS)
    error: str = Field(
        min_length=1, max_length=MAX_TEXT_CHARS, description="The message or traceback."
    )
    error_type: str | None = Field(default=None, max_length=200)


class AnalyzeErrorOutput(BaseModel):
    """What `analyze_error` returns."""

    analysis: str = Field(description="What went wrong and why.")
    suggestions: list[str] = Field(default_factory=list, description="How to fix it.")
    error_type: str | None = Field(default=None, description="The exception type found.")
    line: int | None = Field(default=None, description="The failing line of the code.")
    expression: str | None = Field(default=None, description="The failing expression.")
    method: Literal["model", "rules"] = Field(
        default="rules", description="Who analysed: the chat model, or the traceback rules."
    )


class CodingResult(BaseModel):
    """The coding loop's result (the seed's output structure): always all six fields."""

    generated_code: str = Field(description="The best code of the run (empty if none).")
    iteration_count: int = Field(ge=0, description="Code generations the run made.")
    is_code_valid: bool = Field(
        description="The code passed check_code and, with test data, ran in the sandbox."
    )
    code_issues: list[str] = Field(description="check_code's findings on that code, rendered.")
    runtime_error: str | None = Field(description="Its error in the sandbox, if it raised.")
    execution_result: dict[str, Any] | None = Field(
        description="Its JSON-safe result in the sandbox, if it ran."
    )
