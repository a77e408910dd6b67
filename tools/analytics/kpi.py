"""KPI analysis of a query result: totals, period-over-period change, shares, movers, outliers.

`analyze(result, query_type)` works on any result (the semantic layer's, a model's SQL, inline
data). Additive measures (units, revenue, minutes) are summed; rates and averages are averaged,
because summing percentages means nothing. Outliers use a robust z-score (median and MAD), so a
single spike cannot hide itself by inflating the standard deviation.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from tools.analytics.frame import Frame, as_number, fmt, fmt_change, frame
from tools.analytics.outputs import (
    AnalysisOutput,
    MeasureMeta,
    MeasureSummary,
    Mover,
    Outlier,
    PeriodChange,
    QueryResult,
    Share,
)

QUERY_TYPES = ("auto", "trend", "comparison", "ranking", "breakdown", "single_value")
OUTLIER_Z = 3.5
MOVERS = 3


def infer_query_type(f: Frame) -> str:
    """trend (a time column), comparison (a period column), ranking / breakdown, single_value."""
    if f.time == "period":
        return "comparison"
    if f.time:
        return "trend"
    if f.categories:
        return "ranking" if len(f.result.rows) > 1 else "breakdown"
    return "single_value"


def _aggregate(values: list[float], meta: MeasureMeta) -> float | None:
    if not values:
        return None
    return sum(values) if meta.additive else statistics.fmean(values)


def _by_time(f: Frame, measure: str, category: str | None = None) -> dict[str, dict[str, float]]:
    """time label -> (category or '') -> aggregated value, times in first-seen order."""
    meta = f.meta(measure)
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in f.rows:
        value = as_number(row.get(measure))
        if value is None or f.time is None:
            continue
        key = str(row[category]) if category else ""
        cells[str(row[f.time])][key].append(value)
    ordered = sorted(cells) if f.time != "period" else list(cells)
    return {
        t: {k: v for k, vals in cells[t].items() if (v := _aggregate(vals, meta)) is not None}
        for t in ordered
    }


def _pct(change: float, base: float) -> float | None:
    return round(100 * change / abs(base), 2) if base else None


def analyze(result: QueryResult, query_type: str = "auto") -> AnalysisOutput:
    """Analyse `result`; query_type is one of QUERY_TYPES ('auto' infers it)."""
    if query_type not in QUERY_TYPES:
        raise ValueError(f"query_type must be one of {', '.join(QUERY_TYPES)} (got {query_type!r})")
    f = frame(result)
    kind = infer_query_type(f) if query_type == "auto" else query_type
    if not result.rows:
        return AnalysisOutput(
            query_type=kind,
            row_count=0,
            analysis="The query returned no rows: nothing to analyse.",
            recommendations=["Widen the period or remove a filter."],
        )
    if not f.measures:
        return AnalysisOutput(
            query_type=kind,
            row_count=len(result.rows),
            analysis=f"{len(result.rows)} rows without numeric columns; "
            "nothing to total or compare.",
        )
    out = AnalysisOutput(query_type=kind, row_count=len(result.rows), analysis="")
    for measure in f.measures:
        meta = f.meta(measure)
        values = [v for r in f.rows if (v := as_number(r.get(measure))) is not None]
        out.measures.append(MeasureSummary(
            measure=measure, label=meta.label, aggregation="sum" if meta.additive else "mean",
            total=round(sum(values), 2) if meta.additive and values else None,
            mean=round(statistics.fmean(values), 2) if values else None,
            minimum=min(values) if values else None, maximum=max(values) if values else None,
        ))  # fmt: skip
    primary = f.measures[0]
    meta = f.meta(primary)
    category = f.categories[0] if f.categories else None
    if f.time:
        series = _by_time(f, primary)
        times = list(series)
        for measure in f.measures:
            per_time = _by_time(f, measure)
            if len(times) >= 2:
                prev_t, cur_t = times[-2], times[-1]
                if "" not in per_time.get(prev_t, {}) or "" not in per_time.get(cur_t, {}):
                    continue  # this measure is empty in one of the two periods
                prev, cur = per_time[prev_t][""], per_time[cur_t][""]
                change = cur - prev
                out.period_change.append(PeriodChange(
                    measure=measure, previous_period=prev_t, current_period=cur_t,
                    previous=round(prev, 2), current=round(cur, 2), change=round(change, 2),
                    change_pct=_pct(change, prev),
                ))  # fmt: skip
        if category and len(times) >= 2:
            by_cat = _by_time(f, primary, category)
            prev_t, cur_t = times[-2], times[-1]
            movers = []
            for cat, now in by_cat.get(cur_t, {}).items():
                before = by_cat.get(prev_t, {}).get(cat)
                moved = None if before is None else now - before
                movers.append(
                    Mover(
                        category=cat,
                        measure=primary,
                        previous=before,
                        current=now,
                        change=moved,
                        change_pct=_pct(moved, before or 0.0) if moved is not None else None,
                    )
                )
            ranked = sorted(
                (m for m in movers if m.change is not None),
                key=lambda m: m.change or 0.0,
                reverse=True,
            )
            out.top_movers = ranked[:MOVERS]
            out.bottom_movers = list(reversed(ranked[-MOVERS:])) if len(ranked) > 1 else []
    elif category:
        ranked_rows = sorted(
            ((str(r[category]), v) for r in f.rows if (v := as_number(r.get(primary))) is not None),
            key=lambda item: item[1],
            reverse=True,
        )
        out.top_movers = [
            Mover(
                category=c, measure=primary, previous=None, current=v, change=None, change_pct=None
            )
            for c, v in ranked_rows[:MOVERS]
        ]
        out.bottom_movers = (
            [
                Mover(
                    category=c,
                    measure=primary,
                    previous=None,
                    current=v,
                    change=None,
                    change_pct=None,
                )
                for c, v in reversed(ranked_rows[-MOVERS:])
            ]
            if len(ranked_rows) > MOVERS
            else []
        )
    if category and meta.additive:
        totals: dict[str, float] = defaultdict(float)
        for row in f.rows:
            if (v := as_number(row.get(primary))) is not None:
                totals[str(row[category])] += v
        grand = sum(totals.values())
        if grand:
            out.shares = [
                Share(
                    category=c, measure=primary, value=round(v, 2), share=round(100 * v / grand, 2)
                )
                for c, v in sorted(totals.items(), key=lambda kv: -kv[1])[:10]
            ]
    out.outliers = _outliers(f, primary)
    out.analysis = _text(f, out, meta)
    out.recommendations = _recommendations(f, out, meta)
    return out


def _outliers(f: Frame, measure: str) -> list[Outlier]:
    """Robust outliers of `measure`: within each category's time series when the result has
    both (a big category is not an outlier of a small one), else across all rows."""
    groups: dict[str, list[tuple[str, float]]] = defaultdict(list)
    split = f.categories[0] if f.time and f.categories else None
    for row in f.rows:
        if (v := as_number(row.get(measure))) is not None:
            groups[str(row[split]) if split else ""].append((f.label(row), v))
    found: list[Outlier] = []
    for points in groups.values():
        if len(points) < 5:
            continue
        values = [v for _, v in points]
        median = statistics.median(values)
        mad = statistics.median(abs(v - median) for v in values)
        if mad == 0:
            continue
        for label, v in points:
            score = 0.6745 * (v - median) / mad
            if abs(score) > OUTLIER_Z:
                found.append(Outlier(label=label, measure=measure, value=v, score=round(score, 2)))
    return sorted(found, key=lambda o: -abs(o.score))[:5]


def _text(f: Frame, out: AnalysisOutput, meta: MeasureMeta) -> str:
    unit = meta.unit
    lines: list[str] = []
    summary = out.measures[0]
    if out.row_count == 1 and not f.time and not f.categories:
        parts = [
            f"{f.meta(s.measure).label}: {fmt(s.mean, f.meta(s.measure).unit)}"
            for s in out.measures
        ]
        return "; ".join(parts) + "."
    if summary.total is not None:
        lines.append(f"{meta.label} totals {fmt(summary.total, unit)} over {out.row_count} rows.")
    else:
        lines.append(
            f"{meta.label} ranges from {fmt(summary.minimum, unit)} to "
            f"{fmt(summary.maximum, unit)} (mean {fmt(summary.mean, unit)})."
        )
    for change in out.period_change[:1]:
        direction = "up" if change.change > 0 else "down" if change.change < 0 else "flat"
        pct = f" ({change.change_pct:+.1f}%)" if change.change_pct is not None else ""
        lines.append(
            f"{change.current_period}: {fmt(change.current, unit)}, {direction} "
            f"{fmt_change(change.change, unit)}{pct} on {change.previous_period}."
        )
    if out.top_movers and f.time:
        top = out.top_movers[0]
        what = "Biggest rise" if (top.change or 0) > 0 else "Smallest fall"
        lines.append(f"{what}: {top.category} ({fmt_change(top.change, unit)}).")
        if out.bottom_movers:
            low = out.bottom_movers[0]
            what = "Biggest fall" if (low.change or 0) < 0 else "Smallest rise"
            lines.append(f"{what}: {low.category} ({fmt_change(low.change, unit)}).")
    elif out.top_movers:
        top = out.top_movers[0]
        lines.append(f"Highest: {top.category} at {fmt(top.current, unit)}.")
        if out.bottom_movers:
            low = out.bottom_movers[0]
            lines.append(f"Lowest: {low.category} at {fmt(low.current, unit)}.")
    if out.shares:
        lead = out.shares[0]
        lines.append(f"{lead.category} accounts for {lead.share:.1f}% of the total.")
    for outlier in out.outliers[:2]:
        side = "above" if outlier.score > 0 else "below"
        lines.append(
            f"Outlier: {outlier.label} at {fmt(outlier.value, unit)}, far {side} the "
            f"typical value (robust z {outlier.score:+.1f})."
        )
    return " ".join(lines)


def _recommendations(f: Frame, out: AnalysisOutput, meta: MeasureMeta) -> list[str]:
    recs: list[str] = []
    unit = meta.unit
    for outlier in out.outliers[:2]:
        bad = (outlier.score > 0) != meta.higher_is_better
        if bad:
            recs.append(
                f"Investigate {outlier.label}: {meta.label.lower()} of "
                f"{fmt(outlier.value, unit)} is far from the norm; ask why it changed "
                "to get a root-cause breakdown."
            )
    for change in out.period_change[:1]:
        worse = (change.change < 0) == meta.higher_is_better and change.change != 0
        if worse and change.change_pct is not None and abs(change.change_pct) >= 5:
            recs.append(
                f"{meta.label} worsened {abs(change.change_pct):.1f}% in "
                f"{change.current_period}; compare {change.current_period} with "
                f"{change.previous_period} by dimension to find the driver."
            )
    if f.time and out.bottom_movers and meta.higher_is_better:
        low = out.bottom_movers[0]
        if low.change is not None and low.change < 0:
            recs.append(
                f"Follow up with {low.category}, the largest decline "
                f"({fmt_change(low.change, unit)})."
            )
    if f.time and out.top_movers and not meta.higher_is_better:
        top = out.top_movers[0]
        if top.change is not None and top.change > 0:
            recs.append(
                f"Follow up with {top.category}, where {meta.label.lower()} rose most "
                f"({fmt_change(top.change, unit)})."
            )
    if out.shares and out.shares[0].share >= 40 and len(out.shares) > 2:
        recs.append(
            f"{out.shares[0].category} carries {out.shares[0].share:.0f}% of "
            f"{meta.label.lower()}; watch that concentration."
        )
    if not f.time and out.bottom_movers:
        worst = out.bottom_movers[0] if meta.higher_is_better else out.top_movers[0]
        recs.append(
            f"Review {worst.category}, the weakest on {meta.label.lower()} "
            f"({fmt(worst.current, unit)}), against the best performers."
        )
    if not recs:
        recs.append(f"No anomaly stands out; keep tracking {meta.label.lower()} by month.")
    return _unique(recs)[:4]


def _unique(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
