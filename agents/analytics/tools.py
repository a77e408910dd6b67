"""The analytics agent's tools (`ANALYTICS_TOOLS`): the analytics operations, fed from the
conversation and answering with artifacts.

Each tool calls one operation of `tools/analytics/operations.py` with the run's
`AnalyticsContext` as its engine and the run's user as owner, plus the agent glue that
`Operation.as_tool` cannot give: it takes the run's `ToolRuntime` (stream writer for progress,
state to find earlier results: `data` is a `result_id` or 'latest', resolved to the result
itself) and answers `(content, artifact)`: compact JSON for the model, the full structured
result as the ToolMessage's artifact (where the agent's answer is assembled from, and where
later tools find earlier results by `result_id`). Errors are raised, not returned: an
operation's refusal is raised as the engine's own exception, which the agent's tool-error
middleware turns into a message the model can act on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable
from typing import Any, TypeVar

from langchain.tools import ToolRuntime, tool
from langchain_core.messages import ToolMessage
from pydantic import BaseModel, Field

from tools.analytics import operations as ops
from tools.analytics.context import AnalyticsContext, progress
from tools.analytics.frame import DataError, inline_result
from tools.analytics.kpi import QUERY_TYPES
from tools.analytics.outputs import MeasureMeta, QueryResult
from tools.analytics.periods import parse_comparison, parse_period
from tools.operations import OpenEngines, OperationContext, OperationError

SQL_GENERATION = "sql_generation_tool"
SQL_EXECUTION = "sql_execution_tool"
KPI_ANALYSIS = "kpi_analysis_tool"
ROOT_CAUSE = "root_cause_analysis_tool"
CHART = "chart_configuration_tool"

Runtime = ToolRuntime[AnalyticsContext, Any]
ToolAnswer = tuple[str, dict[str, Any]]
T = TypeVar("T")


def _caller(runtime: Runtime, **extra: Any) -> OperationContext:
    """The operations' caller: the run's user, the run's context as the engine."""
    ctx = runtime.context
    return OperationContext(owner=ctx.user_id, engines=OpenEngines(ctx), extra=extra)


async def _call(result: Awaitable[T]) -> T:
    """An operation's result; its refusal raised as the engine's exception (the middleware's
    messages name the kind of failure by it)."""
    try:
        return await result
    except OperationError as exc:
        if exc.__cause__ is not None:
            raise exc.__cause__ from None
        raise


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


def _messages(runtime: Runtime) -> list[Any]:
    state = runtime.state
    if isinstance(state, dict):
        return list(state.get("messages", []))
    return list(getattr(state, "messages", []) or [])


def artifacts(messages: list[Any], tool_name: str) -> list[dict[str, Any]]:
    """Artifacts of earlier successful calls of `tool_name` in the conversation, oldest first
    (a failed call's message carries only its error code)."""
    return [
        m.artifact
        for m in messages
        if isinstance(m, ToolMessage)
        and m.name == tool_name
        and m.status != "error"
        and isinstance(m.artifact, dict)
    ]


def resolve_data(data: str, messages: list[Any]) -> QueryResult:
    """The result `data` names: a result_id, 'latest', or inline JSON rows."""
    text = (data or "").strip()
    results = [QueryResult.model_validate(a) for a in artifacts(messages, SQL_EXECUTION)]
    if text.lower() in ("", "latest", "last", "previous", "result"):
        if not results:
            raise DataError(
                "there is no query result yet: run sql_execution_tool first, then "
                "pass its result_id"
            )
        return results[-1]
    if re.fullmatch(r"r-[0-9a-f]{8}", text):
        for result in reversed(results):
            if result.result_id == text:
                return result
        known = ", ".join(r.result_id for r in results) or "none yet"
        raise DataError(f"no result {text!r} in this conversation (known: {known})")
    return inline_result(text)


def result_id(tool_call_id: str | None) -> str:
    """A short stable id for the result of one tool call."""
    return "r-" + hashlib.sha256((tool_call_id or "direct").encode()).hexdigest()[:8]


