"""The CPU stages of the analysis: ``parse_files``, ``check_rules``, ``synthesize_findings``,
``enhance_findings``.

Each reads the plan and the request from the state and writes plain data (see
:mod:`agents.test_analysis.state`). Parsing goes through :class:`FileWork`, so a file is
parsed once per run whichever of these stages (or the planner) reaches it first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.runtime import Runtime

from agents.contract.context import RunContext, services_of
from agents.test_analysis.planning import uses_rules
from agents.test_analysis.state import AnalysisState, FindingData, SourceEntry
from tools.test_analysis.catalogue import ENCODING_ERROR, SYNTAX_ERROR
from tools.test_analysis.enhance import enhance
from tools.test_analysis.filework import FileWork
from tools.test_analysis.pipeline import encoding_error_finding
from tools.test_analysis.schemas import AnalysisConfig, FileReport, Finding, Source
from tools.test_analysis.synthesis import synthesize
from tools.test_analysis.validation import DecodeProblem

__all__ = [
    "config_of",
    "findings_of",
    "check_rules",
    "enhance_findings",
    "parse_files",
    "synthesize_findings",
]


def config_of(state: AnalysisState) -> AnalysisConfig:
    """The plan's effective configuration."""
    return AnalysisConfig.model_validate((state.get("analysis_plan") or {})["config"])


def _files(state: AnalysisState) -> list[SourceEntry]:
    return list((state.get("analysis_request") or {}).get("files") or [])


def findings_of(data: Iterable[FindingData]) -> list[Finding]:
    """Findings back from their state form."""
    return [Finding.model_validate(d) for d in data]


def _dump(findings: Iterable[Finding]) -> list[FindingData]:
    return [f.model_dump(mode="json") for f in findings]


def parse_files(state: AnalysisState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Parse every file (cached) and report per file: status, lines, tests found."""
    filework = services_of(runtime).engine(FileWork)
    plan = state.get("analysis_plan") or {}
    config = config_of(state)
    rules = config if uses_rules(plan.get("mode", "hybrid")) else None
    cached = {f["path"]: f.get("cached", False) for f in plan.get("files") or []}
    reports: list[dict[str, Any]] = []
    for entry in _files(state):
        path = entry["path"]
        if entry.get("decode_error"):
            report = FileReport(path=path, status=ENCODING_ERROR)
        else:
            parsed = filework.parsed(
                path,
                entry.get("content") or "",
                patterns=config.test_file_patterns,
                rules=rules,
            )
            report = FileReport(
                path=path,
                status="ok" if parsed.ok else SYNTAX_ERROR,
                lines=parsed.line_count,
                tests=len(parsed.tests),
            )
        reports.append({**report.model_dump(), "cached": cached.get(path, False)})
    return {"analysis_files": reports, "analysis_stages": ["parse_files"]}


def check_rules(state: AnalysisState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run every rule of the catalogue over every file (memoised per file and config)."""
    filework = services_of(runtime).engine(FileWork)
    config = config_of(state)
    found: list[Finding] = []
    # Backwards: parse_files walks forwards, so on a cold cache each parses half.
    for entry in reversed(_files(state)):
        path = entry["path"]
        problem = entry.get("decode_error")
        if problem:
            if ENCODING_ERROR not in config.ignore:
                found.append(
                    encoding_error_finding(path, DecodeProblem(problem["message"], problem["line"]))
                )
            continue
        found.extend(
            filework.findings(
                path,
                entry.get("content") or "",
                patterns=config.test_file_patterns,
                rules=config,
            )
        )
    return {"rule_findings": _dump(found), "analysis_stages": ["check_rules"]}


def synthesize_findings(state: AnalysisState) -> dict[str, Any]:
    """Merge rule and LLM findings, deduplicate (same file/line/smell), prioritise, sort."""
    config = config_of(state)
    rule = findings_of(state.get("rule_findings") or [])
    reviews = state.get("llm_reviews") or {}
    llm = findings_of(d for review in reviews.values() for d in review.get("findings") or [])
    kept, summary = synthesize(rule, llm, max_findings=config.max_findings)
    return {
        "analysis_findings": _dump(kept),
        "analysis_summary": summary.model_dump(),
        # the batches' sources are in the reviews' checkpoints now; stop carrying them
        "llm_batches": None,
        "analysis_stages": ["synthesize_findings"],
    }


def enhance_findings(state: AnalysisState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Give every finding a concrete fix, a short example and a clamped confidence."""
    filework = services_of(runtime).engine(FileWork)
    config = config_of(state)
    findings = findings_of(state.get("analysis_findings") or [])
    # Rule findings carry their template context; LLM findings need the source around
    # their line, so only their files are looked up (a cache hit in the same process).
    wanted = {f.file for f in findings if f.source is Source.LLM}
    parsed = {
        entry["path"]: filework.parsed(
            entry["path"],
            entry.get("content") or "",
            patterns=config.test_file_patterns,
            rules=None,
        )
        for entry in _files(state)
        if entry["path"] in wanted and not entry.get("decode_error")
    }
    return {
        "analysis_findings": _dump(enhance(findings, parsed)),
        "analysis_stages": ["enhance_findings"],
    }
