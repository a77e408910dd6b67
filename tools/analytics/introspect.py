"""Read a PostgreSQL schema and derive its catalogue (`tools.analytics.catalogue_file`).

`read_schema(conninfo, schemas)` reads, as the agent's own (read-only) login, the tables and
views of `schemas` with their columns, types, comments, primary and foreign keys, and the
distinct values of low-cardinality text columns (sampled: at most `sample_rows` rows per table,
in a READ ONLY transaction with a statement timeout, so a huge table costs a bounded scan).

`derive(raw)` turns that into a catalogue: each table an entity with a count metric; numeric
non-key columns measures; text, boolean and foreign-key columns dimensions; date and timestamp
columns time columns (the first is the table's); foreign keys the join graph; synonyms from the
split identifier (singular and plural) and from a short comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from tools.analytics.ask_sql import ident
from tools.analytics.catalogue_file import (
    Catalogue,
    ColumnEntry,
    ForeignKey,
    MetricEntry,
    Role,
    TableEntry,
)

_NUMERIC = ("smallint", "integer", "bigint", "numeric", "real", "double precision", "money")
_TEXT = ("text", "character varying", "character", "citext", "name")
_TIME = ("date", "timestamp")
#: Column names (as split words joined by _) that name a row outright, best first.
_NAMES = ("name", "full_name", "fullname", "display_name", "displayname")
#: Pairs of columns that name a person together (the label is "first last").
_NAME_PAIRS = (
    ("first_name", "last_name"), ("firstname", "lastname"), ("given_name", "family_name"),
    ("forename", "surname"), ("first_name", "surname"),
)  # fmt: skip
#: Columns that describe a row but name it only when nothing name-like exists.
_DESCRIBING = ("title", "label", "description", "code")
#: Words that make a numeric column a count of things (units, items): "units", "items",
#: "quantity" in a question mean the SUM of that column, not a count of rows.
_QUANTITY_WORDS = frozenset({"quantity", "qty", "units", "items", "pieces", "volume"})
QUANTITY_SYNONYMS = ("quantity", "units", "items", "pieces", "units sold", "items sold")


@dataclass
class RawTable:
    schema: str
    name: str
    comment: str = ""
    columns: list[tuple[str, str, str]] = field(default_factory=list)  # name, type, comment
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[list[str], str, list[str]]] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)


def read_schema(
    conninfo: str,
    schemas: tuple[str, ...],
    *,
    max_values: int = 25,
    sample_rows: int = 100_000,
    timeout_ms: int = 5000,
) -> list[RawTable]:
    """The tables of `schemas` as the login sees them (blocking; run it in a thread)."""
    with psycopg.connect(conninfo, connect_timeout=10) as conn:
        conn.read_only = True
        conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(f"{timeout_ms}ms")))
        tables: dict[int, RawTable] = {}
        for oid, schema, name, comment in conn.execute(
            "SELECT c.oid, n.nspname, c.relname, obj_description(c.oid, 'pg_class') "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
            "AND NOT c.relispartition AND has_table_privilege(c.oid, 'SELECT') "
            "ORDER BY array_position(%s, n.nspname::text), c.relname",
            [list(schemas), list(schemas)],
        ).fetchall():
            tables[oid] = RawTable(schema, name, comment or "")
        if not tables:
            return []
        for oid, name, typ, comment in conn.execute(
            "SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), "
            "col_description(a.attrelid, a.attnum) FROM pg_attribute a WHERE a.attrelid = "
            "ANY(%s) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum",
            [list(tables)],
        ).fetchall():
            tables[oid].columns.append((name, typ, comment or ""))
        for oid, kind, cols, ref, ref_cols in conn.execute(
            "SELECT con.conrelid, con.contype, "
            "ARRAY(SELECT attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i) "
            "JOIN pg_attribute ON attrelid = con.conrelid AND attnum = k.n ORDER BY k.i), "
            "CASE WHEN con.contype = 'f' THEN "
            "(SELECT nspname || '.' || relname FROM pg_class rc JOIN pg_namespace rn ON "
            "rn.oid = rc.relnamespace WHERE rc.oid = con.confrelid) END, "
            "ARRAY(SELECT attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i) "
            "JOIN pg_attribute ON attrelid = con.confrelid AND attnum = k.n ORDER BY k.i) "
            "FROM pg_constraint con WHERE con.conrelid = ANY(%s) AND con.contype IN ('p', 'f') "
            "ORDER BY con.conname",
            [list(tables)],
        ).fetchall():
            if kind == "p":
                tables[oid].primary_key = list(cols)
            elif ref and ref.split(".", 1)[0] in schemas:
                tables[oid].foreign_keys.append((list(cols), ref, list(ref_cols)))
        if max_values > 0:
            for raw in tables.values():
                _sample_values(conn, raw, max_values, sample_rows)
        conn.rollback()
    return list(tables.values())


def _sample_values(conn: psycopg.Connection[Any], raw: RawTable, limit: int, rows: int) -> None:
    fk_cols = {c for cols, _, _ in raw.foreign_keys for c in cols}
    for name, typ, _ in raw.columns:
        if not typ.startswith(_TEXT) or name in raw.primary_key or name in fk_cols:
            continue
        query = sql.SQL(
            "SELECT DISTINCT v FROM (SELECT {col} AS v FROM {tbl} LIMIT {rows}) s "
            "WHERE v IS NOT NULL LIMIT {cap}"
        ).format(
            col=sql.Identifier(name),
            tbl=sql.Identifier(raw.schema, raw.name),
            rows=sql.Literal(rows),
            cap=sql.Literal(limit + 1),
        )
        try:
            with conn.transaction():
                found = [str(r[0]) for r in conn.execute(query).fetchall()]
        except psycopg.Error:
            continue  # a timeout or a permission: the column simply gets no values
        if 0 < len(found) <= limit:
            raw.values[name] = sorted(found)


# --- derivation -------------------------------------------------------------------------------


def words(identifier: str) -> str:
    """`billingCountry` / `billing_country` -> 'billing country'."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier)
    return re.sub(r"[_\W]+", " ", spaced).strip().lower()


