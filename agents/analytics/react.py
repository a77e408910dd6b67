"""The analytics agent: `create_agent` over the analytics tools, and its subgraph for the graph.

- `build_analytics_agent(model, tools)`: the LangChain v1 agent (a compiled graph: model <-> tools)
  with the system prompt, the tool-error middleware and `AnalyticsContext` as context schema.
  With `model=None` the deterministic plan (`PlanModel`) sits in the model's seat.
- `answer_question(question, ctx, model)`: one question in, an `AnalyticsAnswer` out; a request
  to change data is answered with the read-only refusal before any model or tool runs.
- `astream_answer(question, ctx, model)`: the same, yielding the tools' progress events first.
- `build_analytics_graph(model, ...)`: the subgraph to plug into the root graph: its own state
  (`messages` in and out, `analytics` = this turn's answer), one node that runs the agent on the
  latest question and forwards the tools' progress events to the parent's stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agents.analytics.answer import AnalyticsAnswer, compose_answer
from agents.analytics.middleware import analytics_tool_errors
from agents.analytics.planner import PlanModel
from agents.analytics.prompts import ANALYTICS_SYSTEM, EXTERNAL_SYSTEM
from agents.analytics.tools import ANALYTICS_TOOLS
from tools.analytics.context import AnalyticsContext
from tools.analytics.intent import write_request

NAME = "analytics"
MAX_QUESTION_CHARS = 2000
#: Graph steps one turn may take (each model call and each tool round is a step or two).
RECURSION_LIMIT = 40
#: Earlier user/assistant messages the model sees for follow-up questions.
HISTORY_MESSAGES = 6

Agent = CompiledStateGraph[Any, Any, Any, Any]


@dynamic_prompt
def source_prompt(request: ModelRequest) -> str:
    """The demo's prompt, or, with an external database, one built from its catalogue."""
    context = request.runtime.context if request.runtime is not None else None
    catalogue = getattr(context, "catalogue", None)
    if catalogue is None:
        return ANALYTICS_SYSTEM
    return EXTERNAL_SYSTEM.format(
        source=catalogue.source or "external",
        schemas=", ".join(catalogue.schemas),
        catalogue=catalogue.describe(),
    )


def build_analytics_agent(
    model: BaseChatModel | None = None,
    tools: Sequence[BaseTool] | None = None,
    *,
    name: str = "analytics_agent",
) -> Agent:
    """The agent graph. `tools` defaults to ANALYTICS_TOOLS; extra tools need no other change."""
    return create_agent(
        model if model is not None else PlanModel(),
        list(tools if tools is not None else ANALYTICS_TOOLS),
        system_prompt=ANALYTICS_SYSTEM,
        middleware=[analytics_tool_errors, source_prompt],
        context_schema=AnalyticsContext,
        name=name,
    )


def _check_question(question: str) -> str:
    text = (question or "").strip()
    if not text:
        raise ValueError("the question is empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(
            f"the question is {len(text)} characters long (at most {MAX_QUESTION_CHARS})"
        )
    return text


def _history(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Earlier plain user/assistant messages (no tool traffic), for follow-up questions."""
    plain: list[BaseMessage] = [
        m
        for m in messages
        if isinstance(m, HumanMessage)
        or (isinstance(m, AIMessage) and not m.tool_calls and m.text.strip())
    ]
    return plain[-HISTORY_MESSAGES:]


async def astream_answer(
    question: str,
    ctx: AnalyticsContext,
    model: BaseChatModel | None = None,
    *,
    agent: Agent | None = None,
    history: Sequence[BaseMessage] = (),
    config: RunnableConfig | None = None,
) -> AsyncIterator[dict[str, Any] | AnalyticsAnswer]:
    """Run one turn; yield each progress event (a dict) as tools report it, then the answer.

    Cancelling the consumer cancels the run: a running query is cancelled on the server and
    its transaction rolled back.
    """
    text = _check_question(question)
    if refusal := write_request(text):  # refused before any model or tool sees it
        yield AnalyticsAnswer(question=text, text=refusal, method="none")
        return
    agent = agent if agent is not None else build_analytics_agent(model)
    run_config: RunnableConfig = {"recursion_limit": RECURSION_LIMIT, **(config or {})}
    inputs = {"messages": [*_history(history), HumanMessage(text)]}
    final: dict[str, Any] = {}
    async for mode, chunk in agent.astream(
        inputs, run_config, context=ctx, stream_mode=["custom", "values"]
    ):
        if mode == "custom" and isinstance(chunk, dict):
            yield chunk
        elif mode == "values" and isinstance(chunk, dict):
            final = chunk
    yield compose_answer(
        text, list(final.get("messages", [])), demo_mode=ctx.demo_mode, row_cap=ctx.row_cap
    )


async def answer_question(
    question: str,
    ctx: AnalyticsContext,
    model: BaseChatModel | None = None,
    *,
    agent: Agent | None = None,
    history: Sequence[BaseMessage] = (),
    config: RunnableConfig | None = None,
) -> AnalyticsAnswer:
    """Answer one question (e.g. for `POST /analytics/query`). Inside a graph node, the tools'
    progress events still reach the caller's stream."""
    answer: AnalyticsAnswer | None = None
    async for item in astream_answer(
        question, ctx, model, agent=agent, history=history, config=config
    ):
        if isinstance(item, AnalyticsAnswer):
            answer = item
        else:
            _forward(item)
    assert answer is not None  # astream_answer always ends with the answer
    return answer


def _forward(event: dict[str, Any]) -> None:
    """Re-emit a progress event on the enclosing graph's stream, if there is one."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer(event)


class AnalyticsState(TypedDict, total=False):
    """The subgraph's state: the shared conversation and this turn's structured answer."""

    messages: Annotated[list[AnyMessage], add_messages]
    analytics: dict[str, Any]


ContextFactory = Callable[[Any], AnalyticsContext]


def build_analytics_graph(
    model: BaseChatModel | None = None,
    *,
    tools: Sequence[BaseTool] | None = None,
    context_factory: ContextFactory | None = None,
    name: str = NAME,
) -> CompiledStateGraph[AnalyticsState, Any, AnalyticsState, AnalyticsState]:
    """The analytics subgraph for the root graph.

    It reads the latest human message of `messages`, runs the agent on it (with the last few
    user/assistant messages as history), and writes the answer text as an AIMessage named
    "analytics" plus the structured answer under `analytics`. Progress events go to the
    parent's stream (stream_mode "custom"). `context_factory` turns the root graph's runtime
    context into an `AnalyticsContext`; without it the context must already be one.
    """
    agent = build_analytics_agent(model, tools)

    async def answer(state: AnalyticsState, runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = context_factory(runtime.context) if context_factory else runtime.context
        if not isinstance(ctx, AnalyticsContext):
            raise TypeError(
                "the analytics subgraph needs an AnalyticsContext: pass "
                "context_factory to build_analytics_graph"
            )
        messages = list(state.get("messages", []))
        asked = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        question = messages[asked].text if asked >= 0 else ""
        result = await answer_question(question, ctx, agent=agent, history=messages[:asked])
        reply = AIMessage(content=result.text, name=NAME)
        return {"messages": [reply], "analytics": result.model_dump(mode="json")}

    graph = StateGraph(AnalyticsState)
    graph.add_node("answer_analytics", answer)
    graph.add_edge(START, "answer_analytics")
    graph.add_edge("answer_analytics", END)
    return graph.compile(name=name)
