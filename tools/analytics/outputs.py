"""Pydantic models of what the analytics engine and tools produce (JSON-ready)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ColumnKind = Literal["number", "temporal", "text", "boolean"]
Unit = Literal["count", "currency", "percent", "days", "minutes"]


class MeasureMeta(BaseModel):
    """What a numeric result column measures (set by the semantic layer)."""

    label: str
    unit: Unit = "count"
    additive: bool = True
    higher_is_better: bool = True


class PeriodModel(BaseModel):
    """A date range [start, end) with its human label."""

    label: str
    start: str
    end: str


class QueryResult(BaseModel):
    """Rows of one executed query, capped at the row cap."""

    result_id: str = ""
    sql: str
    columns: list[str]
    column_kinds: list[ColumnKind]
    rows: list[list[Any]]
    row_count: int
    truncated: bool = False
    elapsed_ms: float = 0.0
    measures: dict[str, MeasureMeta] = Field(default_factory=dict)


class SQLGeneration(BaseModel):
    """SQL for a question, or (sql = None) an honest message about what can be answered."""

    question: str
    sql: str | None
    method: Literal["semantic-layer", "model"]
    explanation: str = ""
    metrics: list[str] = Field(default_factory=list)
    dimensions: list[str] = Field(default_factory=list)
    grain: str | None = None
    period: PeriodModel | None = None
    comparison: PeriodModel | None = None
    filters: dict[str, list[str]] = Field(default_factory=dict)
    measures: dict[str, MeasureMeta] = Field(default_factory=dict)
    catalogue_metric: str = Field(
        "", description="The catalogue metric (or column aggregate) the SQL computes."
    )
    message: str = ""


class MeasureSummary(BaseModel):
    measure: str
    label: str
    aggregation: Literal["sum", "mean"]
    total: float | None
    mean: float | None
    minimum: float | None
    maximum: float | None


class PeriodChange(BaseModel):
    measure: str
    previous_period: str
    current_period: str
    previous: float
    current: float
    change: float
    change_pct: float | None


class Share(BaseModel):
    category: str
    measure: str
    value: float
    share: float


class Mover(BaseModel):
    category: str
    measure: str
    previous: float | None
    current: float
    change: float | None
    change_pct: float | None


class Outlier(BaseModel):
    label: str
    measure: str
    value: float
    score: float = Field(description="Robust z-score (median / MAD).")


class AnalysisOutput(BaseModel):
    """KPI analysis of a result: totals, period-over-period change, shares, movers, outliers."""

    query_type: str
    row_count: int
    measures: list[MeasureSummary] = Field(default_factory=list)
    period_change: list[PeriodChange] = Field(default_factory=list)
    shares: list[Share] = Field(default_factory=list)
    top_movers: list[Mover] = Field(default_factory=list)
    bottom_movers: list[Mover] = Field(default_factory=list)
    outliers: list[Outlier] = Field(default_factory=list)
    analysis: str
    recommendations: list[str] = Field(default_factory=list)


class ChartConfigOutput(BaseModel):
    """A chart for a result: what to draw, and the Vega-Lite spec that draws it."""

    chart_type: Literal["line", "bar", "grouped_bar", "pie", "scatter", "metric"]
    title: str
    x_axis: str
    y_axis: str
    series: str | None = None
    labels: list[str] = Field(default_factory=list)
    values: list[float | None] = Field(default_factory=list)
    vega_lite: dict[str, Any] = Field(default_factory=dict)
    chart_id: str = ""
    url: str | None = Field(
        None, description="Where the chart is served as PNG (set once the chart is stored)."
    )
    svg_url: str | None = Field(None, description="Where the chart is served as SVG.")
    image_url: str | None = Field(
        None,
        description="A signed PNG link that works without the API key until it expires "
        "(ANALYTICS_CHART_LINK_TTL_SECONDS): for an <img> or a markdown image in a chat UI.",
    )


class Contribution(BaseModel):
    member: str
    previous: float | None
    current: float | None
    previous_weight: float
    current_weight: float
    contribution: float = Field(
        description="Share of the total change this member accounts for, "
        "in the metric's unit; contributions sum to the change."
    )
    rate_effect: float
    mix_effect: float
    share_of_change: float | None


class DimensionBreakdown(BaseModel):
    dimension: str
    contributions: list[Contribution]
    concentration: float = Field(
        description="Top member's share of the change minus its share "
        "of volume: how surprising the concentration is."
    )


class Driver(BaseModel):
    dimension: str
    member: str
    contribution: float
    share_of_change: float | None
    volume_share: float
    detail: str = ""


class RootCauseOutput(BaseModel):
    """A metric's change between two periods, decomposed by every dimension."""

    metric: str
    label: str
    unit: Unit
    period: PeriodModel
    comparison: PeriodModel
    current_value: float | None
    previous_value: float | None
    change: float | None
    change_pct: float | None
    breakdowns: list[DimensionBreakdown] = Field(default_factory=list)
    drivers: list[Driver] = Field(default_factory=list)
    summary: str
    recommendations: list[str] = Field(default_factory=list)
