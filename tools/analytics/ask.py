"""Questions over any catalogue, without a model: one SELECT from the catalogue's words.

`interpret(question, catalogue, today)` reads, in this order (a matched span is blanked so it is
not read twice): periods ("in 2024", "Q1 2024 vs Q1 2025", "June 2025"), "top/bottom N", filter
values (a low-cardinality value the catalogue lists: "in Germany"), the measure (a catalogue
metric by synonym, else a numeric column with its aggregate: total/sum, average/mean, default
sum), time grains ("monthly", "by year") and breakdowns (the words after by / per / each /
which / top N: a column, or an entity, which shows its label column). Every table it needs must
be reachable from the measure's table along foreign keys (many-to-one: tracks -> albums ->
artists), shortest path first; anything else raises `Unmappable` naming what can be asked.

`build_sql(query)` renders the SELECT (tables schema-qualified, joins along the FK path);
`generate(question, catalogue, today)` does both and returns a `SQLGeneration` whose
`explanation` and `catalogue_metric` say what was computed.
"""

from __future__ import annotations

import re
from datetime import date

import sqlglot
from sqlglot import exp

from tools.analytics.ask_sql import Edge, Measure, Query, Ref, build_sql, describe
from tools.analytics.catalogue import GRAINS
from tools.analytics.catalogue_file import Catalogue, ColumnEntry, MetricEntry, TableEntry
from tools.analytics.intent import write_request
from tools.analytics.outputs import MeasureMeta, SQLGeneration
from tools.analytics.periods import Period, find_periods
from tools.analytics.semantic import (
    STOPWORDS,
    YEAR_EARLIER,
    Unmappable,
    _ranking,
    _Text,
    _word,
    normalize,
)

AGGREGATES = {"total": "SUM", "sum of": "SUM", "sum": "SUM", "average": "AVG", "avg": "AVG",
              "mean": "AVG", "maximum": "MAX", "minimum": "MIN"}  # fmt: skip
LEADS = r"(?:\bby\b|\bper\b|\bfor each\b|\beach\b|\bacross\b|\bwhich\b|\bwhat\b)"
STOP_WORDS = ("by in for during since vs versus and with from top bottom where of have has had is "
              "are was were does do did the a").split()  # fmt: skip
#: Words a question carries that ask for nothing (not reported as unused).
FILLER = frozenset(
    "how many much there are is was were be been show me give list tell please get find number "
    "count have has had does do did total value values data report".split()
)
STOP = r"(?=\s(?:" + "|".join(STOP_WORDS) + r")\b|$)"


def _edges(cat: Catalogue) -> dict[str, list[Edge]]:
    """Each table's many-to-one edges (its foreign keys), by table key."""
    out: dict[str, list[Edge]] = {}
    for t in cat.tables:
        for fk in t.foreign_keys:
            target = cat.table(fk.references)
            if target is not None:
                out.setdefault(t.key, []).append(
                    (t.key, fk.columns, target.key, fk.referenced_columns)
                )
    return out


def reachable(cat: Catalogue, start: TableEntry) -> dict[str, list[Edge]]:
    """Every table reachable from `start` along FKs (many-to-one), with its shortest path."""
    graph = _edges(cat)
    paths: dict[str, list[Edge]] = {start.key: []}
    frontier = [start.key]
    while frontier:
        nxt = []
        for key in frontier:
            for edge in graph.get(key, []):
                if edge[2] not in paths:
                    paths[edge[2]] = [*paths[key], edge]
                    nxt.append(edge[2])
        frontier = nxt
    return paths


def _patterns(items: list[tuple[str, MetricEntry]]) -> list[tuple[re.Pattern[str], MetricEntry]]:
    """Each (phrase, metric) as a whole-word pattern, longest phrase first."""
    unique = {(s.lower(), m.key): (s.lower(), m) for s, m in items if s}
    ordered = sorted(unique.values(), key=lambda i: -len(i[0]))
    return [(re.compile(_word(s)), m) for s, m in ordered]


def _table_mentioned(cat: Catalogue, text: str) -> set[str]:
    return {t.key for t in cat.visible_tables() for s in t.synonyms if re.search(_word(s), text)}


