"""The analytics agent in the root graph: its subgraph (AgentInput in, AgentOutput out) and spec.

    START -> prepare_question -+-> answer_with_model -+-> publish_answer -> END
                               |          | (failed)  |
                               |          v           |
                               +-> answer_with_plan --+
                               +-> END  (no question, too long, or no engine: answered here)

`answer_with_model` runs the analytics `create_agent` graph with the chat model and the five
tools (when a model is configured); if the model fails, the turn goes on to `answer_with_plan`,
the same graph with the deterministic plan in the model's seat (generate SQL -> execute -> KPI
analysis + chart, and the root-cause analysis when the question asks why). Each runs the agent
as a subgraph of its own node (Studio's xray shows its model and tools; its messages, the tool
calls and results, stay in its own checkpoint namespace and never reach the root state).
`publish_answer` stores the chart for the run's owner (`ChartStore`, so another API key cannot
fetch it) and writes one `AgentAnswer` whose `data` is the REST shape (`AnalyticsAnswer`: sql,
columns, rows capped at ANALYTICS_ROW_CAP, analysis, recommendations, chart with its URLs,
root_cause), and `agent_contexts["analytics"]`.

The tools read the run's `AnalyticsContext`: the reader pool and limits the app opened
(`app/components/analytics.py` provides it to the agents' services), with the run's owner (the
API key's owner id, never a caller-supplied user id) as the user. Progress events of the tools
reach the root stream (`/chat/stream` forwards them as `progress`), and the model's tokens stream
from the agent's `model` node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from agents.analytics.nodes import (
    MODEL_NODE,
    AnalyticsAgentState,
    after_model,
    make_after_prepare,
    make_answer_with_model,
    make_answer_with_plan,
    prepare_question,
    publish_answer,
)
from agents.analytics.probe import analysis_evidence
from agents.analytics.react import NAME, build_analytics_agent
from agents.analytics.tools import ANALYTICS_TOOLS
from agents.contract.context import AgentServices, RunContext
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentInput, AgentOutput
from tools.analytics.reference import CARRIERS, MAKES, PLANTS, REGIONS
from tools.mcp_client import remote_tools_of

# --- quality-gate checks ---------------------------------------------------------------------


def _has_request(state: Mapping[str, Any]) -> str | None:
    if state.get("agent_input"):
        return None
    messages = state.get("messages")
    if not isinstance(messages, list) or not any(m.type == "human" for m in messages):
        return "the state has no user message to answer"
    return None


def _has_question(state: Mapping[str, Any]) -> str | None:
    return None if str(state.get("analytics_question") or "").strip() else "no question"


def _has_result(state: Mapping[str, Any]) -> str | None:
    return None if isinstance(state.get("analytics_result"), dict) else "no result to publish"


def _result_or_error(update: Mapping[str, Any]) -> str | None:
    if isinstance(update.get("analytics_result"), dict) or update.get("errors"):
        return None
    return "neither a result nor an error"


def _answered(update: Mapping[str, Any]) -> str | None:
    answer = (update.get("agent_answers") or {}).get(NAME)
    if not answer or not isinstance(answer.get("data"), dict):
        return "no answer written"
    return None


# --- registration ----------------------------------------------------------------------------


def build(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
    """The agent's subgraph. Its `create_agent` graphs are built once, here: the plan always
    (it answers without a model, and when the model fails), the model's when there is one."""
    model = services.llm("chat")
    plan_agent = build_analytics_agent(None, name="analytics_plan")
    nodes: dict[str, Any] = {
        "prepare_question": gated("prepare_question", prepare_question, check_input=_has_request),
        "answer_with_plan": gated(
            "answer_with_plan",
            make_answer_with_plan(plan_agent),
            check_input=_has_question,
            check_output=_result_or_error,
        ),
        "publish_answer": gated(
            "publish_answer", publish_answer, check_input=_has_result, check_output=_answered
        ),
    }
    if model is not None:
        nodes["answer_with_model"] = gated(
            "answer_with_model",
            make_answer_with_model(
                # the operator's MCP servers' tools join the analytics tools (none by default)
                build_analytics_agent(
                    model, [*ANALYTICS_TOOLS, *remote_tools_of(services)], name="analytics_agent"
                )
            ),
            check_input=_has_question,
            check_output=_result_or_error,
        )
    builder = StateGraph(AnalyticsAgentState, input_schema=AgentInput, output_schema=AgentOutput)
    for name, node in nodes.items():
        builder.add_node(name, node)
    builder.add_edge(START, "prepare_question")
    first = ["answer_with_model"] if model is not None else []
    builder.add_conditional_edges(
        "prepare_question",
        make_after_prepare(model is not None),
        [*first, "answer_with_plan", END],
    )
    if model is not None:
        builder.add_conditional_edges(
            "answer_with_model", after_model, ["publish_answer", "answer_with_plan"]
        )
    builder.add_edge("answer_with_plan", "publish_answer")
    builder.add_edge("publish_answer", END)
    return builder.compile(name=NAME)


