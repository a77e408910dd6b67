"""The analysis result: its response schema, how it is assembled from the state, its checks.

``assure_quality`` builds the result from what the stages left in the state and checks it
before anyone sees it: it matches :class:`AnalysisResponse`, every input file has exactly one
report, every planned LLM batch came back, the summary counts the issues, and the metrics are
complete and consistent. A failed check is reported in ``quality`` (and the turn's errors),
never hidden.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agents.test_analysis.planning import uses_llm, uses_rules
from agents.test_analysis.state import STAGES, AnalysisState
from tools.test_analysis.schemas import FileReport, Issue, Metrics, Summary

__all__ = ["AnalysisResponse", "QualityReport", "ResultMetrics", "assemble", "check"]

ISSUE_FIELDS = tuple(Issue.model_fields)


class ResultMetrics(Metrics):
    """Run metrics: the issue's fields plus what the LLM branch did."""

    llm_batches: int = Field(0, description="LLM batches planned (one review call each).")
    llm_batches_malformed: int = Field(
        0, description="Batches whose answer stayed malformed after the retry."
    )
    llm_findings_dropped: int = Field(
        0, description="LLM findings rejected (low confidence, unknown smell, wrong lines)."
    )


class FileResult(FileReport):
    """One input file's report."""

    cached: bool = Field(False, description="Served from the parse cache (not parsed again).")


class QualityReport(BaseModel):
    """The checks ``assure_quality`` ran on this result."""

    passed: bool
    checks: dict[str, bool]
    problems: list[str] = Field(default_factory=list)


class AnalysisResponse(BaseModel):
    """An analysis result (``POST /api/v1/analyze``, ``GET /analyses/{id}`` when done)."""

    issues: list[Issue]
    summary: Summary
    metrics: ResultMetrics
    files: list[FileResult]
    mode: str = Field(description="The mode that ran (rules-only | llm-only | hybrid).")
    requested_mode: str = Field(description="The mode asked for (differs after a downgrade).")
    warnings: list[str] = Field(default_factory=list)
    estimate: dict[str, float] = Field(
        default_factory=dict, description="The planner's estimate: LLM calls, tokens, seconds."
    )
    quality: QualityReport


def _ran(mode: str) -> list[str]:
    wanted = {"plan_analysis", "parse_files", "synthesize_findings", "enhance_findings"}
    if uses_rules(mode):
        wanted.add("check_rules")
    return [s for s in STAGES if s in wanted]


def assemble(state: AnalysisState) -> dict[str, Any]:
    """The result dict from the state (``quality`` still to be filled by :func:`check`)."""
    plan = state.get("analysis_plan") or {}
    findings = state.get("analysis_findings") or []
    reviews = state.get("llm_reviews") or {}
    files = state.get("analysis_files") or []
    timings = state.get("stage_ms") or {}
    metrics = ResultMetrics(
        analysis_time_ms=round((time.time() - plan.get("started_at", time.time())) * 1000, 3),
        files_analyzed=len(files),
        tests_analyzed=sum(f.get("tests", 0) for f in files),
        lines_analyzed=sum(f.get("lines", 0) for f in files),
        llm_calls=sum(r.get("calls", 0) for r in reviews.values()),
        cache_hits=plan.get("cache_hits", 0),
        stage_ms={s: timings[s] for s in STAGES if s in timings},
        llm_batches=len(plan.get("batches") or []),
        llm_batches_malformed=sum(1 for r in reviews.values() if r.get("status") != "ok"),
        llm_findings_dropped=sum(r.get("dropped", 0) for r in reviews.values()),
    )
    return {
        "issues": [{k: d[k] for k in ISSUE_FIELDS} for d in findings],
        "summary": state.get("analysis_summary") or Summary().model_dump(),
        "metrics": metrics.model_dump(),
        "files": files,
        "mode": plan.get("mode", ""),
        "requested_mode": plan.get("requested_mode", ""),
        "warnings": list(plan.get("warnings") or []),
        "estimate": dict(plan.get("estimate") or {}),
    }


def check(state: AnalysisState, result: dict[str, Any]) -> QualityReport:
    """Run the checks over ``result`` (built by :func:`assemble` from ``state``)."""
    plan = state.get("analysis_plan") or {}
    problems: list[str] = []
    checks: dict[str, bool] = {}

    def verdict(name: str, found: list[str]) -> None:
        checks[name] = not found
        problems.extend(found)

    try:
        AnalysisResponse.model_validate(
            {**result, "quality": QualityReport(passed=True, checks={})}
        )
        verdict("schema", [])
    except ValidationError as exc:
        verdict("schema", [f"result does not match the schema: {exc.errors()[0]['msg']}"])

    planned = [f["path"] for f in plan.get("files") or []]
    reported = [f.get("path") for f in result["files"]]
    missing = sorted(set(planned) - set(reported))
    extra = sorted(set(reported) - set(planned))
    verdict(
        "files",
        [f"no report for input file {p}" for p in missing]
        + [f"report for a file not in the request: {p}" for p in extra]
        + ([] if len(reported) == len(set(reported)) else ["a file is reported twice"]),
    )

    lost = []
    if uses_llm(plan.get("mode", "")):
        done = set((state.get("llm_reviews") or {}).keys())
        lost = [
            f"LLM batch {b['index']} ({b['batch_id']}) never reported back"
            for b in plan.get("batches") or []
            if b["batch_id"] not in done
        ]
    verdict("batches", lost)

    metrics = result["metrics"]
    wrong = []
    if metrics["files_analyzed"] != len(planned):
        wrong.append(f"files_analyzed is {metrics['files_analyzed']}, expected {len(planned)}")
    if result["summary"].get("total") != len(result["issues"]):
        wrong.append("summary.total does not count the issues")
    expected_stages = _ran(plan.get("mode", ""))
    if uses_llm(plan.get("mode", "")) and plan.get("batches"):
        expected_stages.append("review_with_llm")
    absent = [s for s in expected_stages if s not in metrics["stage_ms"]]
    if absent:
        wrong.append(f"stage_ms lacks {', '.join(absent)}")
    if any(isinstance(v, int | float) and v < 0 for v in metrics.values()):
        wrong.append("a metric is negative")
    verdict("metrics", wrong)
    return QualityReport(passed=not problems, checks=checks, problems=problems)
