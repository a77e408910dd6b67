"""Pydantic models of the analysis: input files, configuration, findings, result.

These are the shapes of ``POST /api/v1/analyze`` (request ``files`` / ``config``, response
``issues`` / ``summary`` / ``metrics``) and of the graph's analysis state section.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.test_analysis.catalogue import ALL_SMELLS, SMELLS, Severity
from tools.test_analysis.validation import normalize_path

__all__ = [
    "AnalysisConfig",
    "AnalysisResult",
    "FileReport",
    "Finding",
    "Issue",
    "Metrics",
    "Severity",
    "Source",
    "SourceFile",
    "Summary",
]


class Source(StrEnum):
    """Who reported a finding."""

    RULE = "rule"
    LLM = "llm"


class SourceFile(BaseModel):
    """One file to analyse. ``path`` is normalised on validation; unsafe paths are rejected.

    ``content`` is text (what the JSON API receives) or raw bytes (Python callers); bytes that
    are not UTF-8 are reported per file as an ``encoding-error`` finding, not rejected.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    content: str | bytes

    @field_validator("path", mode="before")
    @classmethod
    def _safe_path(cls, value: Any) -> str:
        # UnsafePathError is a ValueError: pydantic turns it into a ValidationError whose
        # message is ours (FastAPI answers 422); validate_files raises it directly (400).
        return normalize_path(value)


Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class Issue(BaseModel):
    """One reported smell: the API's ``issues[]`` item (exactly the fields of issue 6).

    Frozen: rule findings are memoised and shared between analyses of the same file, so
    changes go through ``model_copy(update=...)``.
    """

    model_config = ConfigDict(frozen=True)

    file: str
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    smell: str
    severity: Severity
    message: str
    suggestion: str = ""
    example: str = ""
    confidence: Confidence = 1.0
    source: Source = Source.RULE

    @property
    def key(self) -> tuple[str, int, str]:
        """Dedupe key: the same smell on the same line of the same file is one finding."""
        return (self.file, self.line, self.smell)


class Finding(Issue):
    """An :class:`Issue` plus the rule-side ``context`` (assertion text, names, ...) that
    :func:`enhance` fills its templates with.

    ``context`` is serialised like any field so it survives the graph's checkpoints between
    synthesis and enhancement; responses typed ``Issue`` (as :class:`AnalysisResult` is)
    leave it out.
    """

    context: dict[str, str] = Field(default_factory=dict, repr=False)


_DEFAULT_ALLOWED_NUMBERS = frozenset({-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100})


