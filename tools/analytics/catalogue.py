"""The semantic model: facts, metrics and dimensions, with the words that name them.

Its source is the bundled demo's catalogue file, `demo_catalogue.yaml` beside this module, in
the catalogue format every database gets (`tools.analytics.catalogue_file`); `layer_from`
reads a catalogue in that format into the layer the semantic engine answers from, so the
format is the one definition and an operator's edits can be laid over it like over any
database's (`apply_edits`).

A metric is numerator / denominator over one fact table (the denominator is None for additive
metrics), so the same definition renders SQL (`Metric.sql`) and decomposes for root-cause
analysis (contributions of numerator and denominator by member). A fact is a table that has
metrics; a dimension is a column with a `dimension` key, offered in the file's order, and knows
how to reach its column from each fact along the foreign keys (`Dimension.joins`, shortest path).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import sqlglot
import yaml
from sqlglot import exp

from tools.analytics.catalogue_file import (
    Catalogue,
    CatalogueError,
    TableEntry,
    apply_edits,
    ratio_sql,
    read_edits,
)
from tools.analytics.outputs import MeasureMeta, Unit
from tools.analytics.schema import SCHEMA

#: The bundled demo's catalogue file: the source of its semantic layer.
DEMO_CATALOGUE_FILE = Path(__file__).with_name("demo_catalogue.yaml")


@dataclass(frozen=True)
class Fact:
    name: str
    alias: str
    date_column: str
    date_label: str
    joins: dict[str, str]

    @property
    def from_clause(self) -> str:
        return f"{SCHEMA}.{self.name} AS {self.alias}"


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    fact: str
    numerator: str
    denominator: str | None
    unit: Unit
    aliases: tuple[str, ...]
    higher_is_better: bool = True
    scale: float = 1.0
    decimals: int = 2
    description: str = ""

    @property
    def additive(self) -> bool:
        return self.denominator is None

    def sql(self) -> str:
        """The aggregate expression (over the fact's alias) that computes the metric."""
        return ratio_sql(self.numerator, self.denominator, self.unit, self.scale, self.decimals)

    def meta(self) -> MeasureMeta:
        return MeasureMeta(
            label=self.label,
            unit=self.unit,
            additive=self.additive,
            higher_is_better=self.higher_is_better,
        )


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    column: str
    joins: dict[str, tuple[str, ...]]
    aliases: tuple[str, ...]
    values: tuple[str, ...] = ()
    value_aliases: dict[str, str] = field(default_factory=dict)

    def applies_to(self, fact: str) -> bool:
        return fact in self.joins


@dataclass(frozen=True, eq=False)
class SemanticLayer:
    """What the semantic engine answers from: facts by table name, metrics, dimensions.

    Compared and hashed by identity: one layer per process (the shipped file, or with the
    operator's edits), and the engine caches its patterns per layer."""

    facts: dict[str, Fact]
    metrics: tuple[Metric, ...]
    dimensions: tuple[Dimension, ...]

    def metric(self, key: str) -> Metric:
        """The metric with this key; KeyError names the known keys."""
        for m in self.metrics:
            if m.key == key:
                return m
        known = ", ".join(m.key for m in self.metrics)
        raise KeyError(f"unknown metric {key!r}; known: {known}")

    def dimension(self, key: str) -> Dimension:
        """The dimension with this key."""
        for d in self.dimensions:
            if d.key == key:
                return d
        known = ", ".join(d.key for d in self.dimensions)
        raise KeyError(f"unknown dimension {key!r}; known: {known}")

    def dimensions_for(self, fact: str) -> list[Dimension]:
        """The dimensions that apply to `fact`."""
        return [d for d in self.dimensions if d.applies_to(fact)]


@lru_cache(maxsize=1)
def demo_catalogue() -> Catalogue:
    """The bundled demo's catalogue file, parsed and validated."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw = yaml.load(DEMO_CATALOGUE_FILE.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    return Catalogue.model_validate(raw)


def _qualified(expression: str, alias: str) -> str:
    """`expression` with its bare column names qualified by `alias`."""
    tree = sqlglot.parse_one(expression, read="postgres")
    for column in tree.find_all(exp.Column):
        if not column.table:
            column.set("table", exp.to_identifier(alias))
    return tree.sql(dialect="postgres")


Step = tuple[str, list[str], str, list[str]]  # from table, its columns, to table, its columns


def _paths(tables: dict[str, TableEntry], start: str) -> dict[str, list[Step]]:
    """The shortest foreign-key path from `start` to every table it reaches (many-to-one)."""
    paths: dict[str, list[Step]] = {start: []}
    frontier = [start]
    while frontier:
        following = []
        for name in frontier:
            for fk in tables[name].foreign_keys:
                target = fk.references.split(".", 1)[-1]
                if target in tables and target not in paths:
                    step = (name, fk.columns, target, fk.referenced_columns)
                    paths[target] = [*paths[name], step]
                    following.append(target)
        frontier = following
    return paths


def _dimension_columns(cat: Catalogue) -> Iterator[tuple[TableEntry, str]]:
    for table in cat.tables:
        for column in table.columns:
            if column.dimension:
                yield table, column.name


def layer_from(catalogue: Catalogue) -> SemanticLayer:
    """The semantic layer of a catalogue in the file format (what is hidden left out)."""
    cat = catalogue.available()
    tables = {t.name: t for t in cat.tables}
    alias = {t.name: t.alias or t.name for t in cat.tables}
    metrics: list[Metric] = []
    for m in cat.metrics:
        fact = m.table.split(".", 1)[-1]
        if fact not in tables:
            raise CatalogueError(f"metric {m.key!r} names unknown table {m.table!r}")
        metrics.append(
            Metric(
                m.key,
                m.label,
                fact,
                _qualified(m.numerator or m.sql, alias[fact]),
                _qualified(m.denominator, alias[fact]) if m.denominator else None,
                m.unit,
                tuple(m.synonyms),
                m.higher_is_better,
                m.scale,
                m.decimals,
                m.description,
            )  # fmt: skip
        )
    fact_names = list(dict.fromkeys(m.fact for m in metrics))
    paths = {f: _paths(tables, f) for f in fact_names}
    joins: dict[str, dict[str, str]] = {f: {} for f in fact_names}
    dimensions: list[Dimension] = []
    for table, name in _dimension_columns(cat):
        column = table.column(name)
        assert column is not None and column.dimension
        reach: dict[str, tuple[str, ...]] = {}
        for f in fact_names:
            if table.name not in paths[f]:
                continue
            path = paths[f][table.name]
            reach[f] = tuple(step[2] for step in path)
            for src, cols, dst, dcols in path:
                on = " AND ".join(
                    f"{alias[dst]}.{dc} = {alias[src]}.{c}"
                    for c, dc in zip(cols, dcols, strict=True)
                )
                joins[f].setdefault(dst, f"JOIN {table.schema_}.{dst} AS {alias[dst]} ON {on}")
        dimensions.append(
            Dimension(
                column.dimension,
                column.label or name,
                f"{alias[table.name]}.{name}",
                reach,
                tuple(column.synonyms),
                tuple(column.values),
                dict(column.value_synonyms),
            )  # fmt: skip
        )
    facts: dict[str, Fact] = {}
    for f in fact_names:
        table = tables[f]
        time = table.column(table.time_column) if table.time_column else None
        if time is None:
            raise CatalogueError(f"table {table.key} has metrics but no time_column")
        label = time.label or time.name.replace("_", " ")
        facts[f] = Fact(
            f, alias[f], f"{alias[f]}.{time.name}", label[:1].lower() + label[1:], joins[f]
        )
    return SemanticLayer(facts, tuple(metrics), tuple(dimensions))


#: The operator's edits of the demo's catalogue, beside ANALYTICS_CATALOGUE_PATH.
DEMO_EDITS_NAME = "demo.edits.yaml"
DEMO_EDITS_TEMPLATE = """\
# Your edits to the bundled demo's catalogue (tools/analytics/demo_catalogue.yaml), laid over it
# at every start-up; `python main.py analytics-catalogue refresh` writes the result next to this
# file (demo.catalogue.yaml) for reading. Name a table (and column) and set only what you want
# to change; metrics are added or replaced by key. Example:
#
# tables:
#   - name: analytics.shipments
#     columns:
#       - name: carrier
#         synonyms: [carrier, carriers, trucking company, trucking companies]
# metrics:
#   - key: damaged_units
#     label: Damaged units
#     table: analytics.shipments
#     numerator: SUM(CASE WHEN damaged THEN 1 ELSE 0 END)
#     synonyms: [damaged units, vehicles damaged]
tables: []
metrics: []
"""


def demo_layer(edits: Path | None = None) -> SemanticLayer:
    """The demo's semantic layer with the operator's edits at `edits` laid over its file (the
    shipped layer when there is no such file); CatalogueError says what is wrong."""
    if edits is None or not edits.exists():
        return DEMO_LAYER
    return layer_from(apply_edits(demo_catalogue(), read_edits(edits)))


#: The bundled demo's semantic layer, from its catalogue file.
DEMO_LAYER: SemanticLayer = layer_from(demo_catalogue())
FACTS: dict[str, Fact] = DEMO_LAYER.facts
METRICS: tuple[Metric, ...] = DEMO_LAYER.metrics
DIMENSIONS: tuple[Dimension, ...] = DEMO_LAYER.dimensions

GRAINS: dict[str, tuple[str, ...]] = {
    "day": ("day", "days", "daily", "date", "per day", "each day"),
    "week": ("week", "weeks", "weekly"),
    "month": ("month", "months", "monthly", "month by month", "month over month", "mom"),
    "quarter": ("quarter", "quarters", "quarterly", "quarter over quarter", "qoq"),
    "year": ("year", "years", "yearly", "annual", "annually", "year over year", "yoy"),
}


def grain_sql(grain: str, column: str) -> str:
    """The expression that buckets `column` (a date) by `grain`; labels sort in time order."""
    if grain == "day":
        return column
    if grain == "year":
        return f"CAST(EXTRACT(YEAR FROM {column}) AS INT)"
    if grain == "quarter":
        return f"TO_CHAR({column}, 'YYYY-\"Q\"Q')"
    return f"CAST(DATE_TRUNC('{grain}', {column}) AS DATE)"


def metric(key: str) -> Metric:
    """The demo's metric with this key; KeyError names the known keys."""
    return DEMO_LAYER.metric(key)


def dimension(key: str) -> Dimension:
    """The demo's dimension with this key."""
    return DEMO_LAYER.dimension(key)


def dimensions_for(fact: str, layer: SemanticLayer | None = None) -> list[Dimension]:
    """The dimensions that apply to `fact` (in the demo's layer unless given another)."""
    return (layer or DEMO_LAYER).dimensions_for(fact)


def capabilities(layer: SemanticLayer | None = None) -> str:
    """What the semantic layer can answer, as text for an honest 'cannot map' answer."""
    layer = layer or DEMO_LAYER
    lines = ["Metrics:"]
    for fact in layer.facts:
        names = ", ".join(m.label for m in layer.metrics if m.fact == fact)
        dims = ", ".join(d.label.lower() for d in layer.dimensions_for(fact))
        lines.append(f"- {fact}: {names} (by {dims} and time)")
    lines.append(
        "Time: by day, week, month, quarter or year; periods such as 'in 2025', "
        "'Q3 2024', 'last quarter', 'since March', 'June 2025', 'last 6 months', "
        "'2024 vs 2025'."
    )
    lines.append(
        "Ask for example: 'Damage rate by carrier in Q3 2025', 'Top 5 dealers by "
        "revenue in 2025', 'Monthly downtime by plant since June 2025', 'Why did "
        "the damage rate rise in Q3 2025?'."
    )
    return "\n".join(lines)
