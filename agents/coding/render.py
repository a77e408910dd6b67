"""The coding agent's answers as Markdown (for chat): a run's result, a pasted-code review."""

from __future__ import annotations

import json
from typing import Any

from tools.coding.schemas import AnalyzeErrorOutput, CheckCodeOutput, CodingResult, TestCodeOutput

MAX_SHOWN_CHARS = 1500


def _result_text(result: dict[str, Any] | None) -> str:
    if result is None:
        return ""
    text = json.dumps(result, ensure_ascii=False)
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + " ..."
    return f"Result: `{text}`"


def render_result(result: CodingResult) -> str:
    """A finished run: verdict, the code, its issues, its error or result."""
    if not result.generated_code:
        reason = "; ".join(result.code_issues) or "no code was produced"
        return f"I could not produce the function ({reason})."
    verdict = (
        f"The function passed after {result.iteration_count} iteration(s)."
        if result.is_code_valid
        else f"Best attempt after {result.iteration_count} iteration(s); it does not pass yet."
    )
    parts = [verdict, f"```python\n{result.generated_code.rstrip()}\n```"]
    if result.code_issues:
        parts.append("Issues:\n" + "\n".join(f"- {issue}" for issue in result.code_issues))
    if result.runtime_error:
        parts.append(f"Runtime error:\n```\n{result.runtime_error.strip()[-2000:]}\n```")
    shown = _result_text(result.execution_result)
    if shown:
        parts.append(shown)
    return "\n\n".join(parts)


def render_review(
    function_name: str,
    check: CheckCodeOutput,
    run: TestCodeOutput | None,
    analysis: AnalyzeErrorOutput | None,
    skipped_run: str | None = None,
) -> str:
    """Checking (and running) code the user pasted, without a model."""
    verdict = "passes the static check" if check.is_valid else "does not pass the static check"
    parts = [f"`{function_name}` {verdict}."]
    if check.issues:
        parts.append("Issues:\n" + "\n".join(f"- {issue.render()}" for issue in check.issues))
    if run is not None:
        if run.success:
            parts.append(f"It ran in the sandbox in {run.duration_ms:.0f} ms.")
            parts.append(_result_text(run.result))
        else:
            parts.append(f"Running it in the sandbox failed: {run.error_type}: {run.error}")
    elif skipped_run:
        parts.append(skipped_run)
    if analysis is not None:
        parts.append(render_analysis(analysis))
    if run is not None and run.stdout:
        parts.append(f"It printed:\n```\n{run.stdout[-1000:]}\n```")
    return "\n\n".join(part for part in parts if part)


def render_analysis(analysis: AnalyzeErrorOutput) -> str:
    """An error analysis: what went wrong, then the suggestions."""
    lines = [analysis.analysis]
    if analysis.suggestions:
        lines.append("Suggestions:\n" + "\n".join(f"- {s}" for s in analysis.suggestions))
    return "\n\n".join(lines)
