"""Root-cause analysis: decompose a metric's change between two periods by every dimension.

A metric is numerator / denominator (the denominator is the row count for additive metrics).
For a member i of a dimension, with n and d its numerator and denominator and D the total
denominator in each period, its contribution to the change of the metric is

    additive:  n1_i - n0_i
    ratio:     scale * (n1_i / D1 - n0_i / D0) = w1_i * r1_i - w0_i * r0_i

(w = d / D, the member's share of volume; r = scale * n / d, its own rate). Contributions sum
exactly to the total change, and split into a rate effect w1 (r1 - r0) and a mix effect
(w1 - w0) r0. A member is a driver when it carries far more of the change than of the volume:
its *concentration* = share of change - share of volume. The top driver is then broken down by
every other dimension within it ("Rapid Haul Logistics, and within it the Southwest").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tools.analytics.catalogue import DEMO_LAYER, Dimension, Metric, SemanticLayer
from tools.analytics.frame import fmt, fmt_change
from tools.analytics.outputs import (
    Contribution,
    DimensionBreakdown,
    Driver,
    QueryResult,
    RootCauseOutput,
)
from tools.analytics.periods import Period

RunQuery = Callable[[str], Awaitable[QueryResult]]
TOP_MEMBERS = 10


@dataclass
class _Cell:
    n0: float = 0.0
    d0: float = 0.0
    n1: float = 0.0
    d1: float = 0.0


def _range(column: str, period: Period) -> str:
    return (
        f"{column} >= DATE '{period.start.isoformat()}' AND "
        f"{column} < DATE '{period.end.isoformat()}'"
    )


def decomposition_sql(
    metric: Metric,
    dim: Dimension,
    current: Period,
    previous: Period,
    within: tuple[Dimension, str] | None = None,
    layer: SemanticLayer = DEMO_LAYER,
) -> str:
    """Numerator and denominator per member and side ('current' / 'previous')."""
    fact = layer.facts[metric.fact]
    joins: list[str] = []
    for d in (dim, *([within[0]] if within else [])):
        for join in d.joins[metric.fact]:
            if join not in joins:
                joins.append(join)
    joins.sort(key=list(fact.joins).index)
    col = fact.date_column
    den = metric.denominator or "COUNT(*)"
    sql = (
        f"SELECT {dim.column} AS member, CASE WHEN {_range(col, current)} THEN 'current' "
        f"ELSE 'previous' END AS side, {metric.numerator} AS num, {den} AS den "
        f"FROM {fact.from_clause}"
    )
    for join in joins:
        sql += f" {fact.joins[join]}"
    sql += f" WHERE (({_range(col, current)}) OR ({_range(col, previous)}))"
    if within:
        value = within[1].replace("'", "''")
        sql += f" AND {within[0].column} = '{value}'"
    return sql + " GROUP BY 1, 2"


def _cells(result: QueryResult) -> dict[str, _Cell]:
    cells: dict[str, _Cell] = {}
    for member, side, num, den in result.rows:
        cell = cells.setdefault(str(member), _Cell())
        if side == "current":
            cell.n1, cell.d1 = float(num or 0), float(den or 0)
        else:
            cell.n0, cell.d0 = float(num or 0), float(den or 0)
    return cells


def _value(metric: Metric, n: float, d: float) -> float | None:
    if metric.additive:
        return n
    return metric.scale * n / d if d else None


def _contributions(
    metric: Metric, cells: dict[str, _Cell], totals: _Cell, change: float
) -> list[Contribution]:
    out = []
    for member, c in cells.items():
        if metric.additive:
            contribution = c.n1 - c.n0
            rate, mix = contribution, 0.0
            w0 = c.n0 / totals.n0 if totals.n0 else 0.0
            w1 = c.n1 / totals.n1 if totals.n1 else 0.0
        else:
            w0 = c.d0 / totals.d0 if totals.d0 else 0.0
            w1 = c.d1 / totals.d1 if totals.d1 else 0.0
            r0 = metric.scale * c.n0 / c.d0 if c.d0 else None
            r1 = metric.scale * c.n1 / c.d1 if c.d1 else None
            contribution = w1 * (r1 or 0.0) - w0 * (r0 or 0.0)
            if r0 is None or r1 is None:
                rate, mix = (contribution, 0.0) if r0 is None else (0.0, contribution)
            else:
                rate, mix = w1 * (r1 - r0), (w1 - w0) * r0
        out.append(Contribution(
            member=member, previous=_value(metric, c.n0, c.d0), current=_value(metric, c.n1, c.d1),
            previous_weight=round(w0, 4), current_weight=round(w1, 4),
            contribution=round(contribution, 4), rate_effect=round(rate, 4),
            mix_effect=round(mix, 4),
            share_of_change=round(contribution / change, 4) if abs(change) > 1e-9 else None,
        ))  # fmt: skip
    return sorted(out, key=lambda c: -abs(c.contribution))


def _volume_share(c: Contribution) -> float:
    return (c.previous_weight + c.current_weight) / 2


def _lead(contributions: list[Contribution], change: float) -> Contribution | None:
    same_sign = [c for c in contributions if c.contribution * change > 0]
    return max(same_sign, key=lambda c: abs(c.contribution), default=None)


def _concentration(c: Contribution | None) -> float:
    if c is None or c.share_of_change is None:
        return 0.0
    return round(min(c.share_of_change, 1.5) - _volume_share(c), 4)


async def root_cause(
    run: RunQuery,
    metric: Metric,
    current: Period,
    previous: Period,
    dimensions: list[Dimension] | None = None,
    layer: SemanticLayer = DEMO_LAYER,
) -> RootCauseOutput:
    """Decompose `metric`'s change from `previous` to `current`; `run` executes read-only SQL."""
    dims = dimensions or layer.dimensions_for(metric.fact)
    breakdowns: list[DimensionBreakdown] = []
    totals = _Cell()
    change = 0.0
    cur_v = prev_v = None
    for index, dim in enumerate(dims):
        cells = _cells(await run(decomposition_sql(metric, dim, current, previous, layer=layer)))
        if index == 0:
            for c in cells.values():
                totals.n0 += c.n0
                totals.d0 += c.d0
                totals.n1 += c.n1
                totals.d1 += c.d1
            cur_v = _value(metric, totals.n1, totals.d1)
            prev_v = _value(metric, totals.n0, totals.d0)
            change = (cur_v or 0.0) - (prev_v or 0.0)
        contributions = _contributions(metric, cells, totals, change)
        breakdowns.append(DimensionBreakdown(
            dimension=dim.key, contributions=contributions[:TOP_MEMBERS],
            concentration=_concentration(_lead(contributions, change)),
        ))  # fmt: skip
    breakdowns.sort(key=lambda b: -b.concentration)
    drivers: list[Driver] = []
    for b in breakdowns:
        lead = _lead(b.contributions, change)
        if lead is None or b.concentration <= 0.05:
            continue
        drivers.append(
            Driver(
                dimension=b.dimension,
                member=lead.member,
                contribution=lead.contribution,
                share_of_change=lead.share_of_change,
                volume_share=round(_volume_share(lead), 4),
            )
        )
    drivers = drivers[:3]
    if drivers:
        drivers[0].detail = await _drill(
            run, metric, current, previous, drivers[0], dims, totals, change, layer
        )
    return RootCauseOutput(
        metric=metric.key, label=metric.label, unit=metric.unit, period=current.model(),
        comparison=previous.model(),
        current_value=round(cur_v, 4) if cur_v is not None else None,
        previous_value=round(prev_v, 4) if prev_v is not None else None,
        change=round(change, 4),
        change_pct=round(100 * change / abs(prev_v), 2) if prev_v else None,
        breakdowns=breakdowns, drivers=drivers,
        summary=_summary(metric, current, previous, cur_v, prev_v, change, drivers),
        recommendations=_recommendations(metric, change, drivers),
    )  # fmt: skip