def _last_table(cat: Catalogue, text: str) -> TableEntry | None:
    """The table named last in `text` ('which region has the most orders' -> orders): with no
    metric or numeric column named, the question counts it."""
    hits = [(m.start(), t) for t in cat.visible_tables() for s in t.synonyms
            for m in re.finditer(_word(s), text)]  # fmt: skip
    return max(hits, key=lambda h: h[0])[1] if hits else None


def _measure(cat: Catalogue, text: _Text) -> Measure:
    tables = {t.key: t for t in cat.visible_tables()}
    metrics = [(s, m) for m in cat.metrics if m.table in tables
               for s in (*m.synonyms, m.label, m.key.replace("_", " "))]  # fmt: skip
    for pattern, obj in _patterns(metrics):
        if text.take(pattern):
            table = tables[obj.table]
            return Measure(obj.label, obj.key, table, qualify(obj.sql, table.name), obj,
                           obj.unit, obj.higher_is_better)  # fmt: skip
    mentioned = _table_mentioned(cat, text.work)
    by_phrase: dict[str, list[tuple[TableEntry, ColumnEntry]]] = {}
    for t in tables.values():
        for c in t.visible_columns():
            if c.role == "measure":
                for phrase in {*c.synonyms, c.name}:
                    by_phrase.setdefault(phrase.lower(), []).append((t, c))
    for phrase in sorted(by_phrase, key=len, reverse=True):
        pattern = re.compile(_word(phrase))
        if not pattern.search(text.work):
            continue
        # a column name several tables share (unit_price): the table the question names wins
        table, column = sorted(by_phrase[phrase], key=lambda tc: tc[0].key not in mentioned)[0]
        text.take(pattern)
        agg = "SUM"
        for word, fn in AGGREGATES.items():
            if text.take(_word(word)):
                agg = fn
                break
        expr = f"{agg}({table.name}.{column.name})"
        if agg == "AVG":
            expr = f"ROUND(CAST({expr} AS NUMERIC), 2)"
        name = {"SUM": "Total", "AVG": "Average", "MAX": "Maximum", "MIN": "Minimum"}[agg]
        return Measure(f"{name} {column.label.lower() or column.name}",
                       f"{agg.lower()}_{column.name}", table, expr)  # fmt: skip
    last = _last_table(cat, text.work)
    count = next((m for m in cat.metrics if last and m.table == last.key
                  and m.sql.strip().upper() == "COUNT(*)"), None)  # fmt: skip
    if last is not None and count is not None:
        return Measure(count.label, count.key, last, "COUNT(*)", count)
    raise Unmappable(
        "I could not find a metric or a numeric column I know in this question. I can answer "
        "questions about:\n" + capabilities(cat)
    )


def qualify(expression: str, alias: str) -> str:
    """A metric's SQL with its bare column names qualified by its table's alias."""
    tree = sqlglot.parse_one(expression, read="postgres")
    for column in tree.find_all(exp.Column):
        if not column.table:
            column.set("table", exp.to_identifier(alias))
    return tree.sql(dialect="postgres")


def _refs(cat: Catalogue, fact: TableEntry) -> list[tuple[str, Ref]]:
    """(synonym, ref) for every breakdown the fact can reach: columns and entities' labels."""
    out: list[tuple[str, Ref]] = []
    edges = _edges(cat)
    for key, path in reachable(cat, fact).items():
        table = cat.table(key)
        if table is None:
            continue
        # a single-column FK: a breakdown by it shows the referenced entity's label
        by_column = {e[1][0]: e for e in edges.get(table.key, []) if len(e[1]) == 1}
        for c in table.visible_columns():
            if c.role in ("dimension", "time"):
                edge = by_column.get(c.name)
                dest = cat.table(edge[2]) if edge else None
                named = (
                    _label_ref(dest, [*path, edge], c.label or c.name) if edge and dest else None
                )
                ref = named or Ref(table, c.name, path, c.label or c.name)
                out += [(s, ref) for s in (*c.synonyms, c.name)]
        entity = _label_ref(table, path, table.label or table.name)
        if entity is not None and table.key != fact.key:
            out += [(s, entity) for s in table.synonyms]
    return out


