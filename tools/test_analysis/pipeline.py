"""The rules-only pipeline in one call: validate -> parse -> rules -> synthesis -> enhance.

The graph runs the same pieces as separate nodes (``parse_files``, ``check_rules``,
``synthesize_findings``, ``enhance_findings``); :func:`analyze_files` is the synchronous path
and the reference the graph's output is compared with.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tools.test_analysis.cache import DEFAULT_PARSE_CACHE, ParseCache
from tools.test_analysis.catalogue import ENCODING_ERROR, SYNTAX_ERROR, smell
from tools.test_analysis.enhance import enhance
from tools.test_analysis.gcpause import gc_paused
from tools.test_analysis.parsing import ParsedFile, ParseStats, parse_file
from tools.test_analysis.rules import DEFAULT_CONFIG, check_file
from tools.test_analysis.schemas import (
    AnalysisConfig,
    AnalysisResult,
    FileReport,
    Finding,
    Issue,
    Metrics,
    Source,
    SourceFile,
)
from tools.test_analysis.synthesis import synthesize
from tools.test_analysis.templates import generic_suggestion
from tools.test_analysis.validation import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
    DecodeProblem,
    LimitExceededError,
    check_limits,
    content_size,
    decode_content,
    normalize_path,
)

__all__ = ["analyze_files", "encoding_error_finding", "validate_files"]


def validate_files(
    files: Iterable[SourceFile | Mapping[str, Any]],
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> list[SourceFile]:
    """Input processing: normalise paths and enforce the limits, or raise an
    :class:`~tools.test_analysis.validation.AnalysisInputError` (with its HTTP status).

    Mappings are converted with the path checked *first*, so an unsafe path raises
    :class:`UnsafePathError` itself rather than a generic validation error.
    """
    out: list[SourceFile] = []
    for item in files:
        if isinstance(item, SourceFile):
            out.append(item)
        else:
            path = normalize_path(item.get("path"))  # type: ignore[arg-type]
            out.append(SourceFile(path=path, content=item.get("content", "")))
        if len(out) > max_files:
            # stop before materialising the rest of a huge request
            raise LimitExceededError(
                f"request has more than {max_files} files; the limit is {max_files}. Split it "
                "into smaller analyses"
            )
    check_limits(
        ((f.path, content_size(f.content)) for f in out),
        max_files=max_files,
        max_total_bytes=max_total_bytes,
    )
    return out


def encoding_error_finding(path: str, problem: DecodeProblem) -> Finding:
    """The one ``encoding-error`` finding of a file whose bytes are not text."""
    return Finding(
        file=path,
        line=problem.line,
        end_line=problem.line,
        smell=ENCODING_ERROR,
        severity=smell(ENCODING_ERROR).severity,
        message=problem.message[0].upper() + problem.message[1:] + ".",
        suggestion=generic_suggestion(ENCODING_ERROR),
        confidence=1.0,
        source=Source.RULE,
        context={"error": problem.message},
    )


def analyze_files(
    files: Sequence[SourceFile | Mapping[str, Any]],
    config: AnalysisConfig | None = None,
    *,
    cache: ParseCache | None = DEFAULT_PARSE_CACHE,
    llm_findings: Iterable[Finding] = (),
    max_files: int = DEFAULT_MAX_FILES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> AnalysisResult:
    """Analyse ``files`` with the rules (plus any already validated ``llm_findings``).

    Raises only input errors (unsafe path, limits); a file that is not UTF-8 or does not parse
    is reported as a finding and every other file is still analysed.
    """
    started = time.perf_counter()
    config = config or DEFAULT_CONFIG
    sources = validate_files(files, max_files=max_files, max_total_bytes=max_total_bytes)
    llm_findings = list(llm_findings)
    # Keep parsed files only where enhance needs source context (LLM findings): holding every
    # AST until the end makes each full GC pass traverse all of them (3x slower on numpy).
    needs_context = {f.file for f in llm_findings}
    stats = ParseStats()
    parse_s = rules_s = 0.0
    parsed_files: dict[str, ParsedFile] = {}
    reports: list[FileReport] = []
    rule_findings: list[Finding] = []
    patterns = config.test_file_patterns
    for source in sources:
        t0 = time.perf_counter()
        text = decode_content(source.content)
        if isinstance(text, DecodeProblem):
            parse_s += time.perf_counter() - t0
            reports.append(FileReport(path=source.path, status=ENCODING_ERROR))
            if ENCODING_ERROR not in config.ignore:
                rule_findings.append(encoding_error_finding(source.path, text))
            continue
        with gc_paused():  # see gcpause: full GC passes cost more than the parsing
            parsed = parse_file(
                source.path, text, test_file_patterns=patterns, cache=cache, stats=stats
            )
            t1 = time.perf_counter()
            parse_s += t1 - t0
            if source.path in needs_context:
                parsed_files[source.path] = parsed
            rule_findings.extend(check_file(parsed, config))
            rules_s += time.perf_counter() - t1
        reports.append(
            FileReport(
                path=source.path,
                status="ok" if parsed.ok else SYNTAX_ERROR,
                lines=parsed.line_count,
                tests=len(parsed.tests),
            )
        )
    t2 = time.perf_counter()
    issues, summary = synthesize(rule_findings, llm_findings, max_findings=config.max_findings)
    t3 = time.perf_counter()
    issues = enhance(issues, parsed_files)
    t4 = time.perf_counter()
    for report in reports:
        report.findings = summary.by_file.get(report.path, 0)
    metrics = Metrics(
        analysis_time_ms=round((t4 - started) * 1000, 3),
        files_analyzed=len(reports),
        tests_analyzed=sum(r.tests for r in reports),
        lines_analyzed=sum(r.lines for r in reports),
        llm_calls=0,
        cache_hits=stats.hits,
        stage_ms={
            "parse": round(parse_s * 1000, 3),
            "rules": round(rules_s * 1000, 3),
            "synthesis": round((t3 - t2) * 1000, 3),
            "enhance": round((t4 - t3) * 1000, 3),
        },
    )
    public: list[Issue] = list(issues)
    return AnalysisResult(issues=public, summary=summary, metrics=metrics, files=reports)
