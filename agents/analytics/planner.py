"""The deterministic plan, used when no chat model is configured.

`PlanModel` stands in the model's seat of the same `create_agent` graph, so the plan runs the
same tools through the same ToolNode, middleware and stream as a model would: it reads the
turn's tool results and emits the next tool calls:

    sql_generation_tool(question)
      -> sql = null: answer with its message (what can be asked)
    sql_execution_tool(sql)
      -> error: answer with the error
    kpi_analysis_tool(result_id) + chart_configuration_tool(result_id, question)
      [+ root_cause_analysis_tool(metric, period, comparison) when the question asks why]
    -> the answer (`agents.analytics.answer.narrative`).

A why-question without a period explains the last complete quarter before the dataset's
"today" against the quarter before.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from agents.analytics.answer import narrative, turn_messages
from agents.analytics.prompts import NO_RESULT, QUERY_FAILED
from agents.analytics.tools import CHART, KPI_ANALYSIS, ROOT_CAUSE, SQL_EXECUTION, SQL_GENERATION
from tools.analytics.outputs import AnalysisOutput, QueryResult, RootCauseOutput, SQLGeneration
from tools.analytics.semantic import asks_why


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"plan_{uuid.uuid4().hex[:16]}", "type": "tool_call"}


def _results(turn: list[BaseMessage]) -> dict[str, ToolMessage]:
    """The latest ToolMessage of each tool in the turn."""
    out: dict[str, ToolMessage] = {}
    for message in turn:
        if isinstance(message, ToolMessage) and message.name:
            out[message.name] = message
    return out


def _question(messages: list[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


def next_step(messages: list[BaseMessage]) -> AIMessage:
    """The plan's next message: tool calls, or the final answer."""
    question = _question(messages)
    turn = turn_messages(messages)
    done = _results(turn)
    gen_msg = done.get(SQL_GENERATION)
    if gen_msg is None:
        return AIMessage(content="", tool_calls=[_call(SQL_GENERATION, question=question)])
    if gen_msg.status == "error" or not isinstance(gen_msg.artifact, dict):
        return AIMessage(content=QUERY_FAILED.format(error=gen_msg.content))
    generation = SQLGeneration.model_validate(gen_msg.artifact)
    if generation.sql is None:
        return AIMessage(content=generation.message or NO_RESULT)
    exec_msg = done.get(SQL_EXECUTION)
    if exec_msg is None:
        return AIMessage(content="", tool_calls=[_call(SQL_EXECUTION, sql=generation.sql)])
    if exec_msg.status == "error" or not isinstance(exec_msg.artifact, dict):
        return AIMessage(content=QUERY_FAILED.format(error=exec_msg.content))
    result = QueryResult.model_validate(exec_msg.artifact)
    if KPI_ANALYSIS not in done and CHART not in done:
        calls = [
            _call(KPI_ANALYSIS, data=result.result_id, query_type="auto"),
            _call(CHART, data=result.result_id, question=question),
        ]
        if asks_why(question) and generation.metrics:
            calls.append(_root_cause_call(generation))
        return AIMessage(content="", tool_calls=calls)
    analysis = _artifact(done.get(KPI_ANALYSIS), AnalysisOutput)
    root = _artifact(done.get(ROOT_CAUSE), RootCauseOutput)
    return AIMessage(content=narrative(generation, analysis, root, result))


def _root_cause_call(generation: SQLGeneration) -> dict[str, Any]:
    if generation.comparison is not None and generation.period is not None:
        period, comparison = generation.period.label, generation.comparison.label
    elif generation.period is not None:
        period, comparison = generation.period.label, "previous period"
    else:
        # the tool reads "last quarter" against the run's reference date
        period, comparison = "last quarter", "previous period"
    return _call(ROOT_CAUSE, metric=generation.metrics[0], period=period, comparison=comparison)


def _artifact(message: ToolMessage | None, model: Any) -> Any:
    if message is None or message.status == "error" or not isinstance(message.artifact, dict):
        return None
    return model.model_validate(message.artifact)


class PlanModel(BaseChatModel):
    """The deterministic plan as a chat model (bind_tools accepts any tools; it calls its own)."""

    @property
    def _llm_type(self) -> str:
        return "analytics-plan"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | BaseTool | Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=next_step(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)
