"""The semantic layer: a business question to SQL, deterministically, without a model.

`interpret(question, today)` reads, in this order, so earlier matches cannot be misread later:
periods (`tools.analytics.periods`), "top/bottom N", filter values (a region, a carrier, a
plant, ...; "the West region" is a filter, not a breakdown), metrics (longest alias first; "X
versus Y" gives both and how they relate, `tools.analytics.versus`),
time grains ("monthly", "by quarter", "trend") and dimensions ("by region", "which carrier").
Anything it cannot map raises `Unmappable` with an honest message that lists what it can answer:
no known metric, metrics from different tables, a breakdown it does not know ("by colour"), a
dimension or filter the metric's table lacks, or a period outside the data.

`build_sql(query)` renders one SELECT over schema `analytics`; `generate(question, today)` does
both and returns a `SQLGeneration` (sql, or sql = None and the message). Every function reads
the words, metrics and breakdowns of a `SemanticLayer` (`tools.analytics.catalogue`): the demo's
catalogue file, or that file with the operator's edits laid over it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Literal

from tools.analytics.catalogue import (
    DEMO_LAYER,
    GRAINS,
    Dimension,
    Metric,
    SemanticLayer,
    capabilities,
    grain_sql,
)
from tools.analytics.intent import write_request
from tools.analytics.outputs import SQLGeneration
from tools.analytics.periods import Period, find_periods
from tools.analytics.reading import Text as _Text
from tools.analytics.reading import by_length as _by_length
from tools.analytics.reading import read_filters as _filters
from tools.analytics.reading import word as _word
from tools.analytics.reference import DATA_END, DATA_START
from tools.analytics.versus import ASKS_VERSUS, elliptic_metric, relation

WHY = re.compile(
    r"\b(why|what caused|what causes|what drove|what drives|root cause|reasons?|explain|"
    r"drivers?|what'?s behind|what is behind|due to)\b"
)
COMPARE = re.compile(r"\b(vs\.?|versus|compared?|comparison|against)\b")
YEAR_EARLIER = re.compile(
    r"\b(?:(?:compared (?:to|with)|vs\.?|versus|against|than)\s+(?:the\s+)?(?:same period\s+)?"
    r"(?:last|previous|prior|a)\s+year(?:\s+(?:before|earlier|ago))?|year over year|yoy)\b"
)
STOPWORDS = frozenset(
    "the a an in on at for of and or to from with each every all total what which how is was "
    "were did does do during since between vs versus compared than our we us by per across "
    "this that these those it its their over last".split()
)
DESC_WORDS = ("top", "highest", "most", "largest", "biggest", "best", "max", "maximum", "rank",
              "ranking", "ranked", "leading", "leaders")  # fmt: skip
ASC_WORDS = ("bottom", "lowest", "least", "fewest", "smallest", "worst", "min", "minimum",
             "laggards")  # fmt: skip


class Unmappable(ValueError):
    """The question cannot be mapped to the semantic model; the message says what can be."""


@dataclass
class SemanticQuery:
    question: str
    metrics: list[Metric]
    dimensions: list[Dimension] = field(default_factory=list)
    grain: str | None = None
    periods: list[Period] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)
    order: Literal["asc", "desc"] | None = None
    limit: int | None = None
    #: The layer the query was read with (the demo's file, or with the operator's edits).
    layer: SemanticLayer = DEMO_LAYER

    @property
    def fact(self) -> str:
        return self.metrics[0].fact

    @property
    def compare(self) -> bool:
        return len(self.periods) > 1


def asks_why(question: str) -> bool:
    """True when the question asks for a cause ("why", "what drove", "root cause", ...)."""
    return bool(WHY.search(question.lower()))


def normalize(text: str) -> str:
    """Lower case, hyphens between letters as spaces, punctuation (not & . -) as spaces."""
    text = text.lower().replace("f & i", "f&i").replace("f and i", "f&i")
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)
    text = re.sub(r"[?,!;:()\"'`]", " ", text)
    text = re.sub(r"\.(?=\s|$)", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def interpret(question: str, today: date, layer: SemanticLayer = DEMO_LAYER) -> SemanticQuery:
    """Map a question to metrics, dimensions, grain, periods, filters and ordering."""
    text = _Text(normalize(question))
    periods: list[Period] = []
    year_earlier = bool(text.take(YEAR_EARLIER.pattern))
    for match in find_periods(text.work, today):
        periods.append(match.period)
        text.blank(match.span)
    limit, order, relative = _ranking(text)
    filters = _filters(text, ranked=order is not None, layer=layer)
    metrics = _metrics(text, layer)
    if not metrics:
        raise Unmappable(
            "I could not find a metric I know in this question. I can answer questions about:\n"
            + capabilities(layer)
        )
    versus = bool(ASKS_VERSUS.search(text.work)) and len(periods) < 2 and not year_earlier
    if (
        versus
        and len(metrics) == 1
        and (elliptic := elliptic_metric(text.work, metrics[0], layer.metrics))
    ):
        metrics.append(elliptic[0])
        text.blank(elliptic[1])
    facts = {m.fact for m in metrics}
    if (
        versus
        and len(metrics) == 2
        and len(facts) == 1
        and (ratio := relation(metrics[0], metrics[1], layer.metrics))
    ):
        # "X versus Y" asks how they relate: that is the headline (analysis, ranking, chart)
        metrics.insert(0, ratio)
    if len(facts) > 1:
        names = ", ".join(m.label for m in metrics)
        raise Unmappable(
            f"These metrics come from different tables ({names}); ask about one area at a "
            "time.\n" + capabilities(layer)
        )
    grain = _grain(text)
    dimensions = _dimensions(text, layer)
    _refuse_unknown_breakdown(text, layer)
    if year_earlier and len(periods) == 1:
        periods = [periods[0].year_earlier(), periods[0]]
    elif year_earlier and not periods and grain is None:
        grain = "year"
    if relative and order and not metrics[0].higher_is_better:
        order = "asc" if order == "desc" else "desc"
    query = SemanticQuery(
        question, metrics, dimensions, grain, periods, filters, order, limit, layer
    )
    _check_applicable(query)
    return query


def _ranking(text: _Text) -> tuple[int | None, Literal["asc", "desc"] | None, bool]:
    """(limit, order, relative): relative when 'best'/'worst' decided the order (it flips for
    metrics where lower is better)."""
    for m in text.take(r"\b(top|bottom|best|worst|highest|lowest)\s+(\d{1,3})\b"):
        limit = max(1, min(int(m[2]), 1000))
        order: Literal["asc", "desc"] = "desc" if m[1] in ("top", "best", "highest") else "asc"
        return limit, order, m[1] in ("best", "worst")
    for word in DESC_WORDS + ASC_WORDS:
        if re.search(_word(word), text.work):
            order = "desc" if word in DESC_WORDS else "asc"
            return (10 if word == "top" else None), order, word in ("best", "worst")
    return None, None, False


@lru_cache(maxsize=8)
def _alias_patterns(kind: str, layer: SemanticLayer) -> list[tuple[str, re.Pattern[str], str]]:
    """(pattern, key) for every metric or dimension alias of `layer`, longest first."""
    items = (
        [(a, m.key) for m in layer.metrics for a in m.aliases]
        if kind == "metric"
        else [(a, d.key) for d in layer.dimensions for a in d.aliases]
    )
    return [(alias, re.compile(_word(alias)), key) for alias, key in _by_length(items)]


def _metrics(text: _Text, layer: SemanticLayer) -> list[Metric]:
    found: list[tuple[int, Metric]] = []
    for alias, pattern, key in _alias_patterns("metric", layer):
        if alias not in text.work:  # a substring test first: most aliases are absent
            continue
        for m in text.take(pattern):
            metric = layer.metric(key)
            if all(metric is not f for _, f in found):
                found.append((m.start(), metric))
    return [metric for _, metric in sorted(found, key=lambda item: item[0])]


def find_metrics(text: str, layer: SemanticLayer = DEMO_LAYER) -> list[Metric]:
    """The metrics named in `text`, in order of appearance."""
    return _metrics(_Text(normalize(text)), layer)


def _grain(text: _Text) -> str | None:
    grain: str | None = None
    if text.take(r"\b(trend|trends|trending|over time|time series)\b"):
        grain = "month"
    for name, aliases in GRAINS.items():
        for alias in sorted(aliases, key=len, reverse=True):
            if text.take(_word(alias)):
                grain = grain if grain and grain != "month" else name
    return grain


def _dimensions(text: _Text, layer: SemanticLayer) -> list[Dimension]:
    found: list[tuple[int, Dimension]] = []
    for alias, pattern, key in _alias_patterns("dimension", layer):
        if alias not in text.work:
            continue
        for m in text.take(pattern):
            dim = layer.dimension(key)
            if all(dim is not d for _, d in found):
                found.append((m.start(), dim))
    return [dim for _, dim in sorted(found, key=lambda item: item[0])]


def _refuse_unknown_breakdown(text: _Text, layer: SemanticLayer) -> None:
    for m in re.finditer(
        r"\b(?:by|per|for each|across|split by|broken down by)\s+([a-z]+)", text.work
    ):
        word = m[1]
        if word not in STOPWORDS and not word.isdigit():
            raise Unmappable(
                f"I cannot break results down by '{word}'. I can break them down by "
                + ", ".join(d.label.lower() for d in layer.dimensions)
                + " and by day, week, month, quarter or year.\n"
                + capabilities(layer)
            )


def _check_applicable(query: SemanticQuery) -> None:
    fact = query.fact
    usable = ", ".join(d.label.lower() for d in query.layer.dimensions_for(fact))
    names = ", ".join(m.label for m in query.metrics)
    for dim in query.dimensions:
        if not dim.applies_to(fact):
            raise Unmappable(
                f"{names} cannot be broken down by {dim.label.lower()}; it can be broken "
                f"down by {usable} and time."
            )
    for key in query.filters:
        dim = query.layer.dimension(key)
        if not dim.applies_to(fact):
            raise Unmappable(
                f"{names} cannot be filtered by {dim.label.lower()} "
                f"({', '.join(query.filters[key])}); it can be filtered by {usable}."
            )
    for period in query.periods:
        if period.end <= DATA_START or period.start > DATA_END or period.end <= period.start:
            raise Unmappable(
                f"There is no data for {period.label}: the dataset covers "
                f"{DATA_START.isoformat()} to {DATA_END.isoformat()}."
            )


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _date_filter(column: str, period: Period) -> str:
    return (
        f"{column} >= DATE '{period.start.isoformat()}' AND "
        f"{column} < DATE '{period.end.isoformat()}'"
    )


def build_sql(query: SemanticQuery) -> str:
    """One SELECT over schema `analytics` for the query (validated by the guard before use)."""
    fact = query.layer.facts[query.fact]
    date_col = fact.date_column
    select: list[str] = []
    if query.compare:
        cases = " ".join(
            f"WHEN {_date_filter(date_col, p)} THEN {_literal(p.label)}" for p in query.periods
        )
        select.append(f"CASE {cases} END AS period")
    if query.grain:
        select.append(f"{grain_sql(query.grain, date_col)} AS {query.grain}")
    for dim in query.dimensions:
        select.append(f"{dim.column} AS {dim.key}")
    groups = len(select)
    select += [f"{m.sql()} AS {m.key}" for m in query.metrics]
    joins: list[str] = []
    filter_dims = [query.layer.dimension(k) for k in query.filters]
    for dim in [*query.dimensions, *filter_dims]:
        for join in dim.joins[query.fact]:
            if join not in joins:
                joins.append(join)
    joins.sort(key=list(fact.joins).index)
    where = []
    if query.periods:
        where.append(" OR ".join(f"({_date_filter(date_col, p)})" for p in query.periods))
    for dim in filter_dims:
        values = ", ".join(_literal(v) for v in query.filters[dim.key])
        where.append(f"{dim.column} IN ({values})")
    sql = f"SELECT {', '.join(select)} FROM {fact.from_clause}"
    for join in joins:
        sql += f" {fact.joins[join]}"
    if where:
        sql += " WHERE " + " AND ".join(f"({w})" for w in where)
    if groups:
        sql += " GROUP BY " + ", ".join(str(n) for n in range(1, groups + 1))
        sql += " ORDER BY " + _order_by(query, groups, date_col)
    if query.limit is not None and groups:
        sql += f" LIMIT {int(query.limit)}"
    return sql


def _order_by(query: SemanticQuery, groups: int, date_col: str) -> str:
    first = query.metrics[0].key
    positions = ", ".join(str(n) for n in range(1, groups + 1))
    if query.order is not None:
        return f"{first} {query.order.upper()} NULLS LAST, {positions}"
    if query.compare:
        rest = ", ".join(str(n) for n in range(2, groups + 1))
        return f"MIN({date_col}){', ' + rest if rest else ''}"
    if query.grain:
        return positions
    return f"{first} DESC NULLS LAST, {positions}"


def sentence_case(label: str) -> str:
    """A label inside a sentence: its first letter lowered unless it starts an acronym."""
    return label if label[1:2].isupper() else label[:1].lower() + label[1:]


def describe(query: SemanticQuery) -> str:
    """One line saying what the SQL computes."""
    fact = query.layer.facts[query.fact]
    labels = [m.label for m in query.metrics]
    # later labels in running text: "Units built, units planned" (acronyms keep their case)
    parts = [", ".join([labels[0], *(sentence_case(label) for label in labels[1:])])]
    if query.grain:
        parts.append(f"by {query.grain}")
    if query.dimensions:
        parts.append("by " + ", ".join(d.label.lower() for d in query.dimensions))
    if query.filters:
        parts.append("for " + "; ".join(f"{k} {', '.join(v)}" for k, v in query.filters.items()))
    when = (
        " vs ".join(p.label for p in query.periods)
        if query.periods
        else (f"all data ({DATA_START.isoformat()} to {DATA_END.isoformat()})")
    )
    parts.append(f"in {when}" if query.periods else f"over {when}")
    return " ".join(parts) + f" (dated by {fact.date_label}, from {fact.name})."


def generate(question: str, today: date, layer: SemanticLayer = DEMO_LAYER) -> SQLGeneration:
    """SQL for the question, or an honest message (sql = None) when it cannot be mapped or
    asks to change data (the agent is read-only)."""
    if refusal := write_request(question):
        return SQLGeneration(question=question, sql=None, method="semantic-layer", message=refusal)
    try:
        query = interpret(question, today, layer)
    except Unmappable as exc:
        return SQLGeneration(question=question, sql=None, method="semantic-layer", message=str(exc))
    latest = max(query.periods, key=lambda p: p.start) if query.periods else None
    return SQLGeneration(
        question=question,
        sql=build_sql(query),
        method="semantic-layer",
        explanation=describe(query),
        metrics=[m.key for m in query.metrics],
        dimensions=[d.key for d in query.dimensions],
        grain=query.grain,
        period=latest.model() if latest else None,
        comparison=(min(query.periods, key=lambda p: p.start).model() if query.compare else None),
        filters=query.filters,
        measures={m.key: m.meta() for m in query.metrics},
    )
