"""Synthesis: merge rule and LLM findings, deduplicate, prioritise, sort, summarise.

Dedupe policy: findings with the same (file, line, smell) are one finding. Within a group the
rule finding wins when there is one (it carries the exact range and the context the fix
templates need), else the most confident LLM finding. When a rule *and* the LLM report it,
the kept finding's confidence is the noisy-OR of the best of each side,
``1 - (1 - c_rule) * (1 - c_llm)``: two independent detectors agreeing is stronger evidence
than either (0.7 and 0.8 -> 0.94), and it never exceeds 1.

Priority: when ``max_findings`` cuts the list, the highest severity goes first, then the
highest confidence, then file/line. The kept findings are returned sorted by file, line,
severity (highest first) and smell id, so the output is stable for a given input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tools.test_analysis.schemas import Finding, Severity, Source, Summary

__all__ = ["merge_findings", "prioritise", "sort_findings", "summarize", "synthesize"]


def _agree(a: float, b: float) -> float:
    return 1.0 - (1.0 - a) * (1.0 - b)


def merge_findings(*groups: Iterable[Finding]) -> list[Finding]:
    """Deduplicate findings from any number of sources (see the module docstring)."""
    best_rule: dict[tuple[str, int, str], Finding] = {}
    best_llm: dict[tuple[str, int, str], Finding] = {}
    order: dict[tuple[str, int, str], None] = {}
    for group in groups:
        for f in group:
            key = (f.file, f.line, f.smell)
            order[key] = None
            table = best_rule if f.source is Source.RULE else best_llm
            current = table.get(key)
            if current is None or f.confidence > current.confidence:
                table[key] = f
    merged: list[Finding] = []
    for key in order:
        rule = best_rule.get(key)
        llm = best_llm.get(key)
        if rule is not None and llm is not None:
            merged.append(
                rule.model_copy(update={"confidence": _agree(rule.confidence, llm.confidence)})
            )
        else:
            merged.append(rule if rule is not None else llm)  # type: ignore[arg-type]
    return merged


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Sorted by file, line, severity (highest first), smell id."""
    return sorted(findings, key=lambda f: (f.file, f.line, -f.severity.rank, f.smell))


def prioritise(findings: list[Finding], max_findings: int | None) -> tuple[list[Finding], int]:
    """Keep the ``max_findings`` most important findings; returns ``(kept, dropped)``."""
    if max_findings is None or len(findings) <= max_findings:
        return sort_findings(findings), 0
    ranked = sorted(
        findings, key=lambda f: (-f.severity.rank, -f.confidence, f.file, f.line, f.smell)
    )
    return sort_findings(ranked[:max_findings]), len(findings) - max_findings


def summarize(findings: list[Finding], *, truncated: int = 0) -> Summary:
    """Counts by severity, smell, file and source."""
    by_severity: Counter[str] = Counter()
    by_smell: Counter[str] = Counter()
    by_file: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    for f in findings:
        by_severity[f.severity.value] += 1
        by_smell[f.smell] += 1
        by_file[f.file] += 1
        by_source[f.source.value] += 1
    return Summary(
        total=len(findings),
        by_severity={
            s.value: by_severity[s.value]
            for s in sorted(Severity, reverse=True)
            if by_severity[s.value]
        },
        by_smell=dict(by_smell.most_common()),
        by_file=dict(sorted(by_file.items())),
        by_source=dict(by_source),
        truncated=truncated,
    )


def synthesize(
    rule_findings: Iterable[Finding],
    llm_findings: Iterable[Finding] = (),
    *,
    max_findings: int | None = None,
) -> tuple[list[Finding], Summary]:
    """merge -> prioritise -> summarise, the whole ``synthesize_findings`` stage."""
    merged = merge_findings(rule_findings, llm_findings)
    kept, dropped = prioritise(merged, max_findings)
    return kept, summarize(kept, truncated=dropped)
