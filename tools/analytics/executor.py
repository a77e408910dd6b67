"""Run guarded SQL as the read-only reader role: READ ONLY transaction, timeout, row cap.

Three layers stand between generated SQL and the data:

1. `tools.analytics.guard.validate_sql` accepts one SELECT over schema `analytics` and returns
   the canonical SQL that runs here (not the text given);
2. the connection logs in as the reader role (`reader_conninfo`), which may only SELECT from
   `analytics` and cannot switch to a more privileged role (it is the session user);
3. every query runs in `BEGIN READ ONLY` with `SET LOCAL statement_timeout` and
   `idle_in_transaction_session_timeout`, through a server-side cursor from which at most
   `row_cap + 1` rows are fetched (the extra one only flags truncation).

Cancelling the awaiting task (a client gone mid-stream) makes psycopg cancel the statement on
the server and roll back; the pool gets the connection back idle, with no open transaction.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from decimal import Decimal
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import AsyncConnectionPool

from tools.analytics.guard import SQLRefused, validate_sql
from tools.analytics.outputs import ColumnKind, QueryResult
from tools.analytics.source import DEMO_SCOPE, Scope
from tools.pg_pool import reconnect_timeout

#: Postgres type OIDs by kind (int2/4/8, oid, float4/8, numeric; date, timestamp(tz); bool).
_NUMBER_OIDS = {20, 21, 23, 26, 700, 701, 1700}
_TEMPORAL_OIDS = {1082, 1114, 1184}
_BOOLEAN_OIDS = {16}

APPLICATION_NAME = "switchyard-analytics"


def reader_conninfo(database_url: str, user: str, password: str | None) -> str:
    """The connection string of the reader role on DATABASE_URL's server and database.

    The owner's password in DATABASE_URL is dropped (never sent as the reader's).
    """
    params: dict[str, Any] = dict(conninfo_to_dict(database_url))
    params.pop("password", None)
    params["user"] = user
    if password:
        params["password"] = password
    params.setdefault("application_name", APPLICATION_NAME)
    return make_conninfo("", **params)


def open_reader_pool(
    conninfo: str, *, max_size: int = 4, timeout: float = 10.0
) -> AsyncConnectionPool:
    """An unopened async pool of reader connections; `await pool.open()` / `pool.close()`."""
    return AsyncConnectionPool(
        conninfo,
        min_size=0,
        max_size=max_size,
        timeout=timeout,
        reconnect_timeout=reconnect_timeout(timeout),
        open=False,
        kwargs={"autocommit": False},
        name="analytics-reader",
    )


def _kind(type_code: int) -> ColumnKind:
    if type_code in _NUMBER_OIDS:
        return "number"
    if type_code in _TEMPORAL_OIDS:
        return "temporal"
    if type_code in _BOOLEAN_OIDS:
        return "boolean"
    return "text"


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86400
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


async def run_readonly(
    pool: AsyncConnectionPool,
    text: str,
    *,
    row_cap: int = 1000,
    statement_timeout_ms: int = 5000,
    max_sql_chars: int = 20_000,
    scope: Scope = DEMO_SCOPE,
    cost_limit: float | None = None,
) -> QueryResult:
    """Validate `text`, run it as the reader, return at most `row_cap` rows (JSON values).

    `scope` is the source's readable schemas (the demo's by default); with `cost_limit`, the
    query is EXPLAINed first, in the same read-only transaction, and refused when the planner's
    total cost is above it. Raises `SQLRefused` (the guard, the cost ceiling) or a psycopg error
    (e.g. `QueryCanceled` on timeout).
    """
    if not 1 <= row_cap <= 100_000:
        raise ValueError(f"row_cap must be 1..100000 (got {row_cap})")
    if not 1 <= statement_timeout_ms <= 3_600_000:
        raise ValueError(f"statement_timeout_ms must be 1..3600000 (got {statement_timeout_ms})")
    validated = validate_sql(text, max_chars=max_sql_chars, scope=scope)
    started = time.perf_counter()
    async with pool.connection() as conn:
        rows, description = await _fetch(
            conn, validated.sql, row_cap, statement_timeout_ms, scope, cost_limit
        )
    columns = [d.name for d in description]
    kinds = [_kind(d.type_code) for d in description]
    truncated = len(rows) > row_cap
    rows = rows[:row_cap]
    return QueryResult(
        sql=validated.sql,
        columns=columns,
        column_kinds=kinds,
        rows=[[_json_value(v) for v in row] for row in rows],
        row_count=len(rows),
        truncated=truncated,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
    )


async def _fetch(
    conn: AsyncConnection[Any],
    query: str,
    row_cap: int,
    timeout_ms: int,
    scope: Scope = DEMO_SCOPE,
    cost_limit: float | None = None,
) -> tuple[list[tuple[Any, ...]], list[Any]]:
    async with conn.transaction():
        # READ ONLY must be the transaction's first statement; SET LOCAL ends with it.
        await conn.execute("SET TRANSACTION READ ONLY")
        await conn.execute(
            sql.SQL("SET LOCAL statement_timeout = {}").format(sql.Literal(f"{timeout_ms}ms"))
        )
        await conn.execute(
            sql.SQL("SET LOCAL idle_in_transaction_session_timeout = {}").format(
                sql.Literal(f"{max(timeout_ms * 2, 1000)}ms")
            )
        )
        await conn.execute(_search_path(scope))
        if cost_limit is not None:
            await _check_cost(conn, query, cost_limit)
        # A server-side cursor (DECLARE ... CURSOR FOR, which itself only takes a query), so
        # a huge result stays on the server and only row_cap + 1 rows cross the wire.
        async with conn.cursor(name=f"analytics_{uuid.uuid4().hex[:12]}") as cur:
            await cur.execute(query.encode())
            rows = await cur.fetchmany(row_cap + 1)
            description = list(cur.description or [])
    return list(rows), description


async def explain(
    pool: AsyncConnectionPool,
    text: str,
    *,
    statement_timeout_ms: int = 5000,
    max_sql_chars: int = 20_000,
    scope: Scope = DEMO_SCOPE,
) -> None:
    """Validate and plan `text` without running it: the guard's `SQLRefused`, or the
    database's error (an unknown column, a type mismatch) as a psycopg error."""
    validated = validate_sql(text, max_chars=max_sql_chars, scope=scope)
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET TRANSACTION READ ONLY")
        await conn.execute(
            sql.SQL("SET LOCAL statement_timeout = {}").format(
                sql.Literal(f"{statement_timeout_ms}ms")
            )
        )
        await conn.execute(_search_path(scope))
        await conn.execute(b"EXPLAIN " + validated.sql.encode())


