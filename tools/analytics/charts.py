"""Chart configuration for a query result, as a Vega-Lite spec, and rendering with vl-convert.

`configure_chart(result, question)` picks the chart from the result's shape: a line over time
(one line per category when there is one), grouped bars for a comparison of periods, a pie for a
share question over a few categories, a scatter for two measures "vs" each other, sorted bars for
a ranking, a single number for a one-value result. `render_chart(spec, "png" | "svg")` draws it
(blocking, ~50 ms after vl-convert's first call; use `arender_chart` from async code).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any, Literal

from tools.analytics.frame import Frame, as_number, frame
from tools.analytics.outputs import ChartConfigOutput, QueryResult

MAX_POINTS = 500
MAX_SERIES = 8
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
ChartFormat = Literal["png", "svg"]


def _title(question: str, fallback: str) -> str:
    text = re.sub(r"\s+", " ", question).strip().rstrip("?.!")
    if not text:
        return fallback
    text = text[0].upper() + text[1:]
    return text if len(text) <= 80 else text[:77] + "..."


def _axis_title(f: Frame, measure: str) -> str:
    return f.meta(measure).label


def _x_type(f: Frame, column: str) -> str:
    kind = f.result.column_kinds[f.result.columns.index(column)]
    return "temporal" if kind == "temporal" else "ordinal"


def _top_series(f: Frame, category: str, measure: str) -> list[str]:
    totals: dict[str, float] = {}
    for row in f.rows:
        totals[str(row[category])] = totals.get(str(row[category]), 0.0) + (
            as_number(row.get(measure)) or 0.0
        )
    return [k for k, _ in sorted(totals.items(), key=lambda kv: -kv[1])[:MAX_SERIES]]


def configure_chart(result: QueryResult, question: str = "") -> ChartConfigOutput:
    """The chart that fits `result` (and the question's wording) with its Vega-Lite spec."""
    f = frame(result)
    rows = f.rows[:MAX_POINTS]
    q = question.lower()
    if not f.measures or not rows:
        return _finish(
            ChartConfigOutput(
                chart_type="metric", title=_title(question, "No data"), x_axis="", y_axis=""
            ),
            rows,
            {"mark": "text"},
        )
    measure = f.measures[0]
    y_title = _axis_title(f, measure)
    category = f.categories[0] if f.categories else None
    y = {"field": measure, "type": "quantitative", "title": y_title}
    if f.time and f.time != "period":
        x = {"field": f.time, "type": _x_type(f, f.time), "title": f.time.capitalize()}
        encoding: dict[str, Any] = {"x": x, "y": y, "tooltip": _tooltip(f)}
        series = None
        if category:
            keep = set(_top_series(f, category, measure))
            rows = [r for r in rows if str(r[category]) in keep]
            encoding["color"] = {
                "field": category,
                "type": "nominal",
                "title": category.replace("_", " ").capitalize(),
            }
            series = category
        config = ChartConfigOutput(
            chart_type="line",
            title=_title(question, y_title),
            x_axis=f.time,
            y_axis=measure,
            series=series,
        )
        return _finish(
            config,
            rows,
            {"mark": {"type": "line", "point": True}, "encoding": encoding},
            f.time,
            series,
        )
    if f.time == "period":
        if category:
            encoding = {
                "x": {
                    "field": category,
                    "type": "nominal",
                    "title": category.capitalize(),
                    "axis": {"labelAngle": 0},
                },
                "xOffset": {"field": "period"},
                "y": y,
                "color": {"field": "period", "type": "nominal", "title": "Period", "sort": None},
                "tooltip": _tooltip(f),
            }
            config = ChartConfigOutput(
                chart_type="grouped_bar",
                title=_title(question, y_title),
                x_axis=category,
                y_axis=measure,
                series="period",
            )
            return _finish(config, rows, {"mark": "bar", "encoding": encoding}, category, "period")
        encoding = {
            "x": {"field": "period", "type": "ordinal", "sort": None, "title": "Period"},
            "y": y,
            "tooltip": _tooltip(f),
        }
        config = ChartConfigOutput(
            chart_type="bar", title=_title(question, y_title), x_axis="period", y_axis=measure
        )
        return _finish(config, rows, {"mark": "bar", "encoding": encoding}, "period")
    if not category:
        if len(f.measures) >= 1 and len(rows) == 1:
            config = ChartConfigOutput(
                chart_type="metric", title=_title(question, y_title), x_axis="", y_axis=measure
            )
            spec = {
                "mark": {"type": "text", "fontSize": 40},
                "encoding": {"text": {"field": measure, "type": "quantitative", "format": ",.2~f"}},
            }
            return _finish(config, rows, spec)
        config = ChartConfigOutput(
            chart_type="bar", title=_title(question, y_title), x_axis="", y_axis=measure
        )
        return _finish(config, rows, {"mark": "bar", "encoding": {"y": y}})
    if len(f.measures) >= 2 and re.search(r"\b(vs|versus|against|correlat\w*|relationship)\b", q):
        other = f.measures[1]
        encoding = {
            "x": y,
            "y": {"field": other, "type": "quantitative", "title": _axis_title(f, other)},
            "tooltip": _tooltip(f),
        }
        config = ChartConfigOutput(
            chart_type="scatter",
            title=_title(question, y_title),
            x_axis=measure,
            y_axis=other,
            series=category,
        )
        return _finish(
            config,
            rows,
            {"mark": {"type": "point", "filled": True}, "encoding": encoding},
            category,
        )
    share_words = re.search(r"\b(share|mix|split|breakdown|proportion|percentage of)\b", q)
    if share_words and len(rows) <= 6 and f.meta(measure).additive:
        encoding = {
            "theta": {"field": measure, "type": "quantitative", "stack": True},
            "color": {"field": category, "type": "nominal", "title": category.capitalize()},
            "tooltip": _tooltip(f),
        }
        config = ChartConfigOutput(
            chart_type="pie", title=_title(question, y_title), x_axis=category, y_axis=measure
        )
        return _finish(
            config,
            rows,
            {"mark": {"type": "arc", "innerRadius": 40}, "encoding": encoding},
            category,
        )
    horizontal = len(rows) > 8 or max(len(str(r[category])) for r in rows) > 14
    cat_axis = {
        "field": category,
        "type": "nominal",
        "sort": "-x" if horizontal else "-y",
        "title": category.replace("_", " ").capitalize(),
    }
    encoding = {"y": cat_axis, "x": y} if horizontal else {"x": cat_axis, "y": y}
    encoding["tooltip"] = _tooltip(f)
    if len(f.categories) >= 2:
        # Two breakdowns (carrier and region): bars side by side within each category, one
        # colour per member of the second; stacked bars would add up rates and averages.
        series = f.categories[1]
        keep = set(_top_series(f, series, measure))
        rows = [r for r in rows if str(r[series]) in keep]
        encoding["yOffset" if horizontal else "xOffset"] = {"field": series}
        encoding["color"] = {
            "field": series,
            "type": "nominal",
            "title": series.replace("_", " ").capitalize(),
        }
        config = ChartConfigOutput(
            chart_type="grouped_bar",
            title=_title(question, y_title),
            x_axis=category,
            y_axis=measure,
            series=series,
        )
        return _finish(config, rows, {"mark": "bar", "encoding": encoding}, category, series)
    config = ChartConfigOutput(
        chart_type="bar", title=_title(question, y_title), x_axis=category, y_axis=measure
    )
    return _finish(config, rows, {"mark": "bar", "encoding": encoding}, category)


def _tooltip(f: Frame) -> list[dict[str, str]]:
    return [
        {"field": c, "type": "quantitative" if c in f.measures else "nominal"}
        for c in f.result.columns
    ]


def _finish(
    config: ChartConfigOutput,
    rows: list[dict[str, Any]],
    body: dict[str, Any],
    label_column: str | None = None,
    series: str | None = None,
) -> ChartConfigOutput:
    measure = config.y_axis if config.chart_type != "scatter" else config.x_axis
    if measure:
        config.labels = [
            " / ".join(str(r[c]) for c in (label_column, series) if c) or "total" for r in rows
        ]
        config.values = [as_number(r.get(measure)) for r in rows]
    spec: dict[str, Any] = {
        "$schema": VEGA_LITE_SCHEMA,
        "title": config.title,
        "width": 640,
        "height": 320,
        "data": {"values": rows},
        **body,
    }
    if config.chart_type == "pie":
        spec["width"] = spec["height"] = 320
    config.vega_lite = spec
    config.chart_id = chart_id(spec)
    return config


def chart_id(spec: dict[str, Any]) -> str:
    """A stable id of a spec (its content hash), for caching rendered images."""
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def render_chart(
    spec: dict[str, Any], fmt: ChartFormat = "png", *, scale: float = 2.0
) -> bytes | str:
    """The chart as PNG bytes or SVG text. Blocking and CPU-bound (vl-convert, no browser)."""
    import vl_convert as vlc  # its native module loads on first use, not at import

    if fmt == "svg":
        return str(vlc.vegalite_to_svg(vl_spec=spec))
    if fmt == "png":
        return bytes(vlc.vegalite_to_png(vl_spec=spec, scale=scale))
    raise ValueError(f"format must be 'png' or 'svg' (got {fmt!r})")


async def arender_chart(spec: dict[str, Any], fmt: ChartFormat = "png") -> bytes | str:
    """`render_chart` off the event loop."""
    return await asyncio.to_thread(render_chart, spec, fmt)
