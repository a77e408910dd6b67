"""The test-analysis agent's registration: its stage nodes, their quality gates, the fan-out.

    route -> plan_analysis -+-> parse_files ----------------+
                            +-> check_rules ----------------+-> synthesize_findings (deferred)
                            +-> review_with_llm [Send x N] -+        -> enhance_findings
                            +-> assure_quality (nothing to analyse)   -> assure_quality
                                                                       -> detect_handoff

``fan_out`` (the routing function after ``plan_analysis``) returns node names for the two
CPU branches and one ``Send`` per LLM batch; ``synthesize_findings`` is deferred, so it runs
once, after every branch of the step has written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langgraph.graph import StateGraph
from langgraph.types import Send

from agents.test_analysis.cache import ParseCache
from agents.test_analysis.filework import FileWork
from agents.test_analysis.planning import make_plan_node, uses_llm, uses_rules
from agents.test_analysis.prompts import NO_CODE_ANSWER
from agents.test_analysis.report import summary_text
from agents.test_analysis.results import assemble, check
from agents.test_analysis.review import make_review_node
from agents.test_analysis.stages import (
    make_check_rules,
    make_enhance_findings,
    make_parse_files,
    synthesize_findings,
)
from agents.test_analysis.state import AGENT, STAGES, ReviewTask
from graph.deps import GraphDeps
from graph.quality import gated
from graph.registry import AgentRegistry, AgentSpec
from graph.state import AgentAnswer, MultiAgentState

__all__ = ["analysis_agent", "assure_quality", "fan_out", "filework_for", "install"]

FAN_OUT_TARGETS = ["parse_files", "check_rules", "review_with_llm", "assure_quality"]


# --- routing ---------------------------------------------------------------------------------


def fan_out(state: MultiAgentState) -> list[str | Send]:
    """After the plan: the CPU branches by name, one ``review_with_llm`` Send per batch; or
    straight to ``assure_quality`` when there is nothing to analyse."""
    plan = state.get("analysis_plan") or {}
    if plan.get("status") != "ready":
        return ["assure_quality"]
    mode = plan["mode"]
    targets: list[str | Send] = ["parse_files"]
    if uses_rules(mode):
        targets.append("check_rules")
    if uses_llm(mode):
        bar = float(plan["config"]["llm_min_confidence"])
        targets.extend(
            Send("review_with_llm", ReviewTask(batch=batch, min_confidence=bar))
            for batch in state.get("llm_batches") or []
        )
    return targets


# --- the last stage --------------------------------------------------------------------------


def assure_quality(state: MultiAgentState) -> dict[str, Any]:
    """Assemble and check the result; answer the turn with a summary and the result."""
    plan = state.get("analysis_plan") or {}
    if plan.get("status") != "ready":
        text = plan.get("problem") or NO_CODE_ANSWER
        answer = AgentAnswer(
            agent=AGENT,
            answer=text,
            method="none",
            data={"status": plan.get("status"), "problem": text},
        )
        return {"agent_answers": {AGENT: answer}, "analysis_stages": ["assure_quality"]}
    result = assemble(state)
    quality = check(state, result)
    result["quality"] = quality.model_dump()
    answer = AgentAnswer(agent=AGENT, answer=summary_text(result), method=plan["mode"], data=result)
    update: dict[str, Any] = {
        "analysis_result": result,
        "agent_answers": {AGENT: answer},
        "analysis_stages": ["assure_quality"],
    }
    if quality.problems:
        update["errors"] = [f"assure_quality: {p}" for p in quality.problems]
    return update


# --- quality-gate checks ---------------------------------------------------------------------


def _request_present(state: Mapping[str, Any]) -> str | None:
    return None if isinstance(state.get("messages"), list) else "the state has no messages"


def _planned(update: Mapping[str, Any]) -> str | None:
    plan = update.get("analysis_plan") or {}
    if plan.get("status") == "ready" and not plan.get("files"):
        return "a ready plan lists no files"
    return None


def _has(key: str) -> Any:
    def check_output(update: Mapping[str, Any]) -> str | None:
        return None if isinstance(update.get(key), list) else f"{key} is not a list"

    return check_output


def _one_batch(task: Mapping[str, Any]) -> str | None:
    return None if isinstance(task.get("batch"), dict) else "the Send carries no batch"


def _one_review(update: Mapping[str, Any]) -> str | None:
    return None if len(update.get("llm_reviews") or {}) == 1 else "expected one batch review"


def _sorted(update: Mapping[str, Any]) -> str | None:
    keys = [(f["file"], f["line"]) for f in update.get("analysis_findings") or []]
    return None if keys == sorted(keys) else "findings are not sorted by file and line"


def _suggested(update: Mapping[str, Any]) -> str | None:
    bare = [f for f in update.get("analysis_findings") or [] if not f.get("suggestion")]
    return f"{len(bare)} findings have no suggestion" if bare else None


def _answered(update: Mapping[str, Any]) -> str | None:
    return None if AGENT in (update.get("agent_answers") or {}) else "no answer written"


# --- registration ----------------------------------------------------------------------------


def filework_for(deps: GraphDeps) -> FileWork:
    """The process's parse cache and single-flight parser (shared by every graph compiled
    from these deps: the API's checkpointed graph and the synchronous endpoint's)."""
    work = deps.extras.get("analysis_filework")
    if work is None:
        s = deps.settings
        cache = ParseCache(s.analysis_parse_cache_size, s.analysis_parse_cache_ttl_seconds)
        work = deps.extras["analysis_filework"] = FileWork(cache)
    return cast(FileWork, work)


def install(builder: StateGraph[Any, Any, Any, Any], deps: GraphDeps) -> None:
    """Add the seven stages and their edges to the builder."""
    work = filework_for(deps)
    builder.add_node(
        "plan_analysis",
        gated(
            "plan_analysis",
            make_plan_node(deps, work),
            check_input=_request_present,
            check_output=_planned,
        ),
    )
    builder.add_node(
        "parse_files",
        gated("parse_files", make_parse_files(work), check_output=_has("analysis_files")),
    )
    builder.add_node(
        "check_rules",
        gated("check_rules", make_check_rules(work), check_output=_has("rule_findings")),
    )
    builder.add_node(
        "review_with_llm",
        gated(
            "review_with_llm",
            make_review_node(deps),
            check_input=_one_batch,
            check_output=_one_review,
        ),
    )
    # Deferred: it waits until every branch of the fan-out has written (their lengths differ).
    builder.add_node(
        "synthesize_findings",
        gated("synthesize_findings", synthesize_findings, check_output=_sorted),
        defer=True,
    )
    builder.add_node(
        "enhance_findings",
        gated("enhance_findings", make_enhance_findings(work), check_output=_suggested),
    )
    builder.add_node(
        "assure_quality", gated("assure_quality", assure_quality, check_output=_answered)
    )
    builder.add_conditional_edges("plan_analysis", fan_out, FAN_OUT_TARGETS)
    for branch in ("parse_files", "check_rules", "review_with_llm"):
        builder.add_edge(branch, "synthesize_findings")
    builder.add_edge("synthesize_findings", "enhance_findings")
    builder.add_edge("enhance_findings", "assure_quality")


def analysis_agent(registry: AgentRegistry) -> AgentSpec:
    """The test-analysis agent's registration."""
    return AgentSpec(
        name=AGENT,
        description="Reviews pytest and unittest test code for test smells (assertion-free "
        "tests, sleepy tests, magic numbers, duplicate asserts, mystery guests, ...) with "
        "rules and an LLM, and suggests concrete fixes.",
        keywords=(
            "pytest",
            "unittest",
            "testcase",
            "unit test",
            "unit tests",
            "test code",
            "test suite",
            "test smell",
            "test smells",
            "smell",
            "smells",
            "my tests",
            "these tests",
            "this test",
            "flaky",
            "assert",
            "assertion",
            "assertions",
            "fixture",
            "fixtures",
            "review",
        ),
        examples=(
            "Review these pytest tests for smells: def test_total(): assert total([1]) == 1",
            "Are there test smells in this unittest TestCase?",
            "Check my test code for missing assertions, sleeps and magic numbers.",
            "Which of these tests are flaky or assertion-free?",
        ),
        entry="plan_analysis",
        exit="assure_quality",
        install=install,
        nodes=STAGES,
    )
