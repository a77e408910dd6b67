"""KPI analysis, root-cause analysis (it finds the planted stories) and charts."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg_pool import AsyncConnectionPool

from tests.analytics.questions import TODAY
from tools.analytics.catalogue import metric
from tools.analytics.charts import configure_chart, render_chart
from tools.analytics.executor import run_readonly
from tools.analytics.frame import inline_result
from tools.analytics.kpi import analyze
from tools.analytics.outputs import QueryResult, RootCauseOutput
from tools.analytics.periods import parse_comparison, parse_period
from tools.analytics.rootcause import root_cause
from tools.analytics.semantic import generate


async def ask(pool: AsyncConnectionPool, question: str) -> QueryResult:
    generation = generate(question, TODAY)
    assert generation.sql is not None, generation.message
    result = await run_readonly(pool, generation.sql)
    result.measures = generation.measures
    return result


async def explain(
    pool: AsyncConnectionPool, key: str, period: str, comparison: str = ""
) -> RootCauseOutput:
    current = parse_period(period, TODAY)
    previous = parse_comparison(comparison, current, TODAY)
    return await root_cause(lambda sql: run_readonly(pool, sql), metric(key), current, previous)


# --- root cause: the planted stories ---------------------------------------------------------


@pytest.mark.parametrize(
    "key, period, expected",
    [
        ("downtime_minutes", "August 2025", {("plant", "Chattanooga Assembly")}),
        (
            "damage_rate_pct",
            "Q3 2025",
            {("carrier", "Rapid Haul Logistics"), ("region", "Southwest")},
        ),
        ("warranty_attach_pct", "2025", {("region", "Midwest")}),
        ("units_sold", "2025", {("model", "Spark"), ("segment", "EV"), ("make", "Voltra")}),
        ("defect_rate_pct", "Q2 2024", {("plant", "Silao Assembly"), ("country", "Mexico")}),
        ("build_plan_attainment_pct", "August 2025", {("plant", "Chattanooga Assembly")}),
    ],
)
async def test_root_cause_finds_the_planted_story(
    reader_pool: AsyncConnectionPool, key: str, period: str, expected: set[tuple[str, str]]
) -> None:
    out = await explain(reader_pool, key, period)
    top = out.drivers[0]
    assert (top.dimension, top.member) in expected, out.summary
    assert top.share_of_change is not None and top.share_of_change > 0.6
    assert top.member in out.summary and out.recommendations


async def test_the_damage_story_is_located_in_carrier_and_region(
    reader_pool: AsyncConnectionPool,
) -> None:
    out = await explain(reader_pool, "damage_rate_pct", "Q3 2025")
    found = {(d.dimension, d.member) for d in out.drivers}
    assert {("carrier", "Rapid Haul Logistics"), ("region", "Southwest")} <= found
    assert "Southwest" in out.drivers[0].detail or "Rapid Haul" in out.drivers[0].detail


async def test_contributions_add_up_to_the_change(reader_pool: AsyncConnectionPool) -> None:
    for key, period, comparison in [
        ("damage_rate_pct", "Q3 2025", ""),
        ("revenue", "2025", "same period last year"),
        ("gap_attach_pct", "H2 2025", ""),
    ]:
        out = await explain(reader_pool, key, period, comparison)
        assert out.change is not None
        for breakdown in out.breakdowns:
            if len(breakdown.contributions) < 10:  # all members listed
                total = sum(c.contribution for c in breakdown.contributions)
                assert math.isclose(total, out.change, abs_tol=1e-3), breakdown.dimension
                for c in breakdown.contributions:
                    assert math.isclose(c.rate_effect + c.mix_effect, c.contribution, abs_tol=1e-3)


async def test_a_flat_metric_names_no_driver(reader_pool: AsyncConnectionPool) -> None:
    out = await explain(reader_pool, "finance_penetration_pct", "Q2 2025", "same period last year")
    assert abs(out.change or 0) < 2
    assert all(d.share_of_change is not None for d in out.drivers)


# --- KPI analysis ----------------------------------------------------------------------------


async def test_kpi_trend_finds_the_downtime_spike(reader_pool: AsyncConnectionPool) -> None:
    result = await ask(reader_pool, "Monthly downtime in 2025")
    out = analyze(result)
    assert out.query_type == "trend"
    assert out.outliers and out.outliers[0].label == "2025-08-01"
    assert out.measures[0].aggregation == "sum"
    assert out.period_change[0].current_period == "2025-12-01"
    assert out.period_change[0].previous_period == "2025-11-01"
    assert any("2025-08-01" in r for r in out.recommendations)


async def test_kpi_breakdown_shares_and_movers(reader_pool: AsyncConnectionPool) -> None:
    out = analyze(await ask(reader_pool, "Units sold by region in 2025"))
    assert out.query_type == "ranking"
    assert math.isclose(sum(s.share for s in out.shares), 100, abs_tol=0.05)
    assert out.top_movers[0].category == "Southeast"  # the largest region
    rates = analyze(await ask(reader_pool, "Damage rate by carrier in 2025"))
    assert rates.shares == []  # shares of a rate mean nothing
    assert rates.measures[0].aggregation == "mean"


async def test_kpi_movers_between_periods(reader_pool: AsyncConnectionPool) -> None:
    out = analyze(await ask(reader_pool, "Warranty attach rate by region, 2024 vs 2025"))
    assert out.query_type == "comparison"
    assert out.bottom_movers[0].category == "Midwest"
    assert (out.bottom_movers[0].change or 0) < -10


def test_kpi_inline_data_and_empty_results() -> None:
    data = inline_result(
        '[{"month": "2025-01-01", "units": 10}, {"month": "2025-02-01", "units": 15}]'
    )
    out = analyze(data, "trend")
    assert out.period_change[0].change == 5 and out.period_change[0].change_pct == 50
    empty = QueryResult(sql="", columns=["a"], column_kinds=["number"], rows=[], row_count=0)
    assert "no rows" in analyze(empty).analysis
    with pytest.raises(ValueError, match="query_type"):
        analyze(data, "astrology")


CELLS = st.one_of(
    st.none(),
    st.integers(-(10**6), 10**6),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.text(max_size=8),
)


@settings(max_examples=150, deadline=None)
@given(
    columns=st.lists(
        st.sampled_from(
            ["month", "region", "units_sold", "damage_rate_pct", "x", "period", "revenue"]
        ),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    rows=st.lists(st.lists(CELLS, min_size=4, max_size=4), max_size=30),
    question=st.text(max_size=40),
)
def test_kpi_and_charts_never_crash(
    columns: list[str], rows: list[list[object]], question: str
) -> None:
    table = [row[: len(columns)] for row in rows]
    result = inline_result(json.dumps({"columns": columns, "rows": table}))
    analysis = analyze(result)
    assert analysis.analysis
    chart = configure_chart(result, question)
    assert chart.vega_lite["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    assert len(chart.labels) == len(chart.values)


# --- charts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, chart_type",
    [
        ("Monthly downtime by plant since June 2025", "line"),
        ("Damage rate by carrier in Q3 2025", "bar"),
        ("Warranty attach rate by region, 2024 vs 2025", "grouped_bar"),
        ("Share of units sold by region in 2025", "pie"),
        ("Total revenue in 2024", "metric"),
        ("Revenue by dealer in 2025", "bar"),
    ],
)
async def test_chart_types(
    reader_pool: AsyncConnectionPool, question: str, chart_type: str
) -> None:
    chart = configure_chart(await ask(reader_pool, question), question)
    assert chart.chart_type == chart_type
    assert chart.title.startswith(question[:20])
    assert chart.vega_lite["data"]["values"]
    assert chart.chart_id and len(chart.labels) == len(chart.values)


async def test_charts_render_to_png_and_svg(reader_pool: AsyncConnectionPool) -> None:
    question = "Monthly downtime by plant in 2025"
    chart = configure_chart(await ask(reader_pool, question), question)
    png = render_chart(chart.vega_lite, "png")
    assert isinstance(png, bytes) and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    svg = render_chart(chart.vega_lite, "svg")
    assert isinstance(svg, str) and svg.lstrip().startswith("<svg")
    assert "Chattanooga Assembly" in svg
    with pytest.raises(ValueError, match="format"):
        render_chart(chart.vega_lite, "gif")  # type: ignore[arg-type]
