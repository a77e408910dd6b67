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

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.analytics.react import (
    MAX_QUESTION_CHARS,
    NAME,
    Agent,
    AnalyticsAnswer,
    answer_question,
    build_analytics_agent,
)
from agents.contract.context import AgentServices, RunContext, context_of, services_of
from agents.contract.fallbacks import failure
from agents.contract.messages import last_user_text
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from tools.analytics.chartstore import ChartStore
from tools.analytics.context import AnalyticsContext
from tools.analytics.outputs import ChartConfigOutput
from tools.analytics.reference import CARRIERS, MAKES, PLANTS, REGIONS
from tools.operations import EngineNotOpen

log = logging.getLogger(__name__)

#: The node of the `create_agent` graph whose tokens are the answer.
MODEL_NODE = "model"


class AnalyticsRequest(BaseModel):
    """A question for the analytics agent (``agent_input`` of a turn that names the agent, and
    the body of ``POST /analytics/query``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="A business question about sales, F&I, production or shipments, e.g. "
        "'Why did the damage rate rise in Q3 2025?'.",
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain more than whitespace")
        return value.strip()


class AnalyticsAgentState(AgentState, total=False):
    """The agent's working state (never in the root state)."""

    analytics_question: str | None
    """The question of this turn, validated (None when there is none to answer)."""
    analytics_result: dict[str, Any] | None
    """This turn's `AnalyticsAnswer` (JSON), once a strategy produced it."""
    analytics_by_model: bool
    """Whether the model's agent produced it (else the deterministic plan)."""


# --- prepare_question ------------------------------------------------------------------------


def _problem(exc: ValidationError) -> str:
    reasons = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()[:3]
    )
    return f"I cannot answer this analytics request ({reasons})."


def _refusal(text: str, method: str, **data: Any) -> AgentAnswer:
    return AgentAnswer(agent=NAME, answer=text, method=method, data={"problem": text, **data})