class SQLGenerationInput(BaseModel):
    question: str = Field(
        description="The business question, in the user's words.", min_length=1, max_length=2000
    )


class SQLExecutionInput(BaseModel):
    sql: str = Field(
        description="One PostgreSQL SELECT over the readable tables (schema analytics for the "
        "demo; e.g. the sql from sql_generation_tool).",
        min_length=1,
        max_length=200_000,
    )


class KPIAnalysisInput(BaseModel):
    data: str = Field(
        default="latest",
        description="result_id from sql_execution_tool "
        "(e.g. 'r-1a2b3c4d'), 'latest', or JSON {columns, rows}.",
        max_length=2_000_000,
    )
    query_type: str = Field(default="auto", description="One of: " + ", ".join(QUERY_TYPES))


class ChartInput(BaseModel):
    data: str = Field(
        default="latest",
        description="result_id from sql_execution_tool, 'latest', or JSON {columns, rows}.",
        max_length=2_000_000,
    )
    question: str = Field(
        default="",
        description="The question (used for the title and the chart type).",
        max_length=2000,
    )


@tool(SQL_GENERATION, args_schema=SQLGenerationInput, response_format="content_and_artifact")
async def sql_generation_tool(question: str, runtime: Runtime) -> ToolAnswer:
    """Turn a business question (the demo: sales, F&I, production, shipments; or the connected
    database's catalogue) into one read-only SQL query (model-free, or the SQL model). Returns
    the SQL and what it computes, or (sql null) what can be asked instead. Run the SQL with
    sql_execution_tool."""
    runtime.stream_writer(progress(SQL_GENERATION, "start", "Generating SQL"))
    generation = await _call(
        ops.generate_sql(_caller(runtime), ops.GenerateSqlInput(question=question))
    )
    runtime.stream_writer(
        progress(
            SQL_GENERATION,
            "done",
            "SQL ready" if generation.sql else "Question not mappable",
            method=generation.method,
        )
    )
    if generation.sql is None:
        content = {"sql": None, "message": generation.message}
    else:
        content = {
            "sql": generation.sql,
            "explanation": generation.explanation,
            "method": generation.method,
        }
    return _json(content), generation.model_dump()


@tool(SQL_EXECUTION, args_schema=SQLExecutionInput, response_format="content_and_artifact")
async def sql_execution_tool(sql: str, runtime: Runtime) -> ToolAnswer:
    """Run one read-only SELECT over the readable tables (validated; READ ONLY transaction; time
    limit; row cap). Returns a result_id for kpi_analysis_tool / chart_configuration_tool, the
    columns, the first rows and the row count."""
    ctx = runtime.context
    runtime.stream_writer(progress(SQL_EXECUTION, "start", "Running the query"))
    result = await _call(ops.run_sql(_caller(runtime), ops.RunSqlInput(sql=sql)))
    result.result_id = result_id(runtime.tool_call_id)
    for generation in reversed(artifacts(_messages(runtime), SQL_GENERATION)):
        if generation.get("sql") and (generation["sql"] == sql or generation["sql"] == result.sql):
            result.measures = {
                key: MeasureMeta.model_validate(meta)
                for key, meta in (generation.get("measures") or {}).items()
            }
            break
    runtime.stream_writer(
        progress(
            SQL_EXECUTION,
            "done",
            f"{result.row_count} rows",
            rows=result.row_count,
            truncated=result.truncated,
            elapsed_ms=result.elapsed_ms,
        )
    )
    preview = result.rows[: ctx.preview_rows]
    content = {
        "result_id": result.result_id,
        "columns": result.columns,
        "rows": preview,
        "row_count": result.row_count,
        "truncated": result.truncated,
    }
    if len(preview) < result.row_count:
        content["note"] = f"showing {len(preview)} of {result.row_count} rows"
    return _json(content), result.model_dump()


