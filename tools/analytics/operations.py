"""The analytics capability's operations: SQL from a question, read-only SQL, the KPI catalogue,
KPI analysis of a result, root cause of a change, a chart for a result.

Each is one typed function over the run's :class:`AnalyticsContext` (``ctx.engine``): the
reader pool and limits the analytics component opened (in an agent's run, the run's context,
which also carries the SQL model). The caller's owner becomes the context's user
(``with_user``), so every query runs for the owner who asked, wherever it is served from. The
analytics agent's tools (``agents/analytics/tools.py``) call these operations; MCP clients and
other agents bind them with :meth:`Operation.as_tool`.

Refusals are :class:`OperationError` made from the engine's own exception (its ``__cause__``):
refused SQL and bad arguments are 422, a query over the statement timeout 504. A database that
cannot be reached is not a refusal: its exception goes up as it is (a route answers 503).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from pydantic import BaseModel, Field

from tools.analytics import semantic
from tools.analytics.catalogue import DEMO_LAYER, Metric, SemanticLayer
from tools.analytics.charts import configure_chart
from tools.analytics.context import AnalyticsContext
from tools.analytics.frame import DataError
from tools.analytics.guard import SQLRefused
from tools.analytics.kpi import QUERY_TYPES, analyze
from tools.analytics.outputs import (
    AnalysisOutput,
    ChartConfigOutput,
    QueryResult,
    RootCauseOutput,
    SQLGeneration,
)
from tools.analytics.periods import parse_comparison, parse_period
from tools.analytics.rootcause import root_cause
from tools.analytics.sqlgen import generate_sql as generate_sql_for
from tools.operations import Arguments, Operation, OperationContext, OperationError, operation

CAPABILITY = "analytics"
#: ``ctx.extra`` key of a callback told the number of each breakdown query ``explain_change``
#: runs (the agent's progress events).
ON_QUERY = "on_query"


def resolve_metric(text: str, layer: SemanticLayer = DEMO_LAYER) -> Metric:
    """A metric of `layer` by key, label or any of its aliases; ValueError lists them."""
    wanted = text.strip().lower()
    for m in layer.metrics:
        if wanted in (m.key, m.label.lower()):
            return m
    found = semantic.find_metrics(wanted, layer)
    if found:
        return found[0]
    known = ", ".join(m.key for m in layer.metrics)
    raise ValueError(f"unknown metric {text!r}; use one of: {known}")


def engine_of(ctx: OperationContext) -> AnalyticsContext:
    """The analytics engine, as the caller's owner."""
    return ctx.engine(AnalyticsContext).with_user(ctx.owner)


def _refused(exc: Exception) -> OperationError:
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return OperationError(f"the query timed out: {str(exc).strip()}", status=504)
    # SQLRefused and the rest say what is wrong themselves ("SQL refused: ...")
    return OperationError(str(exc), status=422)


class GenerateSqlInput(Arguments):
    question: str = Field(
        description="The business question, in the user's words.", min_length=1, max_length=2000
    )


class RunSqlInput(Arguments):
    sql: str = Field(
        description="One PostgreSQL SELECT over schema analytics.", min_length=1, max_length=200_000
    )


class ListKpisInput(Arguments):
    # (a model without fields would make LangChain call the tool without its runtime)
    search: str = Field(
        default="",
        max_length=200,
        description="Only the KPIs whose key, name or alias contains this (empty: all).",
    )


class Kpi(BaseModel):
    key: str
    label: str
    unit: str
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    higher_is_better: bool = True


class KpiCatalogue(BaseModel):
    metrics: list[Kpi]


class ComputeKpiInput(Arguments):
    result: QueryResult = Field(description="A result of run_sql.")
    query_type: str = Field(default="auto", description="One of: " + ", ".join(QUERY_TYPES))


class ExplainChangeInput(Arguments):
    metric: str = Field(
        description="Metric key or name, e.g. 'damage_rate_pct' or 'damage rate'.",
        min_length=1,
        max_length=200,
    )
    period: str = Field(
        description="The period to explain, e.g. 'Q3 2025', 'August 2025', '2025'.",
        min_length=1,
        max_length=200,
    )
    comparison: str = Field(
        default="previous period",
        description="What to compare with: "
        "'previous period', 'same period last year', or a period.",
        max_length=200,
    )


class MakeChartInput(Arguments):
    result: QueryResult = Field(description="A result of run_sql.")
    question: str = Field(
        default="",
        description="The question (used for the title and the chart type).",
        max_length=2000,
    )


