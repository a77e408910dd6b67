"""The model-free question's structure and its SQL: `Query` (measure, breakdowns, time, periods,
filters, ordering over a catalogue) and `build_sql` / `describe`, used by `tools.analytics.ask`.

Tables are aliased by their own names, joins follow the query's FK paths (each edge once), and
every identifier that is not plain lower-case is quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tools.analytics.catalogue import grain_sql
from tools.analytics.catalogue_file import MetricEntry, TableEntry
from tools.analytics.outputs import Unit
from tools.analytics.periods import Period

Edge = tuple[str, list[str], str, list[str]]  # from table, columns, to table, columns


@dataclass
class Measure:
    label: str
    key: str
    table: TableEntry
    expr: str  # over the table's alias
    metric: MetricEntry | None = None
    unit: Unit = "count"
    higher_is_better: bool = True


@dataclass
class Ref:
    """A column reached from the fact table along `path` (FK edges)."""

    table: TableEntry
    column: str
    path: list[Edge]
    label: str
    #: An expression over the table's alias instead of the column (a label such as
    #: employee.first_name || ' ' || employee.last_name).
    expr: str | None = None


@dataclass
class Query:
    question: str
    measure: Measure
    breakdowns: list[Ref] = field(default_factory=list)
    grain: str | None = None
    time: Ref | None = None
    periods: list[Period] = field(default_factory=list)
    filters: list[tuple[Ref, list[str]]] = field(default_factory=list)
    order: Literal["asc", "desc"] | None = None
    limit: int | None = None
    #: Words of the question nothing matched (shown, so a name the catalogue lacks is visible).
    unused: list[str] = field(default_factory=list)


def _aliases(query: Query) -> tuple[str, list[str]]:
    """The FROM clause with the joins every ref needs, aliasing each table by its name."""
    fact = query.measure.table
    sql = f"{ident(fact.schema_)}.{ident(fact.name)} AS {ident(fact.name)}"
    joined: list[tuple[str, ...]] = []
    joins: list[str] = []
    refs = [*query.breakdowns, *(r for r, _ in query.filters)]
    if query.time is not None:
        refs.append(query.time)
    for ref in refs:
        for src, cols, dst, dcols in ref.path:
            key = (src, *cols, dst)
            if key in joined:
                continue
            joined.append(key)
            s_name, d_name = src.split(".", 1)[1], dst.split(".", 1)[1]
            d_schema = dst.split(".", 1)[0]
            on = " AND ".join(
                f"{ident(d_name)}.{ident(dc)} = {ident(s_name)}.{ident(c)}"
                for c, dc in zip(cols, dcols, strict=True)
            )
            joins.append(f"JOIN {ident(d_schema)}.{ident(d_name)} AS {ident(d_name)} ON {on}")
    return sql, joins


def ident(name: str) -> str:
    """`name` as an SQL identifier: bare when plain lower-case, else double-quoted."""
    return name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else '"' + name.replace('"', '""') + '"'


def _col(ref: Ref) -> str:
    return ref.expr or f"{ident(ref.table.name)}.{ident(ref.column)}"


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _between(column: str, p: Period) -> str:
    return f"{column} >= DATE '{p.start.isoformat()}' AND {column} < DATE '{p.end.isoformat()}'"


def build_sql(query: Query) -> str:
    """One SELECT for the query (the guard validates it before it runs)."""
    select: list[str] = []
    time = _col(query.time) if query.time else ""
    compare = len(query.periods) > 1
    if compare:
        cases = " ".join(
            f"WHEN {_between(time, p)} THEN {_literal(p.label)}" for p in query.periods
        )
        select.append(f"CASE {cases} END AS period")
    if query.grain:
        select.append(f"{grain_sql(query.grain, time)} AS {query.grain}")
    names: list[str] = []
    for ref in query.breakdowns:
        name = re.sub(r"\W+", "_", ref.label.lower()).strip("_") or ref.column
        name = name if name not in names else f"{ref.table.name}_{ref.column}"
        names.append(name)
        select.append(f"{_col(ref)} AS {ident(name)}")
    groups = len(select)
    select.append(f"{query.measure.expr} AS {ident(query.measure.key)}")
    source, joins = _aliases(query)
    where = []
    if query.periods:
        where.append(" OR ".join(f"({_between(time, p)})" for p in query.periods))
    for ref, values in query.filters:
        where.append(f"{_col(ref)} IN ({', '.join(_literal(v) for v in values)})")
    sql = f"SELECT {', '.join(select)} FROM {source}" + "".join(f" {j}" for j in joins)
    if where:
        sql += " WHERE " + " AND ".join(f"({w})" for w in where)
    if groups:
        positions = ", ".join(str(n) for n in range(1, groups + 1))
        sql += f" GROUP BY {positions} ORDER BY "
        if query.order is not None:
            sql += f"{groups + 1} {query.order.upper()} NULLS LAST, {positions}"
        elif compare:
            rest = ", ".join(str(n) for n in range(2, groups + 1))
            sql += f"MIN({time}){', ' + rest if rest else ''}"
        elif query.grain:
            sql += positions
        else:
            sql += f"{groups + 1} DESC NULLS LAST, {positions}"
        if query.limit is not None:
            sql += f" LIMIT {int(query.limit)}"
    return sql


def describe(query: Query) -> str:
    """One line: what the SQL computes, from which catalogue entries."""
    m = query.measure
    what = f"catalogue metric {m.metric.key} ({m.metric.sql})" if m.metric else m.expr
    parts = [f"{m.label} = {what}"]
    if query.grain:
        parts.append(f"by {query.grain}")
    if query.breakdowns:
        parts.append("by " + ", ".join(r.expr or f"{r.table.name}.{r.column}"
                                       for r in query.breakdowns))  # fmt: skip
    for ref, values in query.filters:
        parts.append(f"where {ref.table.name}.{ref.column} is {' or '.join(values)}")
    if query.periods:
        parts.append(f"in {' vs '.join(p.label for p in query.periods)} (by {_col(query.time)})"
                     if query.time else "")  # fmt: skip
    joined = sorted({e[2] for r in query.breakdowns for e in r.path})
    tail = f", from {m.table.key}" + (f" joined to {', '.join(joined)}" if joined else "")
    note = f" Words not used: {', '.join(query.unused)}." if query.unused else ""
    return " ".join(p for p in parts if p) + tail + "." + note
