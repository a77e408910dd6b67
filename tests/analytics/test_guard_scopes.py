"""The guard resolves CTE names as Postgres scopes them, on the demo and on an external database.

A table reference is a CTE only where that CTE is visible (the WITH's body, later CTEs of the
same WITH, subqueries nested in them); every other reference is qualified to an exposed schema
and checked, so a CTE of the same name elsewhere in the query (a sibling subquery, a later CTE,
a nested WITH) never lets `pg_user`, `pg_authid` or a hidden table through.

Table-driven cases, a generator of nested queries whose expected resolution is computed
alongside (the oracle), and the same queries run on the real shop database: the rendering the
guard accepts returns what the original text returns, and the audit's bypasses are refused as
the read-only role and as a superuser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import psycopg
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg_pool import AsyncConnectionPool
from sqlglot import exp

from tests.analytics.shop import ShopDB, create_shop
from tools.analytics.executor import _search_path, open_reader_pool, run_readonly
from tools.analytics.guard import SQLRefused, validate_sql
from tools.analytics.source import DEMO_SCOPE, Scope

SHOP = Scope(("shop",), frozenset({("shop", "regions"), ("shop", "products")}), label="shop")

#: The audit's bypasses and their relatives: a CTE name used where that CTE is not visible.
BYPASSES: list[tuple[str, str]] = [
    ("sibling-subquery-in-from",
     "SELECT usename, passwd FROM pg_user, (WITH pg_user AS (SELECT 1) SELECT 1) x"),
    ("later-cte", "WITH x AS (SELECT * FROM pg_roles), pg_roles AS (SELECT 1) SELECT * FROM x"),
    ("hidden-table-after-sibling", "SELECT * FROM regions, (WITH b AS (SELECT 1) SELECT 1) x, b"),
    ("settings", "SELECT name, setting FROM pg_settings, (WITH pg_settings AS "
     "(SELECT 1) SELECT 1) x"),
    ("activity-in-where", "SELECT 1 FROM regions WHERE EXISTS (SELECT query FROM "
     "pg_stat_activity) AND EXISTS (WITH pg_stat_activity AS (SELECT 1) SELECT 1)"),
    ("scalar-subquery", "SELECT (SELECT count(*) FROM pg_authid), (WITH pg_authid AS "
     "(SELECT 1) SELECT 1)"),
    ("cte-body-names-itself", "WITH pg_user AS (SELECT * FROM pg_user) SELECT * FROM pg_user"),
    ("nested-with-leaks-out",
     "SELECT * FROM (WITH q AS (WITH pg_roles AS (SELECT 1) SELECT 1) SELECT * FROM pg_roles) x"),
    ("union-other-branch",
     "(WITH pg_user AS (SELECT 1 AS a) SELECT a FROM pg_user) UNION SELECT usesysid FROM pg_user"),
    ("lateral", "SELECT * FROM regions r, LATERAL (SELECT * FROM pg_shadow) s, "
     "(WITH pg_shadow AS (SELECT 1) SELECT 1) x"),
    ("in-list", "SELECT 1 FROM regions WHERE region_id IN (SELECT oid FROM pg_roles) "
     "OR region_id IN (WITH pg_roles AS (SELECT 1) SELECT 1)"),
    ("recursive", "WITH RECURSIVE pg_user AS (SELECT 1) SELECT * FROM pg_user"),
    ("duplicate-cte-name",
     "WITH a AS (SELECT 1), A AS (SELECT * FROM pg_roles) SELECT * FROM a"),
]  # fmt: skip

#: CTE shadowing that is legitimate: the reference is in the CTE's scope.
ALLOWED: list[tuple[str, str, int]] = [
    ("shadow-in-body", "WITH pg_user AS (SELECT 1 AS a) SELECT * FROM pg_user", 0),
    ("shadow-table", "WITH regions AS (SELECT 1 AS a) SELECT * FROM regions", 0),
    ("body-reads-table-of-same-name",
     "WITH regions AS (SELECT * FROM regions) SELECT count(*) FROM regions", 1),
    ("later-cte-sees-earlier",
     "WITH a AS (SELECT * FROM regions), b AS (SELECT * FROM a) SELECT * FROM b", 1),
    ("subquery-sees-outer-cte",
     "WITH a AS (SELECT 1 AS c) SELECT * FROM products WHERE EXISTS (SELECT * FROM a)", 1),
    ("lateral-sees-cte",
     "WITH a AS (SELECT 1 AS c) SELECT * FROM products p, LATERAL (SELECT * FROM a) s", 1),
    ("union-shares-with",
     "WITH a AS (SELECT 1 AS c) SELECT c FROM a UNION SELECT region_id FROM regions", 1),
    ("scalar-sees-cte", "WITH a AS (SELECT 1 AS c) SELECT (SELECT c FROM a) FROM regions", 1),
]  # fmt: skip


@pytest.mark.parametrize("scope", [SHOP, DEMO_SCOPE], ids=["external", "demo"])
@pytest.mark.parametrize("sql", [s for _, s in BYPASSES], ids=[i for i, _ in BYPASSES])
def test_a_cte_name_out_of_its_scope_is_a_table_and_is_checked(scope: Scope, sql: str) -> None:
    with pytest.raises(SQLRefused, match="^SQL refused: "):
        validate_sql(sql, scope=scope)


@pytest.mark.parametrize(
    "sql, real", [(s, n) for _, s, n in ALLOWED], ids=[i for i, _, _ in ALLOWED]
)
def test_a_cte_in_scope_is_read_as_the_cte(sql: str, real: int) -> None:
    validated = validate_sql(sql, scope=SHOP)
    tree = sqlglot.parse_one(validated.sql, read="postgres")
    assert len([t for t in tree.find_all(exp.Table) if t.db == "shop"]) == real, validated.sql


# --- nested queries whose resolution is known while they are built --------------------------

NAMES = ["regions", "products", "pg_user", "pg_roles", "a", "b"]
REAL = {"regions", "products"}


@dataclass(frozen=True)
class Built:
    sql: str
    tables: tuple[str, ...]  # the references that name tables (not visible CTEs)


@st.composite
def queries(draw: st.DrawFn, env: frozenset[str] = frozenset(), depth: int = 2) -> Built:
    """One query of a single column `c`, the names it reads resolved by Postgres's rules:
    a name is a CTE where a WITH around it (or an earlier CTE of its WITH) defines it."""
    tables: list[str] = []
    visible = set(env)
    head = ""
    if depth > 0 and draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
        parts = []
        for name in names:  # each CTE's body sees only the CTEs before it
            body = draw(queries(frozenset(visible), depth - 1))
            tables += body.tables
            parts.append(f"{name} AS ({body.sql})")
            visible.add(name)
        head = "WITH " + ", ".join(parts) + " "
    branches = []
    for _ in range(draw(st.integers(1, 2 if depth > 0 else 1))):  # UNION ALL shares the WITH
        select = draw(selects(frozenset(visible), depth))
        tables += select.tables
        branches.append(select.sql)
    return Built(head + " UNION ALL ".join(branches), tuple(tables))


@st.composite
def selects(draw: st.DrawFn, env: frozenset[str], depth: int) -> Built:
    tables: list[str] = []
    sources = []
    for i in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["table", "derived", "lateral"] if depth > 0 else ["table"]))
        if kind == "table":
            name = draw(st.sampled_from(NAMES))
            if name not in env:
                tables.append(name)
            sources.append(f"{name} AS s{i}")
        else:
            inner = draw(queries(env, depth - 1))
            tables += inner.tables
            lateral = "LATERAL " if kind == "lateral" and i > 0 else ""
            sources.append(f"{lateral}({inner.sql}) AS s{i}")
    column = "1"
    if depth > 0 and draw(st.booleans()):
        inner = draw(queries(env, depth - 1))
        tables += inner.tables
        column = f"(SELECT count(*) FROM ({inner.sql}) AS q)"
    where = ""
    if depth > 0 and draw(st.booleans()):
        inner = draw(queries(env, depth - 1))
        tables += inner.tables
        where = f" WHERE EXISTS ({inner.sql})"
    return Built(f"SELECT {column} AS c FROM {', '.join(sources)}{where}", tuple(tables))


def qualified(sql: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read="postgres")
    return sorted(t.name for t in tree.find_all(exp.Table) if t.db)


@settings(max_examples=400, deadline=None)
@given(queries())
def test_nested_queries_resolve_as_postgres_scopes_them(built: Built) -> None:
    """Accepted exactly when every reference that is not a visible CTE is a readable table,
    and then each such reference, and nothing else, is qualified to the exposed schema."""
    if set(built.tables) <= REAL:
        validated = validate_sql(built.sql, scope=SHOP)
        assert qualified(validated.sql) == sorted(built.tables), validated.sql
    else:
        with pytest.raises(SQLRefused):
            validate_sql(built.sql, scope=SHOP)


# --- on the real database ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop(postgres_url: str) -> Iterator[ShopDB]:
    yield from create_shop(postgres_url)


@pytest.fixture
async def reader(shop: ShopDB) -> AsyncIterator[AsyncConnectionPool]:
    pool = open_reader_pool(shop.reader_url, max_size=1)
    await pool.open()
    yield pool
    await pool.close()


@pytest.fixture
async def superuser(shop: ShopDB) -> AsyncIterator[AsyncConnectionPool]:
    pool = open_reader_pool(shop.owner_url, max_size=1)
    await pool.open()
    yield pool
    await pool.close()


AUDIT = [
    "SELECT usename, passwd FROM pg_user, (WITH pg_user AS (SELECT 1) SELECT 1) x",
    "SELECT name, setting FROM pg_settings, (WITH pg_settings AS (SELECT 1) SELECT 1) x",
    "SELECT query FROM pg_stat_activity, (WITH pg_stat_activity AS (SELECT 1) SELECT 1) x",
    "SELECT rolpassword FROM pg_authid, (WITH pg_authid AS (SELECT 1) SELECT 1) x",
    "WITH x AS (SELECT * FROM pg_roles), pg_roles AS (SELECT 1) SELECT * FROM x",
    "SELECT * FROM regions, (WITH b AS (SELECT 1) SELECT 1) x, products",  # products hidden
]


@pytest.mark.parametrize("sql", AUDIT)
async def test_the_audits_bypasses_are_refused_on_the_database(
    reader: AsyncConnectionPool, superuser: AsyncConnectionPool, sql: str
) -> None:
    hidden = Scope(("shop",), frozenset({("shop", "regions")}), label="shop")  # products hidden
    for pool in (reader, superuser):
        with pytest.raises(SQLRefused, match="^SQL refused: there is no table"):
            await run_readonly(pool, sql, scope=hidden)


async def test_queries_run_with_the_catalogue_first_and_temp_last(
    superuser: AsyncConnectionPool,
) -> None:
    """Every relation is qualified, so the path only picks functions and types: pg_catalog first
    (no user function shadows a built-in), pg_temp last (never searched first)."""
    async with superuser.connection() as conn:
        await conn.execute("CREATE TEMP TABLE products (c int)")
        await conn.commit()
    result = await run_readonly(superuser, "SELECT count(*) FROM products", scope=SHOP)
    assert result.rows == [[6]] and "shop.products" in result.sql
    async with superuser.connection() as conn, conn.transaction():
        await conn.execute(_search_path(SHOP))
        path = await (await conn.execute("SHOW search_path")).fetchone()
    assert path == ("pg_catalog, shop, pg_temp",)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(queries())
def test_the_rendering_means_what_postgres_reads_in_the_text(shop: ShopDB, built: Built) -> None:
    """Run on the shop: the guard's rendering counts the same rows as the original text (with
    search_path = shop), so the guard resolved every name the way Postgres does."""
    if not set(built.tables) <= REAL:
        return
    rendered = validate_sql(built.sql, scope=SHOP).sql
    with psycopg.connect(shop.owner_url) as conn:
        conn.execute("SET search_path = shop")
        count = "SELECT count(*) FROM ({}) AS t"
        original = conn.execute(count.format(built.sql).encode()).fetchone()
        guarded = conn.execute(count.format(rendered).encode()).fetchone()
    assert original == guarded, rendered
