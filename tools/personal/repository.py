"""Owner-scoped SQL over `personal.tasks`, `personal.meals` and `personal.events` (psycopg 3).

Every statement is parameterised and every one has `user_id = %s` in its WHERE clause (inserts
set it): a row id from another user matches nothing, so it reads as "not found", never as
"forbidden" (which would confirm the id exists). Column and table names come only from the
fixed `TableSpec`s below, composed with `psycopg.sql`, never from input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from psycopg import AsyncConnection, sql
from psycopg.rows import dict_row

from tools.personal.models import (
    PRIORITY_RANK,
    EventFilter,
    Kind,
    MealFilter,
    TaskFilter,
)


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What the repository needs to know about one table."""

    kind: Kind
    table: str
    writable: tuple[str, ...]
    datetimes: tuple[str, ...]
    order_by: str
    text_columns: tuple[str, ...]

    @property
    def ident(self) -> sql.Composed:
        return sql.SQL("personal.{}").format(sql.Identifier(self.table))


SPECS: dict[Kind, TableSpec] = {
    "task": TableSpec(
        "task",
        "tasks",
        ("title", "notes", "due_at", "priority", "status", "tags", "tz", "remind_at"),
        ("due_at", "created_at", "completed_at", "remind_at"),
        "due_at",
        ("title", "notes"),
    ),
    "meal": TableSpec(
        "meal",
        "meals",
        (
            "eaten_at",
            "meal_type",
            "description",
            "items",
            "calories",
            "protein_g",
            "carbs_g",
            "fat_g",
            "tz",
        ),
        ("eaten_at", "created_at"),
        "eaten_at",
        ("description",),
    ),
    "event": TableSpec(
        "event",
        "events",
        (
            "title",
            "starts_at",
            "ends_at",
            "location",
            "attendees",
            "notes",
            "tz",
            "remind_at",
            "rrule",
        ),  # fmt: skip
        ("starts_at", "ends_at", "created_at", "remind_at"),
        "starts_at",
        ("title", "notes", "location"),
    ),
}

_COLUMNS = sql.SQL("*")


def localise(spec: TableSpec, row: dict[str, Any]) -> dict[str, Any]:
    """The row with its datetimes in the zone they were given in (`tz`)."""
    zone = ZoneInfo(row.get("tz") or "UTC")
    out = {key: value for key, value in row.items() if key not in ("updated_at", "total")}
    for column in spec.datetimes:
        value = out.get(column)
        if isinstance(value, datetime):
            out[column] = value.astimezone(zone)
    return out


# --- filters ---------------------------------------------------------------------------------

Clause = tuple[sql.SQL | sql.Composed, list[Any]]


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _text_clause(columns: Sequence[str], text: str, array: str | None = None) -> Clause:
    parts = [sql.SQL("{} ILIKE %s").format(sql.Identifier(column)) for column in columns]
    params: list[Any] = [_like(text)] * len(columns)
    if array:
        parts.append(sql.SQL("array_to_string({}, ' ') ILIKE %s").format(sql.Identifier(array)))
        params.append(_like(text))
    return sql.SQL("({})").format(sql.SQL(" OR ").join(parts)), params


def task_clauses(flt: TaskFilter) -> list[Clause]:
    """WHERE clauses of a task filter."""
    out: list[Clause] = []
    if flt.status:
        out.append((sql.SQL("status = ANY(%s)"), [list(flt.status)]))
    if flt.priority:
        out.append((sql.SQL("priority = ANY(%s)"), [list(flt.priority)]))
    if flt.min_priority:
        floor = PRIORITY_RANK[flt.min_priority]
        allowed = [name for name, rank in PRIORITY_RANK.items() if rank >= floor]
        out.append((sql.SQL("priority = ANY(%s)"), [allowed]))
    if flt.tags:
        out.append((sql.SQL("tags @> %s"), [list(flt.tags)]))
    if flt.due_from:
        out.append((sql.SQL("due_at >= %s"), [flt.due_from]))
    if flt.due_to:
        out.append((sql.SQL("due_at < %s"), [flt.due_to]))
    if flt.completed_from:
        out.append((sql.SQL("completed_at >= %s"), [flt.completed_from]))
    if flt.completed_to:
        out.append((sql.SQL("completed_at < %s"), [flt.completed_to]))
    if flt.text:
        out.append(_text_clause(("title", "notes"), flt.text, "tags"))
    return out


