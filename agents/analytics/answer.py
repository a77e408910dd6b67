"""The analytics answer: assembled from the tool results of one turn.

`compose_answer(question, messages, ...)` reads the turn's ToolMessages (their artifacts hold
the full structured results) and the final AI message, and returns the REST shape
`{sql, columns, rows (capped), analysis, recommendations, chart, root_cause?}` plus the narrative
text, the SQL method and any tool errors met on the way. `narrative(...)` is the deterministic
answer text the no-model plan ends with.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, Field

from agents.analytics.middleware import UNAVAILABLE
from agents.analytics.prompts import DEMO_NOTE, NO_RESULT
from agents.analytics.tools import (
    CHART,
    KPI_ANALYSIS,
    ROOT_CAUSE,
    SQL_EXECUTION,
    SQL_GENERATION,
)
from tools.analytics.outputs import (
    AnalysisOutput,
    ChartConfigOutput,
    QueryResult,
    RootCauseOutput,
    SQLGeneration,
)
from tools.analytics.semantic import sentence_case

Method = Literal["semantic-layer", "model", "agent-sql", "none"]


class AnalyticsAnswer(BaseModel):
    """One analytics answer (the body of `POST /analytics/query`)."""

    question: str
    text: str = Field(description="The answer in words.")
    method: Method = Field(
        description="Who wrote the SQL: the semantic layer, the SQL model, "
        "the agent's model directly (agent-sql), or none."
    )
    sql: str | None = None
    metric: str | None = Field(
        None, description="The catalogue metric (or column aggregate) the SQL computes."
    )
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    analysis: AnalysisOutput | None = None
    recommendations: list[str] = Field(default_factory=list)
    chart: ChartConfigOutput | None = None
    root_cause: RootCauseOutput | None = None
    errors: list[str] = Field(default_factory=list, description="Tool errors met on the way.")
    demo_data: bool = False
    unavailable: bool = Field(
        False,
        description="The analytics database could not be reached, so there is no result "
        "(the API answers 503).",
    )


def turn_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last human message (this turn's tool calls and answers)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return messages[index + 1 :]
    return list(messages)


def _last(messages: list[BaseMessage], tool: str) -> dict[str, Any] | None:
    for message in reversed(messages):
        if (
            isinstance(message, ToolMessage)
            and message.name == tool
            and message.status != "error"
            and isinstance(message.artifact, dict)
        ):
            return message.artifact
    return None


def narrative(
    generation: SQLGeneration | None,
    analysis: AnalysisOutput | None,
    root: RootCauseOutput | None,
    result: QueryResult | None,
) -> str:
    """The deterministic answer text from the turn's results."""
    parts: list[str] = []
    if root is not None:
        parts.append(root.summary)
    if generation is not None and generation.explanation:
        parts.append(f"I computed {sentence_case(generation.explanation)}")
    if analysis is not None:
        parts.append(analysis.analysis)
    if result is not None:
        parts.append(provenance(generation, result))
    recommendations = merged_recommendations(analysis, root)
    if recommendations:
        parts.append(
            "Recommendations: " + " ".join(f"({n}) {r}" for n, r in enumerate(recommendations, 1))
        )
    return "\n\n".join(parts) or NO_RESULT


def provenance(generation: SQLGeneration | None, result: QueryResult) -> str:
    """What was computed: the metric, the row count (and whether the cap cut it), the SQL."""
    rows = f"{result.row_count} row{'s' if result.row_count != 1 else ''}"
    if result.truncated:
        rows += f" (capped: the result had more; only the first {result.row_count} are shown)"
    metric = ""
    if generation is not None and generation.sql is not None:
        used = generation.catalogue_metric or ", ".join(generation.metrics)
        metric = f"Metric: {used}. " if used else ""
    return f"{metric}Rows: {rows}. SQL: {result.sql}"


def merged_recommendations(
    analysis: AnalysisOutput | None, root: RootCauseOutput | None
) -> list[str]:
    """Root-cause recommendations first; the KPI ones after (its 'nothing stands out' fallback
    only when there is nothing else)."""
    first = list(root.recommendations) if root is not None else []
    rest = list(analysis.recommendations) if analysis is not None else []
    if first:
        rest = [r for r in rest if not r.startswith("No anomaly stands out")]
    return first + rest


def compose_answer(
    question: str,
    messages: list[BaseMessage],
    *,
    demo_mode: bool = False,
    row_cap: int | None = None,
) -> AnalyticsAnswer:
    """The answer of the turn that `messages` (a whole conversation, or one turn) ends with."""
    turn = turn_messages(messages)
    generation_raw = _last(turn, SQL_GENERATION)
    generation = SQLGeneration.model_validate(generation_raw) if generation_raw else None
    result_raw = _last(turn, SQL_EXECUTION)
    result = QueryResult.model_validate(result_raw) if result_raw else None
    analysis_raw = _last(turn, KPI_ANALYSIS)
    chart_raw = _last(turn, CHART)
    root_raw = _last(turn, ROOT_CAUSE)
    analysis = AnalysisOutput.model_validate(analysis_raw) if analysis_raw else None
    root = RootCauseOutput.model_validate(root_raw) if root_raw else None
    failed = [m for m in turn if isinstance(m, ToolMessage) and m.status == "error"]
    errors = [str(m.content) for m in failed]
    outage = any(
        isinstance(m.artifact, dict) and m.artifact.get("error") == UNAVAILABLE for m in failed
    )
    final = next((m for m in reversed(turn) if isinstance(m, AIMessage) and not m.tool_calls), None)
    text = final.text if final is not None and final.text.strip() else ""
    if not text:
        text = narrative(generation, analysis, root, result)
        if generation is not None and generation.sql is None and result is None:
            text = generation.message
    method: Method = "none"
    if result is not None:
        method = "agent-sql"
        if generation is not None and generation.sql in (result.sql, _executed_sql(turn)):
            method = generation.method
    elif generation is not None and generation.sql is not None:
        method = generation.method
    rows = result.rows if result else []
    if row_cap is not None:
        rows = rows[:row_cap]
    if demo_mode and result is not None:
        text = f"{text}\n\n{DEMO_NOTE}"
    return AnalyticsAnswer(
        question=question, text=text, method=method,
        sql=result.sql if result else (generation.sql if generation else None),
        metric=(generation.catalogue_metric or ", ".join(generation.metrics) or None)
        if generation is not None and generation.sql is not None else None,
        columns=result.columns if result else [], rows=rows,
        row_count=result.row_count if result else 0,
        truncated=bool(result and (result.truncated or len(rows) < result.row_count)),
        analysis=analysis, recommendations=merged_recommendations(analysis, root),
        chart=ChartConfigOutput.model_validate(chart_raw) if chart_raw else None,
        root_cause=root, errors=errors, demo_data=demo_mode,
        unavailable=outage and result is None,
    )  # fmt: skip


def _executed_sql(turn: list[BaseMessage]) -> str | None:
    """The `sql` argument of the last successful sql_execution_tool call."""
    ok = {
        m.tool_call_id
        for m in turn
        if isinstance(m, ToolMessage) and m.name == SQL_EXECUTION and m.status != "error"
    }
    for message in reversed(turn):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["name"] == SQL_EXECUTION and call["id"] in ok:
                    return str(call["args"].get("sql"))
    return None
