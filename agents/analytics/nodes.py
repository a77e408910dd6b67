"""The analytics agent's nodes and edges, with its working state and request model.

`prepare_question` validates the turn's question (or answers with what to ask),
`answer_with_model` / `answer_with_plan` run the `create_agent` graph with the chat model or
the deterministic plan in the model's seat, `publish_answer` stores the chart for the run's
owner and writes the answer; `spec.py` wires them into the agent's subgraph.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.analytics.react import (
    MAX_QUESTION_CHARS,
    NAME,
    Agent,
    AnalyticsAnswer,
    answer_question,
)
from agents.contract.context import AgentServices, RunContext, context_of, services_of
from agents.contract.fallbacks import failure
from agents.contract.messages import last_user_text
from agents.contract.state import AgentAnswer, AgentState
from tools.analytics.chartstore import ChartStore
from tools.analytics.context import AnalyticsContext
from tools.analytics.outputs import ChartConfigOutput
from tools.operations import EngineNotOpen

log = logging.getLogger(__name__)

#: The node of the `create_agent` graph whose tokens are the answer.
MODEL_NODE = "model"
#: Data points spelled out in a chart's alt text (the rest are in the answer's rows).
ALT_POINTS = 12


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


def chart_alt(chart: ChartConfigOutput) -> str:
    """The chart in words, for screen readers and when the image does not load (alt text)."""
    kind = chart.chart_type.replace("_", " ")
    what = f"{chart.y_axis} by {chart.x_axis}" if chart.x_axis else chart.y_axis
    if chart.series:
        what += f" and {chart.series}"
    points = ", ".join(
        f"{label}: {value:g}"
        for label, value in zip(chart.labels[:ALT_POINTS], chart.values, strict=False)
        if value is not None
    )
    more = f" (first {ALT_POINTS} of {len(chart.labels)})" if len(chart.labels) > ALT_POINTS else ""
    text = f"{kind} chart: {chart.title} ({what})" + (f"; {points}{more}" if points else "")
    # markdown alt text: brackets and line breaks would end it early
    return " ".join(text.replace("[", "(").replace("]", ")").split())


def with_chart_image(text: str, data: dict[str, Any]) -> str:
    """The answer text with its chart as a markdown image on the chart's signed link, linked to
    itself (chat UIs render it; the key-protected URLs cannot be loaded by an <img>)."""
    raw = data.get("chart")
    if not raw or not raw.get("image_url"):
        return text
    chart = ChartConfigOutput.model_validate(raw)
    # a linked image: agent-chat-ui draws markdown images as small thumbnails, so a click on it
    # opens the chart at full size
    return f"{text}\n\n[![{chart_alt(chart)}]({chart.image_url})]({chart.image_url})"


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
        answer=with_chart_image(str(data.get("text") or ""), data),
        method="llm" if state.get("analytics_by_model") else "plan",
        data=data,
    )
    return {
        "agent_answers": {NAME: answer},
        "agent_contexts": {NAME: _remember(data)},
        "errors": errors,
    }
