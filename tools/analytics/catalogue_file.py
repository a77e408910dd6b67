"""The catalogue file: what a database holds, in words a question uses, editable by its owner.

One format serves both sources: the catalogue derived from an external database's schema
(`tools.analytics.introspect.derive`) and the bundled demo's hand-written semantic layer
(`bundled_catalogue()`, written from `tools.analytics.catalogue`). A catalogue has

- tables (entities): schema, name, label, synonyms, description, primary key, foreign keys
  (the join graph; every FK is a many-to-one edge), the time column, hidden;
- columns: type, role (`measure` numeric, `dimension` text/bool/FK, `time` date/timestamp,
  `key` id), label, synonyms, description, a few distinct `values`, hidden;
- metrics: a named SQL aggregate over one table (`SUM(total) / COUNT(*)`), with synonyms, unit
  and whether higher is better. Bare column names in a metric's SQL belong to its table.

The user's file holds only what they change, in the same shape (`CatalogueEdits`): an entry
names a table (and column) and sets the fields to replace; metrics are added or replaced by key;
`hidden: true` removes a table or column from answers and from the model's context.
`apply_edits(derived, edits)` lays them over the derived catalogue at every load, so a refresh of
the schema never loses them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import sqlglot
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlglot import exp
from sqlglot.errors import SqlglotError

from tools.analytics.outputs import Unit

Role = Literal["measure", "dimension", "time", "key"]


class ForeignKey(BaseModel):
    model_config = ConfigDict(extra="forbid")
    columns: list[str]
    references: str = Field(description="schema.table")
    referenced_columns: list[str]


class ColumnEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: str = "text"
    role: Role = "dimension"
    label: str = ""
    synonyms: list[str] = Field(default_factory=list)
    description: str = ""
    values: list[str] = Field(default_factory=list)
    value_synonyms: dict[str, str] = Field(
        default_factory=dict,
        description="Other words for a value, lower case, to the value ('suvs': 'SUV').",
    )
    dimension: str | None = Field(
        None,
        description="The key of the breakdown this column is in answers (`dealer` for "
        "dealers.name). The demo's semantic layer offers only the columns that have one.",
    )
    hidden: bool = False


class TableEntry(BaseModel):
    schema_: str = Field(alias="schema")
    name: str
    label: str = ""
    synonyms: list[str] = Field(default_factory=list)
    description: str = ""
    primary_key: list[str] = Field(default_factory=list)
    foreign_keys: list[ForeignKey] = Field(default_factory=list)
    time_column: str | None = None
    label_column: str | None = Field(
        None, description="The column that names a row (a breakdown by this entity shows it)."
    )
    label_sql: str | None = Field(
        None,
        description="An SQL expression over the table's columns that names a row when no one "
        "column does (first_name || ' ' || last_name); used instead of label_column.",
    )
    alias: str | None = Field(
        None, description="The alias the SQL of answers gives this table (default: its name)."
    )
    columns: list[ColumnEntry] = Field(default_factory=list)
    hidden: bool = False
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def key(self) -> str:
        return f"{self.schema_}.{self.name}"

    def column(self, name: str) -> ColumnEntry | None:
        return next((c for c in self.columns if c.name == name), None)

    def visible_columns(self) -> list[ColumnEntry]:
        return [c for c in self.columns if not c.hidden]


class MetricEntry(BaseModel):
    """A metric: `sql`, or a ratio `numerator` / `denominator` (root-cause analysis splits a
    ratio into both; its `sql` is then written from them, see `ratio_sql`)."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    label: str
    table: str = Field(description="schema.table the metric aggregates")
    sql: str = Field(
        "", description="An aggregate SQL expression over the table's columns (may be left out "
        "when numerator is given)."
    )  # fmt: skip
    numerator: str | None = Field(None, description="An aggregate over the table's columns.")
    denominator: str | None = Field(
        None, description="An aggregate the numerator is divided by (none: an additive metric)."
    )
    scale: float = Field(1.0, description="The ratio's multiplier (100 for a percentage).")
    decimals: int = Field(2, ge=0, le=6, description="The ratio's decimals.")
    synonyms: list[str] = Field(default_factory=list)
    unit: Unit = "count"
    description: str = ""
    higher_is_better: bool = True

    @model_validator(mode="after")
    def _sql_or_numerator(self) -> MetricEntry:
        if not self.sql:
            if not self.numerator:
                raise ValueError(f"metric {self.key!r} needs sql or a numerator")
            self.sql = ratio_sql(self.numerator, self.denominator, self.unit, self.scale,
                                 self.decimals)  # fmt: skip
        return self


