"""Operations of the app layer: what needs the graph, typed like a capability's operations.

A capability's operations (``tools/<cap>/operations.py``) reach only their engine; these two run
the compiled graph, so they live here and find the process's :class:`~app.services.Services`
as their engine (``ctx.engine(Services)``; :func:`app_engines` gives it, next to the agents'
engines). The MCP server serves them with the registry's operations
(:data:`GRAPH_OPERATIONS`), with no code per tool:

- ``chat``: one turn of the routed graph on a session the caller owns, exactly as ``POST
  /chat`` (:func:`app.routers.chat.answer_turn`: the same session ids, namespaced per owner,
  the same lock, thread quota and errors);
- ``ask_documents``: the knowledge agent's cited answer to a question, run like ``POST
  /analytics/query`` runs its agent: on the graph without a checkpointer, so a question leaves
  no session behind and counts against no thread quota;
- ``query_analytics``: the analytics agent's answer to a question in words, exactly as ``POST
  /analytics/query`` (:func:`app.routers.analytics.answer_query`: the same body, time limit and
  refusals; without a chat model the agent's deterministic plan answers). The SQL-taking
  operation is the analytics capability's ``run_sql``.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import HTTPException
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from agents.analytics.nodes import AnalyticsRequest
from app.routers.analytics import answer_query
from app.routers.chat import ChatMessage, answer_turn
from app.security import Caller
from app.services import Services
from app.sessions import SESSION_ID_PATTERN
from graph.state import ChatInput
from tools.knowledge.operations import MAX_QUERY_CHARS
from tools.operations import (
    Arguments,
    Engines,
    Operation,
    OperationContext,
    OperationError,
    operation,
)

CAPABILITY = "graph"
#: The agent ``ask_documents`` is routed to.
KNOWLEDGE_AGENT = "knowledge"


class AppEngines:
    """The agents' engines plus the process's services (what the graph operations need)."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def engine(self, kind: type[Any]) -> Any:
        if isinstance(self.services, kind):
            return self.services
        return self.services.agents.engine(kind)


def app_engines(services: Services) -> Engines:
    """Engines for an operation context in the app: the agents' engines and ``Services``."""
    return AppEngines(services)


def _refused(exc: HTTPException) -> OperationError:
    return OperationError(str(exc.detail), status=exc.status_code)


# --- chat ------------------------------------------------------------------------------------


class ChatArgs(Arguments):
    """One user message (the body of ``POST /chat`` without per-run ``options``)."""

    message: str = Field(min_length=1, description="The user's message.")
    session_id: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description="Continue this session (an id a previous turn answered); omit to start one.",
    )
    agent: str | None = Field(
        default=None,
        pattern=r"^[a-z_][a-z0-9_]{0,39}$",
        description="Ask for an agent by name instead of routing.",
    )

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain more than whitespace")
        return value


class ChatTurn(BaseModel):
    """A finished turn: the answer, who answered and how, their data."""

    session_id: str = Field(description="The session: pass it back to continue the thread.")
    answer: str
    agent: str | None = Field(None, description="The agent that answered.")
    agents: list[str] = Field(default_factory=list, description="Every agent that ran.")
    route: dict[str, Any] = Field(default_factory=dict, description="How the turn was routed.")
    turn: int = 0
    handoffs: int = 0
    methods: dict[str, str | None] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict, description="Each agent's data.")
    stage_ms: dict[str, Any] = Field(default_factory=dict)
    errors: list[Any] = Field(default_factory=list)


@operation(CAPABILITY)
async def chat(ctx: OperationContext, payload: ChatArgs) -> ChatTurn:
    """Send a message to the Switchyard assistant: one turn of the routed multi-agent graph
    (knowledge, tasks, meals, events, coding, analytics, test analysis) on a session of yours.
    Omit session_id to start a session; pass the answered session_id to continue it."""
    services = ctx.engine(Services)
    body = ChatMessage(message=payload.message, session_id=payload.session_id, agent=payload.agent)
    try:
        result = await answer_turn(services, body, Caller(owner=ctx.owner, client=ctx.owner))
    except HTTPException as exc:
        raise _refused(exc) from exc
    return ChatTurn.model_validate(result)


# --- ask_documents ---------------------------------------------------------------------------


class AskDocuments(Arguments):
    """A question for the knowledge base."""

    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question.")
    top_k: int | None = Field(
        None, ge=1, le=100, description="Chunks retrieved (default RETRIEVAL_TOP_K)."
    )


