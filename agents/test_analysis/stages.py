"""The CPU stages of the analysis: ``parse_files``, ``check_rules``, ``synthesize_findings``,
``enhance_findings``.

Each reads the plan and the request from the state and writes plain data (see
:mod:`agents.test_analysis.state`). Parsing goes through :class:`FileWork`, so a file is
parsed once per run whichever of these stages (or the planner) reaches it first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agents.test_analysis.catalogue import ENCODING_ERROR, SYNTAX_ERROR
from agents.test_analysis.enhance import enhance
from agents.test_analysis.filework import FileWork
from agents.test_analysis.models import AnalysisConfig, FileReport, Finding, Source
from agents.test_analysis.pipeline import encoding_error_finding
from agents.test_analysis.planning import uses_rules
from agents.test_analysis.state import FindingData, SourceEntry
from agents.test_analysis.synthesis import synthesize
from agents.test_analysis.validation import DecodeProblem
from graph.state import MultiAgentState

__all__ = [
    "config_of",
    "findings_of",
    "make_check_rules",
    "make_enhance_findings",
    "make_parse_files",
    "synthesize_findings",
]

Node = Callable[[MultiAgentState], dict[str, Any]]


def config_of(state: MultiAgentState) -> AnalysisConfig:
    """The plan's effective configuration."""
    return AnalysisConfig.model_validate((state.get("analysis_plan") or {})["config"])


def _files(state: MultiAgentState) -> list[SourceEntry]:
    return list((state.get("analysis_request") or {}).get("files") or [])


def findings_of(data: Iterable[FindingData]) -> list[Finding]:
    """Findings back from their state form."""
    return [Finding.model_validate(d) for d in data]


def _dump(findings: Iterable[Finding]) -> list[FindingData]:
    return [f.model_dump(mode="json") for f in findings]


def make_parse_files(filework: FileWork) -> Node:
    def parse_files(state: MultiAgentState) -> dict[str, Any]:
        """Parse every file (cached) and report per file: status, lines, tests found."""
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

    return parse_files


def make_check_rules(filework: FileWork) -> Node:
    def check_rules(state: MultiAgentState) -> dict[str, Any]:
        """Run every rule of the catalogue over every file (memoised per file and config)."""
        config = config_of(state)
        found: list[Finding] = []
        # Backwards: parse_files walks forwards, so on a cold cache each parses half.
        for entry in reversed(_files(state)):
            path = entry["path"]
            problem = entry.get("decode_error")
            if problem:
                if ENCODING_ERROR not in config.ignore:
                    found.append(
                        encoding_error_finding(
                            path, DecodeProblem(problem["message"], problem["line"])
                        )
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

    return check_rules


def synthesize_findings(state: MultiAgentState) -> dict[str, Any]:
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


def make_enhance_findings(filework: FileWork) -> Node:
    def enhance_findings(state: MultiAgentState) -> dict[str, Any]:
        """Give every finding a concrete fix, a short example and a clamped confidence."""
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

    return enhance_findings