def ratio_sql(
    numerator: str, denominator: str | None, unit: str, scale: float = 1.0, decimals: int = 2
) -> str:
    """A metric's SQL from its parts: an additive one as it is (money rounded to cents), a
    ratio scaled, guarded against a zero denominator and rounded."""
    if denominator is None:
        return f"ROUND({numerator}, 2)" if unit == "currency" else numerator
    return f"ROUND({scale:.1f} * {numerator} / NULLIF({denominator}, 0), {decimals})"


class Catalogue(BaseModel):
    """A database described for questions (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    source: str = ""
    schemas: list[str] = Field(default_factory=list)
    tables: list[TableEntry] = Field(default_factory=list)
    metrics: list[MetricEntry] = Field(default_factory=list)

    def table(self, key: str) -> TableEntry | None:
        """A table by `schema.table` or, when unambiguous, by bare name."""
        found = [t for t in self.tables if key in (t.key, t.name)]
        return found[0] if len(found) == 1 or (found and found[0].key == key) else None

    def visible_tables(self) -> list[TableEntry]:
        return [t for t in self.tables if not t.hidden]

    def available(self) -> Catalogue:
        """The catalogue without what is hidden, as if the database did not have it.

        Hidden tables and columns go, and so does every reference to them: a foreign key to a
        hidden table or over a hidden column (its column stays, as the referencing table's own
        column), a hidden label or time column, a metric over a hidden table. A metric the user
        wrote over a hidden column stays: it is their definition, and the column's values are
        not offered. Returns `self` when nothing is hidden.
        """
        if not any(t.hidden or any(c.hidden for c in t.columns) for t in self.tables):
            return self
        out = self.model_copy(deep=True)
        out.tables = [t for t in out.tables if not t.hidden]
        shown = {t.key for t in out.tables}
        for t in out.tables:
            t.columns = t.visible_columns()
            names = {c.name for c in t.columns}
            t.foreign_keys = [
                fk for fk in t.foreign_keys
                if set(fk.columns) <= names and (target := self.table(fk.references)) is not None
                and target.key in shown
                and set(fk.referenced_columns) <= {c.name for c in target.visible_columns()}
            ]  # fmt: skip
            t.primary_key = [c for c in t.primary_key if c in names]
            if t.label_column not in names:
                t.label_column = None
            if t.label_sql and not columns_of(t.label_sql) <= names:
                t.label_sql = None
            if t.time_column not in names:
                t.time_column = None
        out.metrics = [m for m in out.metrics if (on := out.table(m.table)) and on.key in shown]
        return out

    def describe(self) -> str:
        """The catalogue as compact text for a chat model (what it may use, not raw DDL)."""
        if self.available() is not self:
            return self.available().describe()
        lines = []
        for t in self.visible_tables():
            cols = []
            for c in t.visible_columns():
                extra = f" e.g. {', '.join(repr(v) for v in c.values[:6])}" if c.values else ""
                note = f" -- {c.description}" if c.description else ""
                cols.append(f"{c.name} {c.type} [{c.role}]{extra}{note}")
            fks = "; ".join(
                f"{', '.join(f.columns)} -> {f.references}({', '.join(f.referenced_columns)})"
                for f in t.foreign_keys
            )
            head = f"{t.key}" + (f" ({t.description})" if t.description else "")
            lines.append(f"{head}: " + ", ".join(cols) + (f". Joins: {fks}" if fks else ""))
        if self.metrics:
            lines.append("Metrics (use these exact formulas):")
            lines += [f"- {m.label} [{m.key}] on {m.table}: {m.sql}" for m in self.metrics]
        return "\n".join(lines)


class ColumnEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    role: Role | None = None
    label: str | None = None
    synonyms: list[str] | None = None
    description: str | None = None
    values: list[str] | None = None
    value_synonyms: dict[str, str] | None = None
    hidden: bool | None = None


class TableEdit(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str = Field(description="schema.table (or the bare name when unambiguous)")
    label: str | None = None
    synonyms: list[str] | None = None
    description: str | None = None
    time_column: str | None = None
    label_column: str | None = None
    label_sql: str | None = None
    hidden: bool | None = None
    columns: list[ColumnEdit] = Field(default_factory=list)


class CatalogueEdits(BaseModel):
    """The user's file: only what they change (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    tables: list[TableEdit] = Field(default_factory=list)
    metrics: list[MetricEntry] = Field(default_factory=list)