def _search_path(scope: Scope) -> sql.Composed:
    """SET LOCAL search_path to the scope's path, each schema quoted as an identifier."""
    path = sql.SQL(", ").join(sql.Identifier(s) for s in scope.search_path)
    return sql.SQL("SET LOCAL search_path = {}").format(path)


async def _check_cost(conn: AsyncConnection[Any], query: str, cost_limit: float) -> None:
    """Refuse the query when the planner's estimate is above `cost_limit` (nothing has run:
    plain EXPLAIN only plans)."""
    cursor = await conn.execute(b"EXPLAIN (FORMAT JSON) " + query.encode())
    row = await cursor.fetchone()
    plan = row[0] if row else None
    if isinstance(plan, str):
        plan = json.loads(plan)
    cost = float(plan[0]["Plan"]["Total Cost"]) if plan else 0.0
    if cost > cost_limit:
        raise SQLRefused(
            f"SQL refused: the planner estimates this query at cost {cost_text(cost)}, above "
            f"ANALYTICS_EXPLAIN_COST_LIMIT ({cost_text(cost_limit)}); it did not run. Ask for a "
            "shorter period, fewer breakdowns or an aggregate, or raise the setting."
        )


def cost_text(value: float) -> str:
    """A planner cost for a message: thousands separated, a fraction only when there is one
    (1,234,567; 0.5; 12.25), never rounded to a different-looking number such as (0)."""
    if value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value >= 0.01 else f"{value:.2g}"