def meal_clauses(flt: MealFilter) -> list[Clause]:
    """WHERE clauses of a meal filter."""
    out: list[Clause] = []
    if flt.meal_type:
        out.append((sql.SQL("meal_type = ANY(%s)"), [list(flt.meal_type)]))
    if flt.eaten_from:
        out.append((sql.SQL("eaten_at >= %s"), [flt.eaten_from]))
    if flt.eaten_to:
        out.append((sql.SQL("eaten_at < %s"), [flt.eaten_to]))
    if flt.min_calories is not None:
        out.append((sql.SQL("calories >= %s"), [flt.min_calories]))
    if flt.max_calories is not None:
        out.append((sql.SQL("calories <= %s"), [flt.max_calories]))
    if flt.text:
        out.append(_text_clause(("description",), flt.text, "items"))
    return out


def event_clauses(flt: EventFilter) -> list[Clause]:
    """WHERE clauses of an event filter."""
    out: list[Clause] = []
    if flt.starts_from:
        out.append((sql.SQL("starts_at >= %s"), [flt.starts_from]))
    if flt.starts_to:
        out.append((sql.SQL("starts_at < %s"), [flt.starts_to]))
    if flt.attendee:
        out.append(
            (
                sql.SQL("EXISTS (SELECT 1 FROM unnest(attendees) a WHERE lower(a) = lower(%s))"),
                [flt.attendee],
            )
        )
    if flt.location:
        out.append((sql.SQL("location ILIKE %s"), [_like(flt.location)]))
    if flt.text:
        out.append(_text_clause(("title", "notes", "location"), flt.text, "attendees"))
    return out


def _where(user_id: str, clauses: Sequence[Clause]) -> Clause:
    parts: list[sql.SQL | sql.Composed] = [sql.SQL("user_id = %s")]
    params: list[Any] = [user_id]
    for clause, values in clauses:
        parts.append(clause)
        params.extend(values)
    return sql.SQL(" AND ").join(parts), params


# --- statements ------------------------------------------------------------------------------