def columns_of(expression: str) -> set[str]:
    """The column names an SQL expression reads (a label or a metric over one table)."""
    try:
        tree = sqlglot.parse_one(expression, read="postgres")
    except SqlglotError:
        return {expression}  # unreadable: never a subset of a table's columns
    return {column.name for column in tree.find_all(exp.Column)}


class CatalogueError(ValueError):
    """The catalogue file cannot be read or names what the database lacks; says which entry."""


def apply_edits(derived: Catalogue, edits: CatalogueEdits) -> Catalogue:
    """`derived` with the user's edits laid over it (a new catalogue; `derived` is kept)."""
    out = derived.model_copy(deep=True)
    for edit in edits.tables:
        table = out.table(edit.name)
        if table is None:
            raise CatalogueError(
                f"catalogue edit names table {edit.name!r}, which the database does not have "
                f"(tables: {', '.join(t.key for t in out.tables)})"
            )
        for field in (
            "label", "synonyms", "description", "time_column", "label_column", "label_sql",
            "hidden",
        ):  # fmt: skip
            value = getattr(edit, field)
            if value is not None:
                setattr(table, field, value)
        for cedit in edit.columns:
            column = table.column(cedit.name)
            if column is None:
                raise CatalogueError(
                    f"catalogue edit names column {table.key}.{cedit.name}, which does not exist"
                )
            for field, value in cedit.model_dump(exclude={"name"}).items():
                if value is not None:
                    setattr(column, field, value)
    for metric in edits.metrics:
        table = out.table(metric.table)
        if table is None:
            raise CatalogueError(f"metric {metric.key!r} names unknown table {metric.table!r}")
        metric = metric.model_copy(update={"table": table.key})
        out.metrics = [m for m in out.metrics if m.key != metric.key] + [metric]
    return out


EDITS_TEMPLATE = """\
# Your edits to the analytics catalogue, laid over the one derived from the database at every
# start-up and `python main.py analytics-catalogue refresh`. The derived catalogue is written
# next to this file ({derived}): copy a table or column name from there and set only what
# you want to change. Example:
#
# tables:
#   - name: public.invoice
#     label: order
#     synonyms: [orders, sales]
#     columns:
#       - name: total
#         synonyms: [revenue, sales amount]
#       - name: billing_postal_code
#         hidden: true
# metrics:
#   - key: average_order_value
#     label: Average order value
#     table: public.invoice
#     sql: SUM(total) / NULLIF(COUNT(*), 0)
#     synonyms: [aov, average order value]
#     unit: currency
tables: []
metrics: []
"""


def derived_path(path: Path) -> Path:
    """Where the derived catalogue is written for reading: `<stem>.derived.yaml` beside `path`."""
    return path.with_name(f"{path.stem}.derived.yaml")


def dump_yaml(data: BaseModel) -> str:
    return yaml.safe_dump(
        data.model_dump(mode="json", by_alias=True, exclude_defaults=True),
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )


def write_derived(path: Path, derived: Catalogue) -> None:
    """Write the derived catalogue beside `path`, and the edits template when `path` is new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        "# Derived from the database schema by Switchyard: regenerated at every start-up and "
        f"refresh.\n# Do not edit this file; put your changes in {path.name}.\n"
    )
    derived_path(path).write_text(header + dump_yaml(derived), encoding="utf-8")
    if not path.exists():
        path.write_text(EDITS_TEMPLATE.format(derived=derived_path(path).name), encoding="utf-8")


def read_edits(path: Path) -> CatalogueEdits:
    """The user's edits at `path` (none when it is missing); CatalogueError says what is wrong."""
    if not path.exists():
        return CatalogueEdits()
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return CatalogueEdits.model_validate(raw)
    except (yaml.YAMLError, ValueError) as exc:
        raise CatalogueError(f"the catalogue file {path} cannot be read: {exc}") from None


def load(path: Path, derived: Catalogue) -> Catalogue:
    """The derived catalogue with the edits at `path`: what the agent answers from."""
    return apply_edits(derived, read_edits(path))
