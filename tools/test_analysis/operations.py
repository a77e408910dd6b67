"""The test-analysis capability's operation: ``analyze_tests``, the rule-based analysis of given
test files (no model): files in, findings out.

It runs the rules-only pipeline (:func:`~tools.test_analysis.pipeline.analyze_files`) on the
process's engine (``ctx.engine(FileWork)``, opened by the test-analysis component): its parse
cache, its request limits (MAX_FILES, MAX_REQUEST_BYTES) and this deployment's rule settings,
which the payload's ``config`` overrides field by field. An input the engine refuses (unsafe or
duplicate path, over a limit) is an :class:`OperationError` with the status the analysis API
answers for it; a file that is not UTF-8 or does not parse is a finding, not a refusal.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.operations import (
    Arguments,
    Operation,
    OperationContext,
    OperationError,
    argument_problems,
    operation,
)
from tools.test_analysis.filework import FileWork
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.schemas import AnalysisConfig, AnalysisResult
from tools.test_analysis.validation import AnalysisInputError

CAPABILITY = "test_analysis"


class TestFile(BaseModel):
    """One test file to analyse."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1, max_length=1024, description="Its path in the project, e.g. tests/test_x.py."
    )
    content: str = Field(description="The file's text.")


class AnalyzeTestsInput(Arguments):
    """The files to analyse and the rule settings to change for this analysis (the config's
    keys are checked against AnalysisConfig)."""

    files: list[TestFile] = Field(min_length=1, description="The test files (and their helpers).")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Rule settings to override (fields of AnalysisConfig, e.g. "
        '{"profile": "strict", "ignore": ["magic-number-test"]}).',
    )


@operation(CAPABILITY, read_only=True)
async def analyze_tests(ctx: OperationContext, payload: AnalyzeTestsInput) -> AnalysisResult:
    """Find test smells in the given test files with the rule engine (no model): each finding
    names its smell, file, line, severity and a fix; the summary counts them."""
    engine = ctx.engine(FileWork)
    try:
        config = AnalysisConfig.model_validate({**engine.config.model_dump(), **payload.config})
    except ValidationError as exc:  # compact: `field: message`, no documentation links
        problems = "; ".join(argument_problems(exc, AnalysisConfig))
        raise OperationError(f"invalid config: {problems}", status=422) from exc
    except ValueError as exc:
        raise OperationError(f"invalid config: {exc}", status=422) from exc
    files = [file.model_dump() for file in payload.files]
    try:
        # parsing and the rules are CPU-bound Python: off the event loop
        return await asyncio.to_thread(
            analyze_files,
            files,
            config,
            cache=engine.cache,
            max_files=engine.max_files,
            max_total_bytes=engine.max_total_bytes,
        )
    except AnalysisInputError as exc:
        raise OperationError(exc.message, status=exc.status_code) from exc


#: The test-analysis capability's operations.
OPERATIONS: tuple[Operation[Any, Any], ...] = (analyze_tests,)