class AnalysisConfig(BaseModel):
    """Per-request settings of the rule engine and LLM review (defaults from SMELLS.md).

    Frozen and hashable, so compiled forms (helper matchers) can be cached per config.
    Unknown keys are rejected, so a typo in a request is a 422 instead of a silent default.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Literal["default", "strict"] = Field(
        default="default",
        description=(
            "default: the findings a maintainer would act on (plain pytest asserts are not "
            "a roulette, HTTP status codes and values the test set up are not magic, ...). "
            "strict: every smell of the catalogue by its literal definition (research "
            "parity with PyNose/tsDetect)."
        ),
    )
    verbose_test_max_statements: int = Field(
        default=30,
        ge=1,
        le=100_000,
        description="verbose-test fires above this many statements in a test body.",
    )
    obscure_setup_max_locals: int = Field(
        default=10,
        ge=1,
        le=100_000,
        description="obscure-setup fires above this many distinct local variables.",
    )
    lack_of_cohesion_threshold: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="lack-of-cohesion fires when 1 - mean pairwise cosine similarity >= this.",
    )
    lack_of_cohesion_min_tests: int = Field(
        default=2,
        ge=2,
        le=100_000,
        description="Classes with fewer test methods are not judged for cohesion.",
    )
    magic_number_allowed: frozenset[Annotated[float, Field(ge=-1e15, le=1e15)]] = Field(
        default=_DEFAULT_ALLOWED_NUMBERS, description="Numeric literals that are never magic."
    )
    magic_number_ignored_keywords: tuple[str, ...] = Field(
        default=(
            "rel",
            "abs",
            "rtol",
            "atol",
            "places",
            "delta",
            "decimal",
            "nulp",
            "maxulp",
            "significant",
            "timeout",
        ),
        description="Keyword arguments of assertions whose values are tolerances, not data.",
    )
    assertion_helpers: tuple[str, ...] = Field(
        default=(
            "fnmatch_lines",
            "re_match_lines",
            "no_fnmatch_line",
            "no_re_match_line",
            "assert*",
        ),
        description=(
            "Call names (fnmatch patterns on the called name, any receiver) that count as "
            "assertions. 'assert*' covers assert_* helpers (numpy's assert_allclose), mock "
            "methods (assert_called_once_with) and camel-case ones (pytest's "
            "reprec.assertoutcome)."
        ),
    )
    infer_local_helpers: bool = Field(
        default=True,
        description=(
            "Count a call to a function or method defined in the same file as an assertion "
            "when that function itself asserts."
        ),
    )
    test_file_patterns: tuple[str, ...] = Field(
        default=("test_*.py", "*_test.py"),
        description="File names (fnmatch) whose module-level test* functions are tests.",
    )
    default_test_names: tuple[str, ...] = Field(
        default=(
            "MyTestCase",
            "MyTest",
            "MyTests",
            "MyTestClass",
            "ExampleTest",
            "ExampleTests",
            "ExampleTestCase",
            "SampleTest",
            "SampleTestCase",
            "TestExample",
            "TestSample",
            "TestMyClass",
            "TestClass",
            "TestCase1",
            "TestCase2",
            "Test1",
            "Test2",
        ),
        description="Template class names that default-test reports.",
    )
    ignore: tuple[str, ...] = Field(
        default=(),
        description="Smell ids never reported for this request (project-level ignore list).",
    )
    enable: tuple[str, ...] = Field(
        default=(),
        description=(
            "Smell ids the default profile leaves out (sensitive-equality, obscure-setup, "
            "test-maverick, lack-of-cohesion) "
            "to report anyway, with the default profile's precision rules; the strict "
            "profile reports them all."
        ),
    )
    honor_bare_noqa: bool = Field(
        default=True,
        description="A bare noqa comment (no ids) suppresses every smell on its line.",
    )
    max_findings: int | None = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="Keep at most this many findings, highest severity and confidence first.",
    )
    llm_batch_size: int = Field(
        default=5, ge=1, le=50, description="Test functions per LLM review call."
    )
    llm_min_confidence: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="LLM findings below this confidence are dropped.",
    )

    @field_validator("ignore", "enable")
    @classmethod
    def _known_ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [v for v in value if v not in ALL_SMELLS]
        if unknown:
            raise ValueError(
                f"unknown smell id(s): {', '.join(unknown)}; valid ids: {', '.join(sorted(SMELLS))}"
            )
        return value


class FileReport(BaseModel):
    """What happened to one input file (every input file gets exactly one)."""

    path: str
    status: str = Field(description="ok | syntax-error | encoding-error")
    lines: int = 0
    tests: int = 0
    findings: int = 0


class Summary(BaseModel):
    """Counts over the final findings."""

    total: int = 0
    by_severity: dict[str, int] = Field(default_factory=dict)
    by_smell: dict[str, int] = Field(default_factory=dict)
    by_file: dict[str, int] = Field(default_factory=dict)
    by_source: dict[str, int] = Field(default_factory=dict)
    #: Findings left out because of ``max_findings`` (lowest priority first).
    truncated: int = 0


class Metrics(BaseModel):
    """Run metrics of the API response."""

    analysis_time_ms: float = 0.0
    files_analyzed: int = 0
    tests_analyzed: int = 0
    lines_analyzed: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    stage_ms: dict[str, float] = Field(default_factory=dict)


class AnalysisResult(BaseModel):
    """Result of :func:`tools.test_analysis.pipeline.analyze_files`."""

    #: Typed Issue: Finding instances are accepted and serialised without their context.
    issues: list[Issue]
    summary: Summary
    metrics: Metrics
    files: list[FileReport]