def _label_ref(table: TableEntry, path: list[Edge], label: str) -> Ref | None:
    """What names a row of `table` in a breakdown: its label expression, else its label column."""
    if table.label_sql:
        return Ref(table, table.label_sql, path, label, expr=qualify(table.label_sql, table.name))
    if table.label_column:
        return Ref(table, table.label_column, path, label)
    return None


def _breakdowns(cat: Catalogue, fact: TableEntry, text: _Text, after: list[int]) -> list[Ref]:
    refs = _refs(cat, fact)
    starts = [(m.start(), m.end()) for m in re.finditer(LEADS, text.work)]
    found: list[tuple[int, Ref]] = []
    for lead, start in sorted(starts + [(a, a) for a in after]):
        span = re.match(r"\s*(?:the\s+)?(.*?)" + STOP, text.work[start:])
        if not span or not span[1].strip():
            continue
        best = _best(refs, span[1].strip())
        if best is not None:
            found.append((start, best))
            text.blank((lead, start + span.end()))
    out: list[Ref] = []
    for _, ref in sorted(found, key=lambda f: f[0]):
        if all((r.table.key, r.column) != (ref.table.key, ref.column) for r in out):
            out.append(ref)
    return out


def _best(refs: list[tuple[str, Ref]], phrase: str) -> Ref | None:
    """The ref whose synonym is the phrase, else the longest synonym in it; shortest path wins."""
    exact = [r for s, r in refs if s.lower() == phrase]
    if exact:
        return min(exact, key=lambda r: len(r.path))
    hits = [(len(s), r) for s, r in refs if re.search(_word(s.lower()), phrase)]
    if not hits:
        return None
    longest = max(n for n, _ in hits)
    return min((r for n, r in hits if n == longest), key=lambda r: len(r.path))


def _values(cat: Catalogue, text: _Text) -> list[str]:
    """Take every value the catalogue lists ('returned', 'Germany') out of the question first,
    so 'number of returned orders' still reads as 'number of orders'."""
    listed = {v.lower() for t in cat.visible_tables() for c in t.visible_columns()
              for v in c.values if len(v) >= 3}  # fmt: skip
    return [v for v in sorted(listed, key=len, reverse=True)
            if v in text.work and text.take(_word(v))]  # fmt: skip


def _filters(cat: Catalogue, fact: TableEntry, found: list[str]) -> list[tuple[Ref, list[str]]]:
    """Each value taken from the question, on the nearest table the fact reaches that lists it."""
    by_value: dict[str, list[tuple[Ref, str]]] = {}
    for key, path in reachable(cat, fact).items():
        table = cat.table(key)
        if table is None or table.hidden:
            continue
        for c in table.visible_columns():
            ref = Ref(table, c.name, path, c.label or c.name)
            for v in c.values:
                by_value.setdefault(v.lower(), []).append((ref, v))
    chosen: dict[tuple[str, str], tuple[Ref, list[str]]] = {}
    for lowered in found:
        if lowered not in by_value:
            raise Unmappable(
                f"'{lowered}' is a value of a table that {fact.label.lower() or fact.name} "
                "does not join to; ask about it from that table."
            )
        ref, value = min(by_value[lowered], key=lambda t: len(t[0].path))
        chosen.setdefault((ref.table.key, ref.column), (ref, []))[1].append(value)
    return list(chosen.values())


def _time(cat: Catalogue, fact: TableEntry) -> Ref | None:
    for key, path in sorted(reachable(cat, fact).items(), key=lambda kv: len(kv[1])):
        table = cat.table(key)
        if table is not None and table.time_column and not table.hidden:
            return Ref(table, table.time_column, path, table.time_column)
    return None


