"""The bundled demo's hand-written semantic layer as a catalogue (the catalogue file's format).

`bundled_catalogue()` writes `tools.analytics.schema` (tables, columns, keys, comments) and
`tools.analytics.catalogue` (metrics with their SQL, synonyms and units; dimensions' words and
values) as one `Catalogue`, the same shape `introspect.derive` makes for a user's database. So
the demo can be read, exported (`main.py analytics-catalogue refresh` without
ANALYTICS_DATABASE_URL writes it) and answered by the generic engine (`tools.analytics.ask`);
the demo's own answers still come from `tools.analytics.semantic`, whose tuned vocabulary (root
causes, "best"/"worst" per metric) the generic engine does not replace.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp

from tools.analytics.catalogue import DIMENSIONS, FACTS, METRICS
from tools.analytics.catalogue_file import (
    Catalogue,
    ColumnEntry,
    ForeignKey,
    MetricEntry,
    Role,
    TableEntry,
)
from tools.analytics.schema import SCHEMA, TABLES

#: The demo's table aliases (as the semantic layer writes them) -> table names.
ALIASES = {fact.alias: name for name, fact in FACTS.items()} | {
    "d": "dealers",
    "v": "vehicles",
    "p": "plants",
}
#: Which column names a row of each table.
LABELS = {"plants": "name", "dealers": "name", "vehicles": "model"}


def _unaliased(sql: str) -> str:
    """A metric's SQL over its table's columns by bare name (`s.sale_price` -> `sale_price`)."""
    tree = sqlglot.parse_one(sql, read="postgres")
    for column in tree.find_all(exp.Column):
        if column.table in ALIASES:
            column.set("table", None)
    return tree.sql(dialect="postgres")


def _role(name: str, typ: str, keys: set[str]) -> Role:
    if name in keys:
        return "key"
    if typ.startswith("date"):
        return "time"
    if typ.startswith(("integer", "smallint", "bigint", "numeric")):
        return "measure"
    return "dimension"


@lru_cache(maxsize=1)
def bundled_catalogue() -> Catalogue:
    """The demo dataset described in the catalogue format (see the module docstring)."""
    dims = {}
    for d in DIMENSIONS:
        alias, _, column = d.column.partition(".")
        dims[(ALIASES[alias], column)] = d
    tables = []
    for t in TABLES:
        fk_cols = {c for c, _, _ in t.foreign_keys}
        columns = []
        for c in t.columns:
            typ = c.type.replace(" NOT NULL", "")
            dim = dims.get((t.name, c.name))
            role = (
                "dimension" if dim or c.name in fk_cols else _role(c.name, typ, set(t.primary_key))
            )
            columns.append(
                ColumnEntry(
                    name=c.name,
                    type=typ,
                    role=role,
                    label=dim.label if dim else c.name.replace("_", " ").capitalize(),
                    synonyms=list(dim.aliases) if dim else [c.name.replace("_", " ")],
                    description=c.description,
                    values=list(dim.values) if dim else [],
                )
            )
        fact = FACTS.get(t.name)
        tables.append(
            TableEntry(
                schema_=SCHEMA,
                name=t.name,
                label=t.name.capitalize(),
                synonyms=[t.name, t.name.rstrip("s")],
                description=t.description,
                primary_key=list(t.primary_key),
                foreign_keys=[
                    ForeignKey(columns=[c], references=f"{SCHEMA}.{ref}", referenced_columns=[rc])
                    for c, ref, rc in t.foreign_keys
                ],
                time_column=fact.date_column.split(".", 1)[1] if fact else None,
                label_column=LABELS.get(t.name),
                columns=columns,
            )
        )
    metrics = [
        MetricEntry(
            key=m.key,
            label=m.label,
            table=f"{SCHEMA}.{m.fact}",
            sql=_unaliased(m.sql()),
            synonyms=list(m.aliases),
            unit=m.unit,
            description=m.description,
            higher_is_better=m.higher_is_better,
        )
        for m in METRICS
    ]
    return Catalogue(source="bundled demo", schemas=[SCHEMA], tables=tables, metrics=metrics)