@operation(CAPABILITY, read_only=True)
async def generate_sql(ctx: OperationContext, payload: GenerateSqlInput) -> SQLGeneration:
    """Turn a business question about sales, F&I, production or shipments into one read-only
    SQL query over schema analytics (semantic layer, or the SQL model when configured), or
    (sql null) say what can be asked instead."""
    engine = engine_of(ctx)
    return await generate_sql_for(
        payload.question,
        engine.reference_date,
        engine.sql_model,
        max_sql_chars=engine.max_sql_chars,
        catalogue=engine.catalogue,
        scope=engine.scope,
        check=engine.explain if engine.sql_model is not None else None,
        layer=engine.layer,
    )


@operation(CAPABILITY, read_only=True)
async def run_sql(ctx: OperationContext, payload: RunSqlInput) -> QueryResult:
    """Run one read-only SELECT over schema analytics (validated; READ ONLY transaction; time
    limit; row cap) and return its columns and rows."""
    try:
        return await engine_of(ctx).run_sql(payload.sql)
    except (SQLRefused, psycopg.errors.QueryCanceled) as exc:
        raise _refused(exc) from exc


@operation(CAPABILITY, read_only=True)
async def list_kpis(ctx: OperationContext, payload: ListKpisInput) -> KpiCatalogue:
    """The KPIs (metrics) that can be asked for, with their units and names."""
    catalogue = engine_of(ctx).catalogue
    wanted = payload.search.strip().lower()
    if catalogue is not None:
        return KpiCatalogue(
            metrics=[
                Kpi(key=m.key, label=m.label, unit=m.unit, description=m.description or m.sql,
                    aliases=list(m.synonyms), higher_is_better=m.higher_is_better)
                for m in catalogue.metrics
                if not wanted or any(wanted in n.lower() for n in (m.key, m.label, *m.synonyms))
            ]
        )  # fmt: skip
    return KpiCatalogue(
        metrics=[
            Kpi(
                key=m.key,
                label=m.label,
                unit=m.unit,
                description=m.description,
                aliases=list(m.aliases),
                higher_is_better=m.higher_is_better,
            )
            for m in engine_of(ctx).layer.metrics
            if _matches(m, wanted)
        ]
    )


def _matches(metric: Metric, wanted: str) -> bool:
    names = (metric.key, metric.label.lower(), *(a.lower() for a in metric.aliases))
    return not wanted or any(wanted in name for name in names)


@operation(CAPABILITY, read_only=True)
async def compute_kpi(ctx: OperationContext, payload: ComputeKpiInput) -> AnalysisOutput:
    """Analyse a query result: totals, period-over-period change, shares, top and bottom
    movers, outliers, a short analysis and recommendations."""
    try:
        return analyze(payload.result, payload.query_type or "auto")
    except ValueError as exc:  # an unknown query type, data it cannot read (DataError)
        raise _refused(exc) from exc


@operation(CAPABILITY, read_only=True)
async def explain_change(ctx: OperationContext, payload: ExplainChangeInput) -> RootCauseOutput:
    """Explain why a metric changed between two periods: decomposes the change by every
    dimension (region, dealer, model, plant, carrier, ...) and names the largest drivers."""
    engine = engine_of(ctx)
    if engine.catalogue is not None:
        raise OperationError(
            "explain_change decomposes the bundled demo's metrics only; on your database, ask "
            "for the metric by each dimension and period instead (e.g. 'revenue by country in "
            "Q1 2025 vs Q1 2024').",
            status=422,
        )
    try:
        chosen = resolve_metric(payload.metric, engine.layer)
        current = parse_period(payload.period, engine.reference_date)
        previous = parse_comparison(payload.comparison, current, engine.reference_date)
    except ValueError as exc:
        raise _refused(exc) from exc
    on_query: Callable[[int], None] | None = ctx.extra.get(ON_QUERY)
    queries = 0

    async def run(sql: str) -> QueryResult:
        nonlocal queries
        queries += 1
        if on_query is not None:
            on_query(queries)
        return await engine.run_sql(sql)

    try:
        return await root_cause(run, chosen, current, previous, layer=engine.layer)
    except (SQLRefused, psycopg.errors.QueryCanceled, DataError) as exc:
        raise _refused(exc) from exc


@operation(CAPABILITY, read_only=True)
async def make_chart(ctx: OperationContext, payload: MakeChartInput) -> ChartConfigOutput:
    """Choose a chart for a query result (line, bar, grouped bar, pie, scatter or a single
    number) and build its Vega-Lite spec."""
    try:
        return configure_chart(payload.result, payload.question)
    except DataError as exc:
        raise _refused(exc) from exc


#: The analytics capability's operations, in the order of the usual plan.
OPERATIONS: tuple[Operation[Any, Any], ...] = (
    generate_sql,
    run_sql,
    list_kpis,
    compute_kpi,
    explain_change,
    make_chart,
)