@tool(KPI_ANALYSIS, args_schema=KPIAnalysisInput, response_format="content_and_artifact")
async def kpi_analysis_tool(
    runtime: Runtime, data: str = "latest", query_type: str = "auto"
) -> ToolAnswer:
    """Analyse a query result: totals, period-over-period change, shares, top and bottom
    movers, outliers, a short analysis and recommendations."""
    runtime.stream_writer(progress(KPI_ANALYSIS, "start", "Analysing KPIs"))
    result = resolve_data(data, _messages(runtime))
    analysis = await _call(
        ops.compute_kpi(
            _caller(runtime), ops.ComputeKpiInput(result=result, query_type=query_type or "auto")
        )
    )
    runtime.stream_writer(
        progress(KPI_ANALYSIS, "done", "Analysis ready", outliers=len(analysis.outliers))
    )
    content = {
        "analysis": analysis.analysis,
        "recommendations": analysis.recommendations,
        "period_change": [c.model_dump() for c in analysis.period_change[:3]],
        "outliers": [o.model_dump() for o in analysis.outliers[:3]],
    }
    return _json(content), analysis.model_dump()


# the operation's model (unknown fields refused) plus the injected runtime
@tool(
    ROOT_CAUSE,
    args_schema=ops.explain_change.tool_args_model(),
    response_format="content_and_artifact",
)
async def root_cause_analysis_tool(
    metric: str, period: str, runtime: Runtime, comparison: str = "previous period"
) -> ToolAnswer:
    """Explain why a metric changed between two periods: decomposes the change by every
    dimension (region, dealer, model, plant, carrier, ...) and names the largest drivers."""
    ctx = runtime.context
    chosen = ops.resolve_metric(metric, ctx.layer)
    current = parse_period(period, ctx.reference_date)
    previous = parse_comparison(comparison, current, ctx.reference_date)
    runtime.stream_writer(
        progress(
            ROOT_CAUSE, "start", f"Decomposing {chosen.label} ({previous.label} -> {current.label})"
        )
    )
    queries = 0

    def on_query(count: int) -> None:
        nonlocal queries
        queries = count
        runtime.stream_writer(progress(ROOT_CAUSE, "progress", f"Breakdown query {count}"))

    request = ops.ExplainChangeInput(metric=metric, period=period, comparison=comparison)
    output = await _call(ops.explain_change(_caller(runtime, **{ops.ON_QUERY: on_query}), request))
    runtime.stream_writer(
        progress(
            ROOT_CAUSE,
            "done",
            "Drivers found" if output.drivers else "No concentrated driver",
            queries=queries,
        )
    )
    content = {"summary": output.summary, "drivers": [d.model_dump() for d in output.drivers]}
    return _json(content), output.model_dump()


@tool(CHART, args_schema=ChartInput, response_format="content_and_artifact")
async def chart_configuration_tool(
    runtime: Runtime, data: str = "latest", question: str = ""
) -> ToolAnswer:
    """Choose a chart for a query result (line, bar, grouped bar, pie, scatter or a single
    number) and build its Vega-Lite spec."""
    runtime.stream_writer(progress(CHART, "start", "Configuring the chart"))
    result = resolve_data(data, _messages(runtime))
    chart = await _call(
        ops.make_chart(_caller(runtime), ops.MakeChartInput(result=result, question=question))
    )
    runtime.stream_writer(
        progress(CHART, "done", f"{chart.chart_type} chart", chart_id=chart.chart_id)
    )
    content = {
        "chart_type": chart.chart_type,
        "title": chart.title,
        "x_axis": chart.x_axis,
        "y_axis": chart.y_axis,
        "chart_id": chart.chart_id,
    }
    return _json(content), chart.model_dump()


#: The tools the analytics agent binds, in the order of the usual plan.
ANALYTICS_TOOLS = [
    sql_generation_tool,
    sql_execution_tool,
    kpi_analysis_tool,
    root_cause_analysis_tool,
    chart_configuration_tool,
]
