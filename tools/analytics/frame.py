"""A query result seen as a small table with roles: a time column, categories, measures.

KPI analysis and chart configuration both need to know which column is time (a grain column such
as `month`, a `period` label of a comparison, or any date column), which are categories (text)
and which are measures (numbers, with the semantic layer's `MeasureMeta` when it made the SQL).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tools.analytics.outputs import MeasureMeta, QueryResult, Unit

TIME_NAMES = ("day", "week", "month", "quarter", "year", "period", "date")
_RATE_WORDS = re.compile(
    r"(rate|pct|percent|share|ratio|avg|average|mean|per_|attainment|"
    r"penetration|price|cost_per|days)"
)
_PCT_WORDS = re.compile(r"(pct|percent|rate|share|attainment|penetration)")
_MONEY_WORDS = re.compile(r"(revenue|profit|price|cost|fni|amount|msrp|usd)")


class DataError(ValueError):
    """The `data` given to a tool is not a result id nor a usable table; says what is."""


@dataclass
class Frame:
    result: QueryResult
    time: str | None
    categories: list[str]
    measures: list[str]

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [dict(zip(self.result.columns, row, strict=False)) for row in self.result.rows]

    def meta(self, measure: str) -> MeasureMeta:
        """The measure's metadata, from the semantic layer or guessed from its name."""
        if measure in self.result.measures:
            return self.result.measures[measure]
        name = measure.lower()
        unit: Unit = "count"
        if _PCT_WORDS.search(name):
            unit = "percent"
        elif _MONEY_WORDS.search(name):
            unit = "currency"
        elif "minute" in name or "downtime" in name:
            unit = "minutes"
        elif "days" in name:
            unit = "days"
        lower_better = any(w in name for w in ("damage", "defect", "downtime", "cost", "days"))
        return MeasureMeta(
            label=measure.replace("_", " ").capitalize(),
            unit=unit,
            additive=not _RATE_WORDS.search(name),
            higher_is_better=not lower_better,
        )

    def label(self, row: dict[str, Any]) -> str:
        """A readable label of a row: its time and category values."""
        parts = [str(row[c]) for c in ([self.time] if self.time else []) + self.categories]
        return " / ".join(parts) if parts else "total"


def frame(result: QueryResult) -> Frame:
    """Assign roles to the result's columns."""
    time: str | None = None
    categories: list[str] = []
    measures: list[str] = []
    for name, kind in zip(result.columns, result.column_kinds, strict=True):
        if time is None and (name.lower() in TIME_NAMES or kind == "temporal"):
            time = name
        elif kind == "number" and name not in result.measures and name.endswith("_id"):
            categories.append(name)
        elif kind == "number":
            measures.append(name)
        else:
            categories.append(name)
    return Frame(result, time, categories, measures)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fmt(value: float | None, unit: Unit) -> str:
    """A value for people: $1,234, 12.3%, 4.9 days, 1,200 min, 12,345."""
    if value is None:
        return "n/a"
    if unit == "currency":
        return f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"
    if unit == "percent":
        return f"{value:.2f}%"
    if unit == "days":
        return f"{value:.2f} days"
    if unit == "minutes":
        return f"{value:,.0f} min"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def fmt_change(value: float | None, unit: Unit) -> str:
    """A signed change: +0.42 pp for percentages, +$1,200, -35 min."""
    if value is None:
        return "n/a"
    sign = "+" if value >= 0 else "-"
    if unit == "percent":
        return f"{sign}{abs(value):.2f} pp"
    return sign + fmt(abs(value), unit)


def inline_result(data: str) -> QueryResult:
    """A QueryResult from inline JSON: {"columns": [...], "rows": [[...]]} or [{...}, ...]."""
    try:
        parsed = json.loads(data)
    except json.JSONDecodeError as exc:
        raise DataError(
            "data must be a result_id returned by sql_execution_tool (e.g. 'r-1a2b3c4d'), "
            '\'latest\', or JSON: {"columns": [...], "rows": [[...]]} or a list of objects '
            f"(could not parse it: {exc.msg})"
        ) from None
    if isinstance(parsed, dict) and "columns" in parsed and "rows" in parsed:
        columns = [str(c) for c in parsed["columns"]]
        rows = [list(r) for r in parsed["rows"]]
    elif isinstance(parsed, list) and parsed and all(isinstance(r, dict) for r in parsed):
        columns = list(parsed[0])
        rows = [[r.get(c) for c in columns] for r in parsed]
    else:
        raise DataError(
            'data JSON must be {"columns": [...], "rows": [[...]]} or a non-empty list of objects'
        )
    if len(rows) > 50_000:
        raise DataError(f"data has {len(rows)} rows; at most 50000 inline rows")
    kinds: list[Any] = []
    for i, _ in enumerate(columns):
        values = [r[i] for r in rows if i < len(r) and r[i] is not None]
        if values and all(as_number(v) is not None and not isinstance(v, str) for v in values):
            kinds.append("number")
        elif values and all(
            isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in values
        ):
            kinds.append("temporal")
        else:
            kinds.append("text")
    return QueryResult(sql="", columns=columns, column_kinds=kinds, rows=rows, row_count=len(rows))
