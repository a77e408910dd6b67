"""Analytics on a database the project did not ship: the shop (tests/analytics/shop.py).

A uniquely named database is created on the shared Postgres, read through a read-only role, its
catalogue derived from the schema; questions are answered without a model and compared with SQL
written here by hand; a user edit of the catalogue file changes an answer; writes and functions
with side effects are refused; a superuser connection shows in /health.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage, ToolMessage
from psycopg_pool import AsyncConnectionPool

from agents.analytics.react import answer_question, build_analytics_agent
from app.api import create_app
from app.components.analytics import catalogue_command
from config import Settings
from tests.analytics.shop import ShopDB, create_shop
from tests.support.scripted import ScriptedChatModel
from tools.analytics import ask
from tools.analytics.context import AnalyticsContext
from tools.analytics.executor import _fetch, open_reader_pool, run_readonly
from tools.analytics.external import ExternalSource, open_source
from tools.analytics.guard import SQLRefused
from tools.analytics.source import SourceError, check_url
from tools.analytics.sqlgen import generate_sql

TODAY = date(2026, 1, 1)
S = "shop"

#: (question, the SQL a person writes for it, whether row order matters)
QUESTIONS: list[tuple[str, str, bool]] = [
    ("How many orders are there?", f"SELECT COUNT(*) FROM {S}.orders", False),
    ("How many customers are there?", f"SELECT COUNT(*) FROM {S}.customers", False),
    ("Number of products", f"SELECT COUNT(*) FROM {S}.products", False),
    ("Total quantity", f"SELECT SUM(quantity) FROM {S}.order_lines", False),
    ("Average shipping fee", f"SELECT ROUND(AVG(shipping_fee), 2) FROM {S}.orders", False),
    ("Total shipping fee by status",
     f"SELECT status, SUM(shipping_fee) FROM {S}.orders GROUP BY status", False),
    ("Number of customers by segment",
     f"SELECT segment, COUNT(*) FROM {S}.customers GROUP BY segment", False),
    ("Number of orders by region",
     f"SELECT r.name, COUNT(*) FROM {S}.orders o JOIN {S}.customers c USING (customer_id) "
     f"JOIN {S}.regions r USING (region_id) GROUP BY r.name", False),
    ("Total quantity by region",
     f"SELECT r.name, SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.orders o USING (order_id)"
     f" JOIN {S}.customers c USING (customer_id) JOIN {S}.regions r USING (region_id) "
     "GROUP BY r.name", False),
    ("Total quantity by category",
     f"SELECT p.category, SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.products p "
     "USING (product_id) GROUP BY p.category", False),
    ("Top 3 products by total quantity",
     f"SELECT p.name, SUM(l.quantity) q FROM {S}.order_lines l JOIN {S}.products p "
     "USING (product_id) GROUP BY p.name ORDER BY q DESC, p.name LIMIT 3", True),
    ("How many orders in 2024?",
     f"SELECT COUNT(*) FROM {S}.orders WHERE ordered_on BETWEEN '2024-01-01' AND '2024-12-31'",
     False),
    ("Total quantity in Q2 2025",
     f"SELECT SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.orders o USING (order_id) "
     "WHERE o.ordered_on >= '2025-04-01' AND o.ordered_on < '2025-07-01'", False),
    ("Number of orders in March 2025",
     f"SELECT COUNT(*) FROM {S}.orders WHERE date_trunc('month', ordered_on) = '2025-03-01'",
     False),
    ("Monthly number of orders in 2024",
     f"SELECT date_trunc('month', ordered_on)::date, COUNT(*) FROM {S}.orders "
     "WHERE extract(year FROM ordered_on) = 2024 GROUP BY 1", False),
    ("Number of orders by quarter in 2025",
     f"SELECT to_char(ordered_on, 'YYYY-\"Q\"Q'), COUNT(*) FROM {S}.orders "
     "WHERE extract(year FROM ordered_on) = 2025 GROUP BY 1", False),
    ("Number of orders in 2024 vs 2025",
     f"SELECT extract(year FROM ordered_on)::text, COUNT(*) FROM {S}.orders GROUP BY 1",
     False),
    ("Number of orders in the North",
     f"SELECT COUNT(*) FROM {S}.orders o JOIN {S}.customers c USING (customer_id) "
     f"JOIN {S}.regions r USING (region_id) WHERE r.name = 'North'", False),
    ("Total quantity of Games by region in 2025",
     f"SELECT r.name, SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.products p USING "
     f"(product_id) JOIN {S}.orders o USING (order_id) JOIN {S}.customers c USING "
     f"(customer_id) JOIN {S}.regions r USING (region_id) WHERE p.category = 'Games' AND "
     "o.ordered_on >= '2025-01-01' AND o.ordered_on < '2026-01-01' GROUP BY r.name", False),
    ("Which region has the most orders?",
     f"SELECT r.name, COUNT(*) n FROM {S}.orders o JOIN {S}.customers c USING (customer_id) "
     f"JOIN {S}.regions r USING (region_id) GROUP BY r.name ORDER BY n DESC, r.name", True),
    ("Number of returned orders by customer segment",
     f"SELECT c.segment, COUNT(*) FROM {S}.orders o JOIN {S}.customers c USING (customer_id) "
     "WHERE o.status = 'returned' GROUP BY c.segment", False),
    ("Average unit price by category",
     f"SELECT p.category, ROUND(AVG(l.unit_price), 2) FROM {S}.order_lines l JOIN "
     f"{S}.products p USING (product_id) GROUP BY p.category", False),
    ("Top 2 customers by number of orders",
     f"SELECT c.name, COUNT(*) n FROM {S}.orders o JOIN {S}.customers c USING (customer_id) "
     "GROUP BY c.name ORDER BY n DESC, c.name LIMIT 2", True),
]  # fmt: skip

#: Measures named by a noun (units, items: the quantity column summed, not rows counted) and
#: entities named by people's names (a rep is "first last", not their shared title).
NAMED: list[tuple[str, str, bool]] = [
    ("Which product category sells the most units?",
     f"SELECT p.category, SUM(l.quantity) q FROM {S}.order_lines l JOIN {S}.products p "
     "USING (product_id) GROUP BY p.category ORDER BY q DESC, p.category", True),
    ("How many items were sold in 2025?",
     f"SELECT SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.orders o USING (order_id) "
     "WHERE o.ordered_on >= '2025-01-01' AND o.ordered_on < '2026-01-01'", False),
    ("Units sold by region",
     f"SELECT r.name, SUM(l.quantity) FROM {S}.order_lines l JOIN {S}.orders o USING (order_id)"
     f" JOIN {S}.customers c USING (customer_id) JOIN {S}.regions r USING (region_id) "
     "GROUP BY r.name", False),
    ("Number of customers by sales rep",
     f"SELECT r.first_name || ' ' || r.last_name, COUNT(*) FROM {S}.customers c JOIN {S}.reps r"
     " ON r.rep_id = c.sales_rep_id GROUP BY 1", False),
    ("Number of orders by rep",
     f"SELECT r.first_name || ' ' || r.last_name, COUNT(*) FROM {S}.orders o JOIN {S}.customers"
     f" c USING (customer_id) JOIN {S}.reps r ON r.rep_id = c.sales_rep_id GROUP BY 1", False),
]  # fmt: skip


def normal(rows: list[Any], ordered: bool) -> list[tuple[Any, ...]]:
    """Rows with numbers rounded to 2 decimals and dates as text; sorted unless ordered."""

    def cell(v: Any) -> Any:
        if isinstance(v, int | float | Decimal) and not isinstance(v, bool):
            return round(float(v), 2)
        return str(v)

    out = [tuple(cell(v) for v in row) for row in rows]
    return out if ordered else sorted(out, key=repr)


@pytest.fixture(scope="module")
def shop(postgres_url: str) -> Iterator[ShopDB]:
    yield from create_shop(postgres_url)


@pytest.fixture
def source(shop: ShopDB, tmp_path: Path) -> ExternalSource:
    return open_source(shop.reader_url, (S,), tmp_path / "catalogue.yaml")


@pytest.fixture
async def pool(shop: ShopDB) -> AsyncIterator[AsyncConnectionPool]:
    pool = open_reader_pool(shop.reader_url, max_size=2)
    await pool.open()
    yield pool
    await pool.close()


def expected(shop: ShopDB, sql: str, ordered: bool) -> list[tuple[Any, ...]]:
    with psycopg.connect(shop.owner_url) as conn:
        return normal(conn.execute(sql).fetchall(), ordered)


async def answer(pool: AsyncConnectionPool, source: ExternalSource, question: str) -> Any:
    generation = ask.generate(question, source.catalogue, TODAY)
    assert generation.sql is not None, f"{question}: {generation.message}"
    return await run_readonly(pool, generation.sql, scope=source.scope, cost_limit=1e7)


def test_the_catalogue_is_derived_from_the_schema(source: ExternalSource) -> None:
    cat = source.catalogue
    assert {t.key for t in cat.tables} == {f"{S}.{t}" for t in
                                          ("customers", "order_lines", "orders", "products",
                                           "regions", "reps")}  # fmt: skip
    orders = cat.table("shop.orders")
    assert orders is not None and orders.time_column == "ordered_on"
    assert orders.description == "Purchases." and "purchases" in orders.synonyms
    status = orders.column("status")
    assert status is not None and status.values == ["pending", "returned", "shipped"]
    assert status.role == "dimension"
    fee = orders.column("shipping_fee")
    assert fee is not None and fee.role == "measure" and "shipping fee" in fee.synonyms
    lines = cat.table("order_lines")
    assert lines is not None and {fk.references for fk in lines.foreign_keys} == {
        "shop.orders", "shop.products"}  # fmt: skip
    customers = cat.table("customers")
    assert customers is not None and "clients" not in customers.synonyms  # only short comments
    assert "buyers" in customers.synonyms and customers.label_column == "name"
    assert any(m.key == "orders_count" and m.sql == "COUNT(*)" for m in cat.metrics)
    assert source.role.warnings == ()  # the README's GRANTs make a read-only role
    derived = (source.catalogue_path.parent / "catalogue.derived.yaml").read_text()
    assert "ordered_on" in derived and "Order date." in derived
    assert "tables: []" in source.catalogue_path.read_text()  # the edits template


@pytest.mark.parametrize(
    ("question", "sql", "ordered"), QUESTIONS, ids=[q for q, _, _ in QUESTIONS]
)
async def test_questions_without_a_model_match_hand_written_sql(
    shop: ShopDB, source: ExternalSource, pool: AsyncConnectionPool,
    question: str, sql: str, ordered: bool,
) -> None:  # fmt: skip
    result = await answer(pool, source, question)
    assert normal(result.rows, ordered) == expected(shop, sql, ordered), result.sql


@pytest.mark.parametrize(("question", "sql", "ordered"), NAMED, ids=[q for q, _, _ in NAMED])
async def test_nouns_name_measures_and_people_are_named_by_name(
    shop: ShopDB, source: ExternalSource, pool: AsyncConnectionPool,
    question: str, sql: str, ordered: bool,
) -> None:  # fmt: skip
    result = await answer(pool, source, question)
    assert normal(result.rows, ordered) == expected(shop, sql, ordered), result.sql


def test_labels_prefer_names_to_titles(source: ExternalSource) -> None:
    reps = source.catalogue.table("reps")
    assert reps is not None and reps.label_sql == "first_name || ' ' || last_name"
    products = source.catalogue.table("products")
    assert products is not None and products.label_column == "name"
    lines = source.catalogue.table("order_lines")
    assert lines is not None
    quantity, price = lines.column("quantity"), lines.column("unit_price")
    assert quantity is not None and {"units", "items", "units sold"} <= set(quantity.synonyms)
    assert price is not None and "units" not in price.synonyms  # a unit price counts nothing


def test_at_least_twenty_questions() -> None:
    assert len(QUESTIONS) >= 20


def test_unknown_words_get_an_honest_answer(source: ExternalSource) -> None:
    gen = ask.generate("Total quantity by colour", source.catalogue, TODAY)
    assert gen.sql is None and "by 'colour'" in gen.message and "category" in gen.message
    gen = ask.generate("What is the weather like?", source.catalogue, TODAY)
    assert gen.sql is None and "Number of orders" in gen.message
    # a name the catalogue does not list is not silently dropped from the explanation
    gen = ask.generate("How many orders does Zed Corp have?", source.catalogue, TODAY)
    assert gen.explanation.endswith("Words not used: zed, corp.")
    gen = ask.generate("How many orders does Customer 07 have?", source.catalogue, TODAY)
    assert gen.sql is not None and "'Customer 07'" in gen.sql and "not used" not in gen.explanation


async def test_a_user_edit_of_the_catalogue_file_changes_the_answer(
    shop: ShopDB, tmp_path: Path, pool: AsyncConnectionPool
) -> None:
    path = tmp_path / "catalogue.yaml"
    before = open_source(shop.reader_url, (S,), path)
    assert ask.generate("Revenue by territory", before.catalogue, TODAY).sql is None
    quantity = await answer(pool, before, "Total quantity by category")
    path.write_text(
        """\