async def _drill(
    run: RunQuery,
    metric: Metric,
    current: Period,
    previous: Period,
    driver: Driver,
    dims: list[Dimension],
    totals: _Cell,
    change: float,
    layer: SemanticLayer,
) -> str:
    """Within the top driver, the other dimension whose member concentrates its change most."""
    top = next(d for d in dims if d.key == driver.dimension)
    best: tuple[float, str, Contribution] | None = None
    for dim in dims:
        if dim.key == top.key:
            continue
        sql = decomposition_sql(
            metric, dim, current, previous, within=(top, driver.member), layer=layer
        )
        contributions = _contributions(metric, _cells(await run(sql)), totals, driver.contribution)
        lead = _lead(contributions, driver.contribution)
        if lead is None or lead.share_of_change is None:
            continue
        inside = sum(c.current_weight + c.previous_weight for c in contributions) or 1.0
        volume = (lead.current_weight + lead.previous_weight) / inside
        score = min(lead.share_of_change, 1.5) - volume
        if best is None or score > best[0]:
            best = (score, dim.key, lead)
    if best is None or best[0] <= 0.15:  # below this, "concentration" is mostly noise
        return ""
    _score, key, lead = best
    return (
        f"within {driver.member}, {key.replace('_', ' ')} {lead.member} accounts for "
        f"{100 * (lead.share_of_change or 0):.0f}% of its change"
    )


def _summary(
    metric: Metric,
    current: Period,
    previous: Period,
    cur: float | None,
    prev: float | None,
    change: float,
    drivers: list[Driver],
) -> str:
    unit = metric.unit
    verb = "rose" if change > 0 else "fell" if change < 0 else "held"
    pct = f", {100 * change / abs(prev):+.1f}%" if prev else ""
    text = (
        f"{metric.label} {verb} from {fmt(prev, unit)} in {previous.label} to "
        f"{fmt(cur, unit)} in {current.label} ({fmt_change(change, unit)}{pct})."
    )
    if not drivers:
        return text + (" The change is spread across every dimension; no single member stands out.")
    first = drivers[0]
    text += (
        f" Largest driver: {first.dimension.replace('_', ' ')} {first.member} "
        f"({fmt_change(first.contribution, unit)}, "
        f"{100 * (first.share_of_change or 0):.0f}% of the change from "
        f"{100 * first.volume_share:.0f}% of the volume)"
    )
    text += f"; {first.detail}." if first.detail else "."
    others = [
        f"{d.dimension.replace('_', ' ')} {d.member} "
        f"({100 * (d.share_of_change or 0):.0f}% of the change)"
        for d in drivers[1:]
    ]
    if others:
        text += " Also concentrated: " + "; ".join(others) + "."
    return text


def _recommendations(metric: Metric, change: float, drivers: list[Driver]) -> list[str]:
    worse = (change < 0) == metric.higher_is_better and change != 0
    verb = "Investigate" if worse else "Learn from"
    recs = []
    for driver in drivers[:2]:
        where = f"{driver.dimension.replace('_', ' ')} {driver.member}"
        detail = f" ({driver.detail})" if driver.detail else ""
        recs.append(
            f"{verb} {where}{detail}: it accounts for "
            f"{100 * (driver.share_of_change or 0):.0f}% of the change in "
            f"{metric.label.lower()} with {100 * driver.volume_share:.0f}% of the volume."
        )
    return recs
