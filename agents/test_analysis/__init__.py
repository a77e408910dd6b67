"""Test-analysis agent: the analysis core (parsing, rules, synthesis, enhancement).

Pure, synchronous Python; the graph nodes, REST endpoints and background workers call it.
Those live in the agent's other modules (imported by name, not re-exported here, so that
importing the core stays free of LangGraph and FastAPI):

    agent.py       registration, the seven stage nodes and their quality gates, the fan-out
    state.py       the AnalysisSection of the graph state (plain data) and its reducers
    planning.py    plan_analysis: mode, files, LLM batches, estimates
    stages.py      parse_files, check_rules, synthesize_findings, enhance_findings
    review.py      review_with_llm (one Send task per batch); prompts.py its prompts
    results.py     assure_quality's result schema and checks; report.py the chat summary
    filework.py    parse-once, single-flight parsing shared by the stages
    chat_input.py  test code out of a chat message
    requests.py    API input processing; api.py the REST router; runs.py graph input/runs
    jobs.py        background analyses in Redis; worker.py the Redis Streams worker;
                   lifecycle.py per-process wiring (job store, worker, synchronous graph)

Entry points::

    analyze_files(files, config) -> AnalysisResult         # rules-only, the whole pipeline
    validate_files(files, max_files=, max_total_bytes=)    # input processing (4xx errors)
    parse_file(path, text, cache=) -> ParsedFile           # cached AST + discovered tests
    check_file(parsed, config) -> list[Finding]            # every smell of SMELLS.md
    batch_tests_for_llm(parsed_files, batch_size) -> list[LLMBatch]
    validate_llm_review(answer, batch, min_confidence) -> ReviewValidation
    merge_findings(rule, llm) / synthesize(...) / summarize(...)
    enhance(findings, parsed_files) -> list[Finding]

Suppression: ``# noqa: <smell-id>[, ...]`` on a finding's line suppresses those smells there;
a bare ``# noqa`` suppresses every smell on its line (``honor_bare_noqa=False`` disables
that); test- and class-level smells take the comment on the ``def``/``class`` line. The
config's ``ignore`` list switches smells off for the whole request. See ``rules/noqa.py``.

Dedupe and confidence: see ``synthesis.py`` (same file/line/smell is one finding; rule and
LLM agreeing combine by noisy-OR).
"""

from __future__ import annotations

from agents.test_analysis.cache import DEFAULT_PARSE_CACHE, CacheStats, ParseCache
from agents.test_analysis.catalogue import (
    ALL_SMELLS,
    ENCODING_ERROR,
    SMELLS,
    SYNTAX_ERROR,
    Severity,
    Smell,
)
from agents.test_analysis.enhance import enhance, enhance_one
from agents.test_analysis.llm import (
    DroppedFinding,
    LLMBatch,
    LLMReview,
    LLMReviewFinding,
    LLMTestUnit,
    MalformedLLMOutput,
    ReviewValidation,
    batch_tests_for_llm,
    estimate_tokens,
    parse_llm_json,
    review_json_schema,
    validate_llm_review,
)
from agents.test_analysis.models import (
    AnalysisConfig,
    AnalysisResult,
    FileReport,
    Finding,
    Issue,
    Metrics,
    Source,
    SourceFile,
    Summary,
)
from agents.test_analysis.parsing import ParsedFile, ParseStats, TestClass, TestFunction, parse_file
from agents.test_analysis.pipeline import analyze_files, encoding_error_finding, validate_files
from agents.test_analysis.rules import DEFAULT_CONFIG, check_file, syntax_error_finding
from agents.test_analysis.synthesis import (
    merge_findings,
    prioritise,
    sort_findings,
    summarize,
    synthesize,
)
from agents.test_analysis.validation import (
    AnalysisInputError,
    DecodeProblem,
    DuplicatePathError,
    LimitExceededError,
    UnsafePathError,
    check_limits,
    content_size,
    decode_content,
    normalize_path,
)

__all__ = [
    "ALL_SMELLS",
    "DEFAULT_CONFIG",
    "DEFAULT_PARSE_CACHE",
    "ENCODING_ERROR",
    "SMELLS",
    "SYNTAX_ERROR",
    "AnalysisConfig",
    "AnalysisInputError",
    "AnalysisResult",
    "CacheStats",
    "DecodeProblem",
    "DroppedFinding",
    "DuplicatePathError",
    "FileReport",
    "Finding",
    "Issue",
    "LLMBatch",
    "LLMReview",
    "LLMReviewFinding",
    "LLMTestUnit",
    "LimitExceededError",
    "MalformedLLMOutput",
    "Metrics",
    "ParseCache",
    "ParseStats",
    "ParsedFile",
    "ReviewValidation",
    "Severity",
    "Smell",
    "Source",
    "SourceFile",
    "Summary",
    "TestClass",
    "TestFunction",
    "UnsafePathError",
    "analyze_files",
    "batch_tests_for_llm",
    "check_file",
    "check_limits",
    "content_size",
    "decode_content",
    "encoding_error_finding",
    "enhance",
    "enhance_one",
    "estimate_tokens",
    "merge_findings",
    "normalize_path",
    "parse_file",
    "parse_llm_json",
    "prioritise",
    "review_json_schema",
    "sort_findings",
    "summarize",
    "syntax_error_finding",
    "synthesize",
    "validate_files",
    "validate_llm_review",
]