tables:
  - name: shop.regions
    synonyms: [territory, territories]
  - name: shop.order_lines
    columns:
      - name: quantity
        hidden: true
metrics:
  - key: revenue
    label: Revenue
    table: shop.order_lines
    sql: SUM(quantity * unit_price)
    synonyms: [revenue, sales]
    unit: currency
""",
        encoding="utf-8",
    )
    after = open_source(shop.reader_url, (S,), path)  # a restart or `analytics-catalogue refresh`
    result = await answer(pool, after, "Revenue by territory")
    assert normal(result.rows, False) == expected(
        shop,
        f"SELECT r.name, SUM(l.quantity * l.unit_price) FROM {S}.order_lines l JOIN {S}.orders "
        f"o USING (order_id) JOIN {S}.customers c USING (customer_id) JOIN {S}.regions r "
        "USING (region_id) GROUP BY r.name",
        False,
    )
    generation = ask.generate("Revenue by territory", after.catalogue, TODAY)
    assert generation.catalogue_metric == "revenue"
    assert "catalogue metric revenue (SUM(quantity * unit_price))" in generation.explanation
    hidden = ask.generate("Total quantity by category", after.catalogue, TODAY)
    assert hidden.sql is None and quantity.row_count == 3  # the hidden column is no measure


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("DELETE FROM shop.orders", "DELETE statement"),
        ("INSERT INTO shop.regions VALUES (9, 'East')", "INSERT statement"),
        ("UPDATE shop.orders SET status = 'x'", "UPDATE statement"),
        ("DROP TABLE shop.orders", "DROP statement"),
        ("CREATE TABLE shop.x (a int)", "CREATE statement"),
        ("COPY shop.orders TO '/tmp/x'", "not a SELECT"),
        ("WITH d AS (DELETE FROM shop.orders RETURNING *) SELECT * FROM d", "DELETE"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file() is not allowed"),
        ("SELECT lo_import('/etc/passwd')", "lo_import() is not allowed"),
        ("SELECT lo_export(1, '/tmp/x')", "lo_export() is not allowed"),
        ("SELECT * FROM dblink('host=x', 'select 1') AS t(a int)", "table functions"),
        ("SELECT dblink_exec('host=x', 'drop table y')", "dblink_exec() is not allowed"),
        ("SELECT set_config('transaction_read_only', 'off', true)", "set_config() is not"),
        ("SELECT pg_sleep(10)", "pg_sleep() is not allowed"),
        ("SELECT * FROM pg_catalog.pg_authid", "a system catalog"),
        ("SELECT * FROM information_schema.tables", "a system catalog"),
        ("SELECT * FROM pg_authid", "no table pg_authid"),
        ("SELECT * FROM public.secrets", "schema public is not readable"),
        ("SELECT 1; DELETE FROM shop.orders", "2 statements"),
    ],
)
async def test_writes_and_side_effects_are_refused(
    source: ExternalSource, pool: AsyncConnectionPool, sql: str, reason: str
) -> None:
    with pytest.raises(SQLRefused, match="^SQL refused: ") as refused:
        await run_readonly(pool, sql, scope=source.scope)
    assert reason in str(refused.value)


async def test_even_past_the_guard_the_transaction_cannot_write(shop: ShopDB) -> None:
    """A superuser login, the guard bypassed: the READ ONLY transaction still refuses a write
    (a sequence advanced by a SELECT)."""
    async with await psycopg.AsyncConnection.connect(shop.owner_url) as conn:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            await _fetch(conn, "SELECT nextval('shop.invoice_numbers')", 10, 1000)


async def test_the_cost_ceiling_refuses_before_running(
    source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    sql = "SELECT COUNT(*) FROM shop.order_lines a, shop.order_lines b, shop.order_lines c"
    with pytest.raises(SQLRefused, match="ANALYTICS_EXPLAIN_COST_LIMIT") as refused:
        await run_readonly(pool, sql, scope=source.scope, cost_limit=1000)
    assert "it did not run" in str(refused.value)
    ok = await run_readonly(pool, "SELECT COUNT(*) FROM orders", scope=source.scope)
    assert ok.rows == [[90]] and "shop.orders" in ok.sql  # unqualified -> the exposed schema


def test_sqlite_is_refused_with_the_reason() -> None:
    with pytest.raises(SourceError, match="only PostgreSQL"):
        check_url("sqlite:///data/shop.db")


def test_health_reports_a_superuser_connection(
    make_settings: Callable[..., Settings], shop: ShopDB, tmp_path: Path
) -> None:
    settings = make_settings(
        analytics_database_url=shop.owner_url,  # the postgres superuser
        analytics_schemas=S,
        analytics_catalogue_path=str(tmp_path / "cat.yaml"),
    )
    with TestClient(create_app(settings)) as api:
        health = api.get("/health").json()["dependencies"]["analytics"]
        assert health["status"] == "warning" and health["mode"] == "external"
        assert any("SUPERUSER" in w for w in health["warnings"]), health
        assert api.get("/health").status_code == 200  # analytics is not required
    reader = make_settings(
        analytics_database_url=shop.reader_url,
        analytics_schemas=S,
        analytics_catalogue_path=str(tmp_path / "cat2.yaml"),
    )
    with TestClient(create_app(reader)) as api:
        health = api.get("/health").json()["dependencies"]["analytics"]
        assert health["status"] == "ok" and "warnings" not in health, health
        body = api.post(
            "/analytics/query", json={"question": "Top 3 products by total quantity"}
        ).json()
        assert body["method"] == "semantic-layer" and body["row_count"] == 3
        assert body["metric"] == "SUM(order_lines.quantity)" and not body["demo_data"]
        assert (
            "Metric: SUM(order_lines.quantity). Rows: 3 rows." in body["text"]
            and "SQL: SELECT" in body["text"]
        )
        assert body["sql"].startswith("SELECT products.name AS product")


async def test_with_a_model_the_catalogue_is_the_context_and_a_db_error_is_retried_once(
    source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    ctx = AnalyticsContext(pool=pool, scope=source.scope, catalogue=source.catalogue)
    model = ScriptedChatModel(
        script=[
            {"sql": "SELECT SUM(qty) FROM shop.order_lines", "explanation": "wrong column"},
            {"sql": "SELECT SUM(quantity) AS units FROM order_lines", "explanation": "units"},
        ]
    )
    generation = await generate_sql(
        "How many units were ordered?", TODAY, model,
        catalogue=source.catalogue, scope=source.scope, check=ctx.explain,
    )  # fmt: skip
    assert generation.method == "model" and generation.sql is not None
    assert "shop.order_lines" in generation.sql  # qualified to the exposed schema
    prompt = str(model.calls[0][0].content)
    assert "shop.orders" in prompt and "[measure]" in prompt and "orders_count" in prompt
    assert "CREATE TABLE" not in prompt  # the catalogue, not raw DDL
    retry = str(model.calls[1][-1].content)
    assert retry.startswith("The database rejected your SQL:") and '"qty"' in retry
    result = await ctx.run_sql(generation.sql)
    assert result.columns == ["units"] and result.rows[0][0] > 0


async def test_a_model_that_fails_twice_falls_back_to_the_catalogue(
    source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    ctx = AnalyticsContext(pool=pool, scope=source.scope, catalogue=source.catalogue)
    bad = {"sql": "SELECT nope FROM shop.orders", "explanation": ""}
    model = ScriptedChatModel(script=[bad, bad])
    generation = await generate_sql(
        "Number of orders by status", TODAY, model,
        catalogue=source.catalogue, scope=source.scope, check=ctx.explain,
    )  # fmt: skip
    assert generation.method == "semantic-layer" and generation.catalogue_metric == "orders_count"
    assert len(model.calls) == 2  # one retry with the database's error, not more


def test_the_refresh_command_writes_the_catalogue_and_keeps_the_edits(
    make_settings: Callable[..., Settings], shop: ShopDB, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = tmp_path / "mine.yaml"
    path.write_text("tables:\n  - name: orders\n    synonyms: [purchases, baskets]\n")
    settings = make_settings(
        analytics_database_url=shop.reader_url,
        analytics_schemas=S,
        analytics_catalogue_path=str(path),
    )
    assert catalogue_command(settings) == 0
    out = capsys.readouterr().out
    assert "6 tables" in out and "mine.derived.yaml" in out and "WARNING" not in out
    assert "baskets" in path.read_text()  # the user's file is never overwritten
    assert "order_lines" in (tmp_path / "mine.derived.yaml").read_text()
    broken = make_settings(
        analytics_database_url=shop.reader_url, analytics_schemas="nothing_here",
        analytics_catalogue_path=str(path),
    )  # fmt: skip
    assert catalogue_command(broken) == 3
    assert "sees no tables in schema nothing_here" in capsys.readouterr().err
    demo = make_settings(analytics_catalogue_path=str(path))
    assert catalogue_command(demo) == 0
    assert "gap_attach_pct" in (tmp_path / "demo.catalogue.yaml").read_text()


async def test_the_agents_model_is_told_about_the_connected_database(
    source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    ctx = AnalyticsContext(
        pool=pool, scope=source.scope, catalogue=source.catalogue, demo_mode=False
    )
    model = ScriptedChatModel(script=["There are 90 orders."])
    answer = await answer_question("How many orders are there?", ctx, model)
    assert answer.text == "There are 90 orders." and not answer.demo_data
    system = str(model.calls[0][0].content)
    assert "user's own PostgreSQL database" in system and "shop.orders" in system
    assert "automotive" not in system


HIDE_REGIONS = "tables:\n  - name: shop.regions\n    hidden: true\n"


async def test_a_hidden_table_that_others_reference_is_simply_unavailable(
    shop: ShopDB, tmp_path: Path, pool: AsyncConnectionPool
) -> None:
    """customers.region_id references the hidden regions: questions still answer, none joins
    or names regions (the FK column stays the customers' own column), the model never sees it."""
    path = tmp_path / "catalogue.yaml"
    path.write_text(HIDE_REGIONS, encoding="utf-8")
    hidden = open_source(shop.reader_url, (S,), path)
    for question, sql in [
        ("How many orders are there?", f"SELECT COUNT(*) FROM {S}.orders"),
        ("Number of customers by segment",
         f"SELECT segment, COUNT(*) FROM {S}.customers GROUP BY segment"),
        ("Number of orders by region",  # the customers' region_id, not the hidden names
         f"SELECT c.region_id, COUNT(*) FROM {S}.orders o JOIN {S}.customers c "
         "USING (customer_id) GROUP BY c.region_id"),
    ]:  # fmt: skip
        result = await answer(pool, hidden, question)
        assert normal(result.rows, False) == expected(shop, sql, False), question
        assert "regions" not in result.sql, result.sql
    gen = ask.generate("Number of orders in the North", hidden.catalogue, TODAY)
    assert gen.sql is None or "regions" not in gen.sql  # the hidden table's values are gone
    context = hidden.catalogue.available().describe()
    assert "shop.regions" not in context and "region_id" in context
    with pytest.raises(SQLRefused, match="no table regions"):
        await run_readonly(pool, "SELECT name FROM regions", scope=hidden.scope)
    # a hidden label column: the entity is broken down by its key instead, never by the column
    path.write_text(
        "tables:\n  - name: shop.customers\n    columns:\n      - name: name\n"
        "        hidden: true\n",
        encoding="utf-8",
    )
    unnamed = open_source(shop.reader_url, (S,), path)
    result = await answer(pool, unnamed, "Top 2 customers by number of orders")
    assert "customers.name" not in result.sql and result.row_count == 2, result.sql


def test_a_hidden_referenced_table_over_http(
    make_settings: Callable[..., Settings], shop: ShopDB, tmp_path: Path
) -> None:
    path = tmp_path / "cat.yaml"
    path.write_text(HIDE_REGIONS, encoding="utf-8")
    settings = make_settings(
        analytics_database_url=shop.reader_url,
        analytics_schemas=S,
        analytics_catalogue_path=str(path),
    )
    with TestClient(create_app(settings)) as api:
        body = api.post("/analytics/query", json={"question": "How many orders are there?"})
        assert body.status_code == 200 and body.json()["rows"] == [[90]], body.text
        assert "unexpected" not in body.json()["text"]


async def test_tool_errors_name_the_connected_database_and_read_once(
    source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    """On a connected database the fix hints name its schema and tables (not analytics.*), a
    refusal says 'SQL refused' once, and a cost limit of 0.5 reads 0.5."""
    calls = [
        {"name": "sql_execution_tool", "args": {"sql": "SELECT * FROM pg_roles"}, "id": "c1"},
        {"name": "sql_execution_tool",
         "args": {"sql": "SELECT COUNT(*) FROM orders a, orders b"}, "id": "c2"},
        {"name": "sql_execution_tool", "args": {"sql": "SELECT nope FROM orders"}, "id": "c3"},
    ]  # fmt: skip
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=calls), "done"])
    ctx = AnalyticsContext(
        pool=pool, scope=source.scope, catalogue=source.catalogue, demo_mode=False,
        cost_limit=0.5,
    )  # fmt: skip
    agent = build_analytics_agent(model)
    await answer_question("Break things", ctx, agent=agent)
    errors = {m.tool_call_id: str(m.content) for m in model.calls[1] if isinstance(m, ToolMessage)}
    for text in errors.values():
        assert "analytics." not in text and "SQL refused: SQL refused" not in text, text
    assert errors["c1"].startswith("Error in sql_execution_tool: SQL refused: there is no table")
    assert "over shop.* tables" in errors["c1"]
    assert "ANALYTICS_EXPLAIN_COST_LIMIT (0.5)" in errors["c2"], errors["c2"]
    assert "the database rejected the SQL" in errors["c3"]
    assert "shop.orders(order_id, customer_id, ordered_on" in errors["c3"]