async def prepare_question(
    state: AnalyticsAgentState, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """The turn's question: the structured input when the agent was asked by name with one,
    else the latest user message; bounded, or answered here with what to ask."""
    raw = state.get("agent_input")
    candidate: Any = raw if raw else {"question": last_user_text(state.get("messages", []))}
    try:
        question = AnalyticsRequest.model_validate(candidate).question
    except ValidationError as exc:
        text = _problem(exc)
        if not raw:
            text = (
                f"Ask me one business question of at most {MAX_QUESTION_CHARS} characters, "
                "e.g. 'Units sold by region in 2025' or 'Why did the damage rate rise in Q3 "
                "2025?'."
            )
        return {"analytics_question": None, "agent_answers": {NAME: _refusal(text, "validation")}}
    try:
        services_of(runtime).engine(AnalyticsContext)
    except EngineNotOpen as exc:
        text = str(exc)
        data = AnalyticsAnswer(
            question=question, text=text, method="none", unavailable=True
        ).model_dump(mode="json")
        answer = AgentAnswer(agent=NAME, answer=text, method="none", data=data)
        return {
            "analytics_question": None,
            "agent_answers": {NAME: answer},
            "errors": [f"analytics: {text}"],
        }
    return {"analytics_question": question}


Step = Literal["answer_with_model", "answer_with_plan", "publish_answer", "__end__"]


def make_after_prepare(has_model: bool) -> Callable[[AnalyticsAgentState], Step]:
    """The edge after prepare_question: the model's agent when there is a model, else the
    plan; done when prepare_question answered."""

    def after_prepare(state: AnalyticsAgentState) -> Step:
        if not state.get("analytics_question"):
            return "__end__"
        return "answer_with_model" if has_model else "answer_with_plan"

    return after_prepare


def after_model(state: AnalyticsAgentState) -> Step:
    """On to publish the model's answer, or to the plan when the model failed."""
    return "publish_answer" if state.get("analytics_result") else "answer_with_plan"


# --- answer_with_model / answer_with_plan ----------------------------------------------------


def _history(messages: Sequence[AnyMessage]) -> list[BaseMessage]:
    """The conversation before the latest user message (the agent keeps its plain turns)."""
    asked = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return list(messages[:asked]) if asked > 0 else []


async def _context(runtime: Runtime[RunContext], model: BaseChatModel | None) -> AnalyticsContext:
    """The run's AnalyticsContext: the process's pool and limits, the run's owner as user."""
    run = context_of(runtime)
    base = run.require_services().engine(AnalyticsContext)
    return replace(base, user_id=run.owner, sql_model=model)


def make_answer_with_model(agent: Agent) -> Any:
    """The node running the model's agent (a failure is recorded; the plan takes over)."""

    async def answer_with_model(
        state: AnalyticsAgentState, runtime: Runtime[RunContext]
    ) -> dict[str, Any]:
        """Answer with the chat model choosing and sequencing the tools."""
        model = services_of(runtime).llm("chat")
        ctx = await _context(runtime, model)
        question = str(state.get("analytics_question") or "")
        history = _history(state.get("messages", []))
        try:
            result = await answer_question(question, ctx, agent=agent, history=history)
        except GraphBubbleUp:
            raise
        except Exception as exc:  # the turn still answers, with the plan
            log.warning("analytics: the model's agent failed (%s); using the plan", exc)
            line = failure("answer_with_model", exc, "the deterministic plan")
            return {"analytics_result": None, "errors": [line]}
        return {"analytics_result": result.model_dump(mode="json"), "analytics_by_model": True}

    return answer_with_model


def make_answer_with_plan(agent: Agent) -> Any:
    """The node running the deterministic plan (no model, or the model failed)."""

    async def answer_with_plan(
        state: AnalyticsAgentState, runtime: Runtime[RunContext]
    ) -> dict[str, Any]:
        """Answer with the plan: SQL -> rows -> KPIs + chart (+ root cause for a why)."""
        ctx = await _context(runtime, None)
        question = str(state.get("analytics_question") or "")
        history = _history(state.get("messages", []))
        result = await answer_question(question, ctx, agent=agent, history=history)
        return {"analytics_result": result.model_dump(mode="json"), "analytics_by_model": False}

    return answer_with_plan


# --- publish_answer --------------------------------------------------------------------------


async def _store_chart(
    services: AgentServices, owner: str, data: dict[str, Any], errors: list[str]
) -> None:
    """Store the answer's chart for the owner and write its URLs into ``data``."""
    chart = data.get("chart")
    if not chart:
        return
    try:
        store = services.engine(ChartStore)
    except EngineNotOpen:
        return  # no chart store in this process (a bare graph in a test): no URLs
    try:
        saved = await store.save(owner, ChartConfigOutput.model_validate(chart))
    except Exception as exc:  # the answer stands without a link; the spec is in it anyway
        log.warning("analytics: chart not stored (%s: %s)", type(exc).__name__, exc)
        errors.append(f"publish_answer: the chart was not stored ({type(exc).__name__})")
        return
    data["chart"] = saved.model_dump(mode="json")


def _remember(data: dict[str, Any]) -> dict[str, Any]:
    """What the agent keeps of the turn (given back next turn in agent_contexts)."""
    chart = data.get("chart") or {}
    return {
        "last_question": data.get("question"),
        "last_sql": data.get("sql"),
        "last_columns": data.get("columns") or [],
        "last_row_count": data.get("row_count") or 0,
        "last_chart_id": chart.get("chart_id"),
    }


async def publish_answer(
    state: AnalyticsAgentState, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Store the chart for the run's owner; write the answer and the agent's context."""
    run = context_of(runtime)
    data = dict(state.get("analytics_result") or {})
    errors: list[str] = []
    await _store_chart(run.require_services(), run.owner, data, errors)
    answer = AgentAnswer(
        agent=NAME,
        answer=str(data.get("text") or ""),
        method="llm" if state.get("analytics_by_model") else "plan",
        data=data,
    )
    return {
        "agent_answers": {NAME: answer},
        "agent_contexts": {NAME: _remember(data)},
        "errors": errors,
    }


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
            make_answer_with_model(build_analytics_agent(model, name="analytics_agent")),
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
