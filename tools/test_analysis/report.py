"""The analysis as a chat answer: counts, then the top findings with file:line and a fix."""

from __future__ import annotations

from typing import Any

from tools.test_analysis.catalogue import Severity

__all__ = ["TOP_FINDINGS", "summary_text"]

#: Findings listed in a chat answer; the structured result carries all of them.
TOP_FINDINGS = 10


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _rank(issue: dict[str, Any]) -> tuple[int, float, str, int]:
    return (
        -Severity(issue["severity"]).rank,
        -float(issue.get("confidence", 0.0)),
        issue["file"],
        issue["line"],
    )


def summary_text(result: dict[str, Any], top: int = TOP_FINDINGS) -> str:
    """A readable summary of an analysis result (Markdown)."""
    metrics = result["metrics"]
    issues: list[dict[str, Any]] = result["issues"]
    by_severity = result["summary"].get("by_severity") or {}
    counts = ", ".join(f"{n} {sev}" for sev, n in by_severity.items())
    head = (
        f"Reviewed {_plural(metrics['files_analyzed'], 'file')} "
        f"({_plural(metrics['tests_analyzed'], 'test')}) in {result['mode']} mode: "
        f"{_plural(len(issues), 'finding')}" + (f" ({counts})." if counts else ".")
    )
    lines = [head]
    lines.extend(f"Note: {w}." for w in result.get("warnings") or [])
    if not issues:
        lines.append("No test smells found.")
        return "\n".join(lines)
    lines.append("")
    for n, issue in enumerate(sorted(issues, key=_rank)[:top], start=1):
        lines.append(
            f"{n}. `{issue['file']}:{issue['line']}` **{issue['smell']}** ({issue['severity']}, "
            f"{issue['source']}, confidence {float(issue['confidence']):.2f}): {issue['message']}"
        )
        if issue.get("suggestion"):
            lines.append(f"   Fix: {issue['suggestion']}")
    if len(issues) > top:
        lines.append(f"\n... and {len(issues) - top} more in the structured result.")
    return "\n".join(lines)