class Citation(BaseModel):
    """A numbered source: ``[number]`` in the answer refers to it."""

    number: int
    title: str
    source: str
    page: str | None = Field(
        None, description="The PDF page number, slide number or sheet name cited (if any)."
    )
    document_id: str | None = None
    chunk_id: str | None = None
    snippet: str = ""


class DocumentAnswer(BaseModel):
    """The knowledge agent's answer with its citations, and how it was produced."""

    question: str
    answer: str = Field(description="The answer, citing sources as [n].")
    method: str | None = Field(None, description="What produced it (a model, or extractive).")
    citations: list[Citation] = Field(default_factory=list)
    low_confidence: bool = False
    low_confidence_reason: str | None = None


@operation(CAPABILITY, read_only=True)
async def ask_documents(ctx: OperationContext, payload: AskDocuments) -> DocumentAnswer:
    """Ask the knowledge base a question: the knowledge agent retrieves from the documents
    (with reflection: grading, query rewriting) and answers with [n] citations of its
    sources."""
    services = ctx.engine(Services)
    if KNOWLEDGE_AGENT not in services.registry:
        raise OperationError(
            "The knowledge agent is not registered in this deployment (graph/agents.py).",
            status=404,
        )
    thread_id = uuid.uuid4().hex
    inp: ChatInput = {
        "messages": [HumanMessage(payload.question, id=uuid.uuid4().hex)],
        "user_id": ctx.owner,
        "session_id": thread_id,
        "target_agent": KNOWLEDGE_AGENT,
    }
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    options = {"retrieval_top_k": payload.top_k}
    # an outage or a failure propagates: the serving layer names the dependency, or the class
    state = await services.sync_graph.ainvoke(
        inp, config, context=services.context(options, owner=ctx.owner)
    )
    answer = (state.get("agent_answers") or {}).get(KNOWLEDGE_AGENT) or {}
    data: dict[str, Any] = answer.get("data") or {}
    return DocumentAnswer(
        question=payload.question,
        answer=str(answer.get("answer") or state.get("answer") or ""),
        method=answer.get("method"),
        citations=[Citation.model_validate(c) for c in data.get("citations") or []],
        low_confidence=bool(data.get("low_confidence")),
        low_confidence_reason=data.get("low_confidence_reason"),
    )


# --- query_analytics -------------------------------------------------------------------------


class AnalyticsQueryAnswer(BaseModel):
    """The analytics agent's answer: its words, and the data behind them when a query ran."""

    question: str
    answer: str = Field(description="The answer in words.")
    method: str = Field(
        description="Who wrote the SQL: semantic-layer, model, agent-sql, or none (no query)."
    )
    sql: str | None = Field(None, description="The read-only SQL that ran (null: none could).")
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(
        default_factory=list, description="The rows (at most ANALYTICS_ROW_CAP)."
    )
    row_count: int = 0
    truncated: bool = False
    recommendations: list[str] = Field(default_factory=list)
    chart_id: str | None = Field(None, description="The answer's chart, if one was made.")
    chart_url: str | None = Field(None, description="The chart as PNG (GET, same API key).")
    chart_svg_url: str | None = Field(None, description="The chart as SVG (GET, same API key).")
    demo_data: bool = False


@operation(CAPABILITY, read_only=True)
async def query_analytics(ctx: OperationContext, payload: AnalyticsRequest) -> AnalyticsQueryAnswer:
    """Answer a business question about sales, F&I, production or shipments with data: the
    analytics agent writes read-only SQL, runs it and answers in words, with the SQL, the rows
    and a chart (as POST /analytics/query)."""
    services = ctx.engine(Services)
    try:
        data = await answer_query(services, payload, ctx.owner)
    except HTTPException as exc:
        raise _refused(exc) from exc
    chart: dict[str, Any] = data.get("chart") or {}
    return AnalyticsQueryAnswer(
        question=payload.question,
        answer=str(data.get("text") or ""),
        method=str(data.get("method") or "none"),
        sql=data.get("sql"),
        columns=list(data.get("columns") or []),
        rows=list(data.get("rows") or []),
        row_count=int(data.get("row_count") or 0),
        truncated=bool(data.get("truncated")),
        recommendations=list(data.get("recommendations") or []),
        chart_id=chart.get("chart_id") or None,
        chart_url=chart.get("url"),
        chart_svg_url=chart.get("svg_url"),
        demo_data=bool(data.get("demo_data")),
    )


#: The app layer's operations the MCP server adds to the registry's.
GRAPH_OPERATIONS: tuple[Operation[Any, Any], ...] = (chat, ask_documents, query_analytics)