def interpret(question: str, cat: Catalogue, today: date) -> Query:
    """Map a question to a measure, breakdowns, grain, periods, filters and ordering."""
    cat = cat.available()  # hidden tables and columns, and what refers to them, do not exist
    text = _Text(normalize(question))
    year_earlier = bool(text.take(YEAR_EARLIER.pattern))
    periods: list[Period] = []
    for match in find_periods(text.work, today):
        periods.append(match.period)
        text.blank(match.span)
    values = _values(cat, text)
    text = _Text(re.sub(r"\s+", " ", text.work).strip())
    top = [m.end() for m in re.finditer(r"\b(?:top|bottom|best|worst)\s+\d{1,3}\b", text.work)]
    limit, order, _relative = _ranking(text)
    measure = _measure(cat, text)
    fact = measure.table
    filters = _filters(cat, fact, values)
    grain = None
    for name, aliases in GRAINS.items():
        for alias in sorted(aliases, key=len, reverse=True):
            if text.take(r"(?:\bby\s+)?" + _word(alias)):
                grain = grain or name
    breakdowns = _breakdowns(cat, fact, text, top)
    if year_earlier and len(periods) == 1:
        periods = [periods[0].year_earlier(), periods[0]]
    time = _time(cat, fact) if (periods or grain) else None
    if (periods or grain) and time is None:
        raise Unmappable(
            f"{measure.label} has no date to filter or group by: {fact.key} and the tables it "
            "joins have no date or timestamp column (set time_column in the catalogue file)."
        )
    leftover = re.search(r"\b(?:by|per)\s+([a-z][a-z ]*)", text.work)
    if leftover and leftover[1].split()[0] not in STOP_WORDS:
        names = sorted({r.label.lower() for _, r in _refs(cat, fact)})
        raise Unmappable(
            f"I cannot break {measure.label.lower()} down by '{leftover[1].strip()}'. It can be "
            f"broken down by: {', '.join(names)}; and by day, week, month, quarter or year."
        )
    unused = [w for w in re.findall(r"[^\s]+", text.work) if w not in FILLER and w not in STOPWORDS]
    return Query(question, measure, breakdowns, grain, time, periods, filters, order, limit, unused)


def capabilities(cat: Catalogue) -> str:
    """What can be asked, as text for an honest 'cannot map' answer."""
    cat = cat.available()
    lines = ["Metrics:"]
    lines += [f"- {m.label} ({m.table})" for m in cat.metrics if (t := cat.table(m.table))
              and not t.hidden][:40]  # fmt: skip
    numeric = [f"{t.name}.{c.name}" for t in cat.visible_tables() for c in t.visible_columns()
               if c.role == "measure"]  # fmt: skip
    if numeric:
        lines.append("Totals and averages of: " + ", ".join(numeric[:40]))
    lines.append(
        "By any column or related entity ('by country', 'top 5 artists by number of tracks'), "
        "by day/week/month/quarter/year, in a period ('in 2024', 'Q1 2024 vs Q1 2025')."
    )
    return "\n".join(lines)


def generate(question: str, cat: Catalogue, today: date) -> SQLGeneration:
    """SQL for the question, or an honest message (sql None) when it cannot be mapped or asks
    to change data (the agent is read-only)."""
    if refusal := write_request(question):
        return SQLGeneration(question=question, sql=None, method="semantic-layer", message=refusal)
    try:
        query = interpret(question, cat, today)
    except Unmappable as exc:
        return SQLGeneration(question=question, sql=None, method="semantic-layer", message=str(exc))
    m = query.measure
    latest = max(query.periods, key=lambda p: p.start) if query.periods else None
    return SQLGeneration(
        question=question,
        sql=build_sql(query),
        method="semantic-layer",
        explanation=describe(query),
        catalogue_metric=m.metric.key if m.metric else m.expr,
        grain=query.grain,
        period=latest.model() if latest else None,
        comparison=(
            min(query.periods, key=lambda p: p.start).model() if len(query.periods) > 1 else None
        ),  # fmt: skip
        measures={
            m.key: MeasureMeta(
                label=m.label,
                unit=m.unit,
                additive=not m.expr.startswith("ROUND(CAST(AVG"),
                higher_is_better=m.higher_is_better,
            )
        },  # fmt: skip
    )


__all__ = ["Query", "Unmappable", "build_sql", "generate", "interpret"]