def plural(phrase: str) -> str:
    head, _, last = phrase.rpartition(" ")
    if re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", last):
        last = last + "es"
    else:
        last = last + "s"
    return f"{head} {last}".strip()


def singular(phrase: str) -> str:
    head, _, last = phrase.rpartition(" ")
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif re.search(r"(ss|x|z|ch|sh)es$", last):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return f"{head} {last}".strip()


def _comment_synonym(comment: str) -> list[str]:
    """A short comment ('Sale date.', 'Customer orders') is another name for the thing."""
    first = re.split(r"[.;:(\n]", comment, maxsplit=1)[0].strip().lower()
    return [first] if first and len(first.split()) <= 4 else []


def _role(name: str, typ: str, keys: set[str]) -> Role:
    if name in keys:
        return "key"
    if typ.startswith(_TIME):
        return "time"
    if typ.startswith(_NUMERIC) and not (name == "id" or name.endswith("_id")):
        return "measure"
    return "dimension"


def _label(raw: RawTable) -> tuple[str | None, str | None]:
    """(label column, label expression) naming a row of `raw`.

    Name-like first: a column called name (or full/display name, or the table's own
    `<noun>_name`), then a person's first and last name together, then any other `..._name`;
    a title, label, description or code only when nothing is name-like (an employee's title
    is what they do, not who they are); else the first text column.
    """
    texts = [n for n, t, _ in raw.columns if t.startswith(_TEXT) and n not in raw.primary_key]
    spoken = {words(n).replace(" ", "_"): n for n in texts}
    noun = singular(words(raw.name)).replace(" ", "_")
    for wanted in (*_NAMES, f"{noun}_name", f"{words(raw.name).replace(' ', '_')}_name"):
        if wanted in spoken:
            return spoken[wanted], None
    for first, last in _NAME_PAIRS:
        if first in spoken and last in spoken:
            return None, f"{ident(spoken[first])} || ' ' || {ident(spoken[last])}"
    named = [n for key, n in spoken.items() if key.endswith("name")]
    if named:
        return named[0], None
    for wanted in _DESCRIBING:
        found = [n for key, n in spoken.items() if key == wanted or key.endswith("_" + wanted)]
        if found:
            return found[0], None
    return (texts[0] if texts else None), None


def _quantity(name: str, role: Role) -> bool:
    """A measure that counts things (quantity, qty_shipped, units_sold, item_count...)."""
    return role == "measure" and bool(set(words(name).split()) & _QUANTITY_WORDS)


def derive(
    raw_tables: list[RawTable], *, source: str = "", schemas: tuple[str, ...] = ()
) -> Catalogue:
    """The catalogue of `raw_tables` (see the module docstring)."""
    tables: list[TableEntry] = []
    metrics: list[MetricEntry] = []
    for raw in raw_tables:
        noun = singular(words(raw.name))
        fk_cols = {c for cols, _, _ in raw.foreign_keys for c in cols}
        columns: list[ColumnEntry] = []
        for name, typ, comment in raw.columns:
            role = _role(name, typ, set(raw.primary_key))
            if name in fk_cols:
                role = "dimension"
            spoken = words(name)
            if name in fk_cols and spoken.endswith(" id"):
                spoken = spoken[:-3]
            syn = {spoken, plural(spoken), f"{noun} {spoken}", *_comment_synonym(comment)}
            if spoken.startswith(noun + " "):  # track_name -> 'name' too
                syn.add(spoken[len(noun) + 1 :])
            if _quantity(name, role):  # "units sold", "how many items": SUM(quantity)
                syn.update(QUANTITY_SYNONYMS)
            columns.append(
                ColumnEntry(
                    name=name,
                    type=typ,
                    role=role,
                    label=spoken.capitalize(),
                    synonyms=sorted(syn),
                    description=comment,
                    values=raw.values.get(name, []),
                )
            )
        time_col = next((c.name for c in columns if c.role == "time"), None)
        label_column, label_sql = _label(raw)
        tables.append(
            TableEntry(
                schema_=raw.schema,
                name=raw.name,
                label=noun.capitalize(),
                synonyms=sorted({noun, plural(noun), *_comment_synonym(raw.comment)}),
                description=raw.comment,
                primary_key=raw.primary_key,
                foreign_keys=[
                    ForeignKey(columns=c, references=r, referenced_columns=rc)
                    for c, r, rc in raw.foreign_keys
                ],
                time_column=time_col,
                label_column=label_column,
                label_sql=label_sql,
                columns=columns,
            )
        )
        many = plural(noun)
        metrics.append(
            MetricEntry(
                key=re.sub(r"[^a-z0-9_]", "_", f"{raw.name.lower()}_count")[:63],
                label=f"Number of {many}",
                table=f"{raw.schema}.{raw.name}",
                sql="COUNT(*)",
                synonyms=[
                    f"number of {many}",
                    f"count of {many}",
                    f"{noun} count",
                    f"how many {many}",
                    f"{many} count",
                ],  # fmt: skip
                unit="count",
            )
        )
    return Catalogue(source=source, schemas=list(schemas), tables=tables, metrics=metrics)
