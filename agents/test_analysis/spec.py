"""The test-analysis agent's registration: its subgraph of stages, quality gates, the fan-out.

    START -> plan_analysis -+-> parse_files ----------------+
                            +-> check_rules ----------------+-> synthesize_findings (deferred)
                            +-> review_with_llm [Send x N] -+        -> enhance_findings
                            +-> assure_quality (nothing to analyse)   -> assure_quality -> END

``fan_out`` (the routing function after ``plan_analysis``) returns node names for the two
CPU branches and one ``Send`` per LLM batch; ``synthesize_findings`` is deferred, so it runs
once, after every branch of the step has written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents.contract.context import AgentServices, RunContext
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput
from agents.test_analysis.chat_input import extract_test_files
from agents.test_analysis.planning import plan_analysis, uses_llm, uses_rules
from agents.test_analysis.prompts import NO_CODE_ANSWER
from agents.test_analysis.results import assemble, check
from agents.test_analysis.review import make_review_node
from agents.test_analysis.stages import (
    check_rules,
    enhance_findings,
    parse_files,
    synthesize_findings,
)
from agents.test_analysis.state import AGENT, AnalysisOptions, AnalysisState, ReviewTask
from tools.test_analysis.report import summary_text

__all__ = ["analysis_agent", "assure_quality", "build", "fan_out"]

FAN_OUT_TARGETS = ["parse_files", "check_rules", "review_with_llm", "assure_quality"]


# --- routing ---------------------------------------------------------------------------------


def fan_out(state: AnalysisState) -> list[str | Send]:
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


def assure_quality(state: AnalysisState) -> dict[str, Any]:
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


def build(peers: Sequence[AgentCard] = (), services: AgentServices | None = None) -> AgentGraph:
    """The agent's subgraph: the seven stages, each behind the quality gate, and the fan-out."""
    builder = StateGraph(AnalysisState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node(
        "plan_analysis",
        gated(
            "plan_analysis",
            plan_analysis,
            check_input=_request_present,
            check_output=_planned,
        ),
    )
    builder.add_node(
        "parse_files", gated("parse_files", parse_files, check_output=_has("analysis_files"))
    )
    builder.add_node(
        "check_rules", gated("check_rules", check_rules, check_output=_has("rule_findings"))
    )
    builder.add_node(
        "review_with_llm",
        gated(
            "review_with_llm",
            make_review_node(),
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
        gated("enhance_findings", enhance_findings, check_output=_suggested),
    )
    builder.add_node(
        "assure_quality", gated("assure_quality", assure_quality, check_output=_answered)
    )
    builder.add_edge(START, "plan_analysis")
    builder.add_conditional_edges("plan_analysis", fan_out, FAN_OUT_TARGETS)
    for branch in ("parse_files", "check_rules", "review_with_llm"):
        builder.add_edge(branch, "synthesize_findings")
    builder.add_edge("synthesize_findings", "enhance_findings")
    builder.add_edge("enhance_findings", "assure_quality")
    builder.add_edge("assure_quality", END)
    return builder.compile(name=AGENT)


#: A test named by its identifier in prose ("does test_checkout_flow check too much?",
#: "TestInvoiceTotals is slow"): pytest's and unittest's naming, which no other agent's data
#: uses; scored like a near-certain data match, below pasted test code.
NAMED_TEST = 0.85
_TEST_NAME = re.compile(r"(?<![\w./-])(?:test_[a-z0-9_]+|Test[A-Z][A-Za-z0-9]+)\b")


async def holds_test_code(message: str, context: RunContext) -> float | None:
    """The router's data tier: a message that holds test code (fenced or pasted, parseable,
    with a test in it) is this agent's, whatever its words say; one that names a test by its
    identifier scores `NAMED_TEST`."""
    if extract_test_files(message[:200_000]):
        return 1.0
    return NAMED_TEST if _TEST_NAME.search(message[:2000]) else None


def analysis_agent() -> AgentSpec:
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
        build=build,
        options=AnalysisOptions,
        probe=holds_test_code,
    )