def analytics_agent() -> AgentSpec:
    """The analytics agent's registration."""
    return AgentSpec(
        name=NAME,
        description="Answers business questions about the company's automotive data with "
        "read-only SQL over the analytics database: vehicle sales, revenue, gross profit and "
        "F&I (finance and insurance: finance penetration, warranty and GAP attach rates) by "
        "dealer, region, make, model or segment; plant production (units built, build-plan "
        "attainment, defect rate, downtime); shipments (carriers, days in transit, on-time "
        "delivery, damage rate, shipping cost). It computes KPIs and trends, explains why a "
        "metric changed (root cause), and draws charts.",
        keywords=KEYWORDS + vocabulary(),
        examples=EXAMPLES,
        build=build,
        answer_nodes=frozenset({MODEL_NODE}),
        probe=asks_for_analysis,
    )


#: Routing keywords (whole words): the metrics and dimensions of the semantic layer.
KEYWORDS = (
    "units sold",
    "sales",
    "sold",
    "revenue",
    "gross profit",
    "profit",
    "f&i",
    "finance penetration",
    "attach rate",
    "warranty attach",
    "gap attach",
    "dealer",
    "dealers",
    "dealership",
    "region",
    "regions",
    "plant",
    "plants",
    "production",
    "units built",
    "build plan",
    "plan attainment",
    "defect rate",
    "defects",
    "downtime",
    "shipments",
    "shipping cost",
    "carrier",
    "carriers",
    "damage rate",
    "on-time delivery",
    "days in transit",
    "transport mode",
    "msrp",
    "kpi",
    "kpis",
    "root cause",
    "month over month",
    "year over year",
    "last quarter",
    "q1",
    "q2",
    "q3",
    "q4",
    "chart",
    "segment",
    "selling",
)


async def asks_for_analysis(message: str, context: RunContext) -> float | None:
    """The router's data tier: a message naming one of the dataset's measures and asking for
    an analysis of it (`agents.analytics.probe`)."""
    return analysis_evidence(message, KEYWORDS + vocabulary())


def vocabulary() -> tuple[str, ...]:
    """The dataset's own names as keywords: brands, plants, carriers and regions (a message
    naming one and a metric is the analytics agent's; "West" alone is too common a word)."""
    names = [
        *MAKES,
        *(p.short for p in PLANTS),
        *(c.short for c in CARRIERS),
        *(r for r in REGIONS if r != "West"),
    ]
    return tuple(dict.fromkeys(n.lower() for n in names))


EXAMPLES = (
    "Units sold by region in 2025",
    "Why did the damage rate rise in Q3 2025?",
    "Monthly downtime by plant in 2025",
    "Top 5 dealers by gross profit last quarter",
    "What is our finance penetration by region?",
    "Chart revenue by month for 2024 and 2025",
    "Which carrier has the worst on-time delivery rate?",
    "How did the Midwest warranty attach rate change this year?",
)
