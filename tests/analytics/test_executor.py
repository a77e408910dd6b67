"""Read-only execution: role, READ ONLY transaction, timeout, row cap, and cancellation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from tests.analytics.conftest import AnalyticsDB
from tools.analytics import executor
from tools.analytics.executor import reader_conninfo, run_readonly
from tools.analytics.guard import SQLRefused

#: An allowed query that runs for minutes: a 49k x 49k join nobody should write.
SLOW_SQL = (
    "SELECT count(*) FROM analytics.sales a JOIN analytics.sales b "
    "ON a.sale_price + b.sale_price > 0"
)


def reader_backends(owner: psycopg.Connection, role: str) -> list[tuple[str, str]]:
    """(state, query) of every backend of the reader role."""
    rows = owner.execute(
        "SELECT coalesce(state, ''), coalesce(query, '') FROM pg_stat_activity WHERE usename = %s",
        [role],
    ).fetchall()
    return [(str(s), str(q)) for s, q in rows]


async def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll `predicate` (a condition on the server), failing with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_reader_conninfo_never_carries_the_owner_password() -> None:
    info = reader_conninfo("postgresql://owner:s3cret@db.example:5432/app", "reader", None)
    assert "s3cret" not in info and "user=reader" in info and "dbname=app" in info
    assert "password=pw" in reader_conninfo("postgresql://o:x@h/app", "reader", "pw")


async def test_runs_inside_a_read_only_transaction_as_the_reader(
    reader_pool: AsyncConnectionPool, analytics_db: AnalyticsDB
) -> None:
    # the transaction's settings, read with SQL the guard would refuse (so straight to _fetch)
    async with reader_pool.connection() as conn:
        rows, _ = await executor._fetch(
            conn,
            "SELECT current_setting('transaction_read_only'), "
            "current_setting('statement_timeout'), current_user, session_user",
            10,
            1234,
        )
    assert rows == [("on", "1234ms", analytics_db.reader_user, analytics_db.reader_user)]


async def test_row_cap_truncates_and_flags(reader_pool: AsyncConnectionPool) -> None:
    result = await run_readonly(
        reader_pool,
        "SELECT deal_id, sold_on, sale_price, financed FROM analytics.sales ORDER BY deal_id",
        row_cap=100,
    )
    assert result.row_count == 100 and result.truncated
    assert result.columns == ["deal_id", "sold_on", "sale_price", "financed"]
    assert result.column_kinds == ["number", "temporal", "number", "boolean"]
    assert result.rows[0][0] == 1 and isinstance(result.rows[0][1], str)
    assert isinstance(result.rows[0][2], float)
    small = await run_readonly(reader_pool, "SELECT name FROM analytics.plants", row_cap=100)
    assert small.row_count == 5 and not small.truncated


async def test_statement_timeout_cancels_a_slow_query(reader_pool: AsyncConnectionPool) -> None:
    with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
        await run_readonly(reader_pool, SLOW_SQL, statement_timeout_ms=300)
    # the connection went back to the pool clean and works
    result = await run_readonly(reader_pool, "SELECT count(*) FROM analytics.plants")
    assert result.rows == [[5]]


async def test_refused_sql_never_reaches_the_database(reader_pool: AsyncConnectionPool) -> None:
    with pytest.raises(SQLRefused, match="pg_sleep"):
        await run_readonly(reader_pool, "SELECT pg_sleep(30)")
    assert reader_pool.get_stats().get("requests_num", 0) == 0


async def test_limits_are_bounded(reader_pool: AsyncConnectionPool) -> None:
    with pytest.raises(ValueError, match="row_cap"):
        await run_readonly(reader_pool, "SELECT 1", row_cap=0)
    with pytest.raises(ValueError, match="statement_timeout_ms"):
        await run_readonly(reader_pool, "SELECT 1", statement_timeout_ms=0)


async def test_a_cancelled_query_leaves_no_transaction_or_running_statement(
    reader_pool: AsyncConnectionPool, analytics_db: AnalyticsDB, owner: psycopg.Connection
) -> None:
    role = analytics_db.reader_user
    task = asyncio.create_task(run_readonly(reader_pool, SLOW_SQL, statement_timeout_ms=120_000))
    await wait_until(
        lambda: any(state == "active" for state, _ in reader_backends(owner, role)),
        "the slow query to start",
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    def clean() -> bool:
        return all(state == "idle" for state, _ in reader_backends(owner, role))

    await wait_until(clean, "the reader's backends to be idle (no query, no transaction)")
    assert (await run_readonly(reader_pool, "SELECT 1 FROM analytics.plants LIMIT 1")).rows