class Repository:
    """The SQL of one table, always scoped to a user. Methods take an open connection."""

    def __init__(self, spec: TableSpec) -> None:
        self.spec = spec

    async def insert(
        self, conn: AsyncConnection, user_id: str, values: dict[str, Any]
    ) -> dict[str, Any]:
        columns = ["user_id", *(c for c in self.spec.writable if c in values)]
        query = sql.SQL("INSERT INTO {} ({}) VALUES ({}) RETURNING *").format(
            self.spec.ident,
            sql.SQL(", ").join(map(sql.Identifier, columns)),
            sql.SQL(", ").join(sql.Placeholder() * len(columns)),
        )
        params = [user_id, *(values[c] for c in columns[1:])]
        return await self._one(conn, query, params)  # type: ignore[return-value]

    async def get(self, conn: AsyncConnection, user_id: str, item_id: int) -> dict[str, Any] | None:
        query = sql.SQL("SELECT * FROM {} WHERE user_id = %s AND id = %s").format(self.spec.ident)
        return await self._one(conn, query, [user_id, item_id])

    async def get_many(
        self, conn: AsyncConnection, user_id: str, ids: Sequence[int]
    ) -> dict[int, dict[str, Any]]:
        if not ids:
            return {}
        query = sql.SQL("SELECT * FROM {} WHERE user_id = %s AND id = ANY(%s)").format(
            self.spec.ident
        )
        rows = await self._all(conn, query, [user_id, list(ids)])
        return {int(row["id"]): row for row in rows}

    async def update(
        self,
        conn: AsyncConnection,
        user_id: str,
        item_id: int,
        changes: dict[str, Any],
        extra: Sequence[Clause] = (),
    ) -> dict[str, Any] | None:
        sets: list[sql.Composable] = [sql.SQL("updated_at = now()")]
        params: list[Any] = []
        for clause, values in extra:  # computed assignments (they read the old row)
            sets.append(clause)
            params.extend(values)
        for column in self.spec.writable:
            if column in changes:
                sets.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
                params.append(changes[column])
        query = sql.SQL("UPDATE {} SET {} WHERE user_id = %s AND id = %s RETURNING *").format(
            self.spec.ident, sql.SQL(", ").join(sets)
        )
        return await self._one(conn, query, [*params, user_id, item_id])

    async def delete(
        self, conn: AsyncConnection, user_id: str, item_id: int
    ) -> dict[str, Any] | None:
        query = sql.SQL("DELETE FROM {} WHERE user_id = %s AND id = %s RETURNING *").format(
            self.spec.ident
        )
        return await self._one(conn, query, [user_id, item_id])

    async def page(
        self,
        conn: AsyncConnection,
        user_id: str,
        clauses: Sequence[Clause],
        *,
        limit: int,
        offset: int = 0,
        newest_first: bool = False,
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of rows and the total count of matching rows."""
        where, params = _where(user_id, clauses)
        direction = sql.SQL("DESC" if newest_first else "ASC")
        query = sql.SQL(
            "SELECT *, count(*) OVER () AS total FROM {} WHERE {} "
            "ORDER BY {} {} NULLS LAST, id {} LIMIT %s OFFSET %s"
        ).format(self.spec.ident, where, sql.Identifier(self.spec.order_by), direction, direction)
        rows = await self._all(conn, query, [*params, limit, offset])
        if rows:
            return rows, int(rows[0]["total"])
        count = sql.SQL("SELECT count(*) AS n FROM {} WHERE {}").format(self.spec.ident, where)
        row = await self._one(conn, count, params)
        return [], int(row["n"]) if row else 0

    async def candidate_ids(
        self, conn: AsyncConnection, user_id: str, clauses: Sequence[Clause], limit: int
    ) -> list[int]:
        """Ids of the (newest) rows matching the filters, at most `limit`."""
        where, params = _where(user_id, clauses)
        query = sql.SQL("SELECT id FROM {} WHERE {} ORDER BY id DESC LIMIT %s").format(
            self.spec.ident, where
        )
        return [int(r["id"]) for r in await self._all(conn, query, [*params, limit])]

    async def lexical_rank(
        self,
        conn: AsyncConnection,
        user_id: str,
        text_sql: sql.Composable,
        query: str,
        ids: Sequence[int] | None,
        limit: int,
    ) -> list[int]:
        """Ids ranked by Postgres full-text relevance of `query` (English stemming)."""
        scope = sql.SQL("AND id = ANY(%s)") if ids is not None else sql.SQL("")
        stmt = sql.SQL(
            "SELECT id FROM (SELECT id, ts_rank(to_tsvector('english', {text}), q) AS r "
            "FROM {table}, plainto_tsquery('english', %s) q "
            "WHERE user_id = %s {scope} AND to_tsvector('english', {text}) @@ q) s "
            "ORDER BY r DESC, id DESC LIMIT %s"
        ).format(text=text_sql, table=self.spec.ident, scope=scope)
        params: list[Any] = [query, user_id]
        if ids is not None:
            params.append(list(ids))
        return [int(r["id"]) for r in await self._all(conn, stmt, [*params, limit])]

    async def ids_of_user(self, conn: AsyncConnection, user_id: str) -> list[int]:
        query = sql.SQL("SELECT id FROM {} WHERE user_id = %s ORDER BY id").format(self.spec.ident)
        return [int(r["id"]) for r in await self._all(conn, query, [user_id])]

    # --- helpers ---------------------------------------------------------------------------

    @staticmethod
    async def _all(
        conn: AsyncConnection, query: sql.SQL | sql.Composed, params: Sequence[Any]
    ) -> list[dict[str, Any]]:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(query, params)
            return list(await cur.fetchall())

    @staticmethod
    async def _one(
        conn: AsyncConnection, query: sql.SQL | sql.Composed, params: Sequence[Any]
    ) -> dict[str, Any] | None:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(query, params)
            return await cur.fetchone()


#: Postgres expressions of each kind's searchable text (for the lexical leg of hybrid search).
TEXT_SQL: dict[Kind, sql.Composable] = {
    "task": sql.SQL("title || ' ' || notes || ' ' || array_to_string(tags, ' ')"),
    "meal": sql.SQL("meal_type || ' ' || description || ' ' || array_to_string(items, ' ')"),
    "event": sql.SQL(
        "title || ' ' || location || ' ' || array_to_string(attendees, ' ') || ' ' || notes"
    ),
}


async def nutrition_rows(
    conn: AsyncConnection, user_id: str, start: datetime, end: datetime, tz: str
) -> tuple[dict[str, Any], dict[str, int]]:
    """Sums of the user's meals in [start, end) and kcal per local day (in zone `tz`)."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT count(*) AS meals, coalesce(sum(calories), 0) AS calories,"
            " coalesce(sum(protein_g), 0) AS protein_g, coalesce(sum(carbs_g), 0) AS carbs_g,"
            " coalesce(sum(fat_g), 0) AS fat_g FROM personal.meals"
            " WHERE user_id = %s AND eaten_at >= %s AND eaten_at < %s",
            (user_id, start, end),
        )
        totals = await cur.fetchone() or {}
        await cur.execute(
            "SELECT to_char((eaten_at AT TIME ZONE %s)::date, 'YYYY-MM-DD') AS day,"
            " coalesce(sum(calories), 0) AS kcal FROM personal.meals"
            " WHERE user_id = %s AND eaten_at >= %s AND eaten_at < %s GROUP BY 1 ORDER BY 1",
            (tz, user_id, start, end),
        )
        by_day = {str(r["day"]): int(r["kcal"]) for r in await cur.fetchall()}
    return dict(totals), by_day
