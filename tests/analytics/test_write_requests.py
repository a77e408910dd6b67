"""A request to change data is refused in words, on the demo and on a connected database, with
and without a model; questions about changes ("how many orders were deleted") are still asked.

The demo's answers go through the API on the seeded session database; the shop's through the
catalogue engine on its own database (tests/analytics/shop.py); nothing is ever written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg_pool import AsyncConnectionPool

from app.api import create_app
from config import Settings
from tests.analytics.questions import TODAY
from tests.analytics.shop import ShopDB, create_shop
from tests.support.scripted import ScriptedChatModel
from tools.analytics import ask, semantic
from tools.analytics.context import AnalyticsContext
from tools.analytics.executor import open_reader_pool
from tools.analytics.external import ExternalSource, open_source
from tools.analytics.guard import SQLRefused, WriteRefused, validate_sql
from tools.analytics.intent import write_request
from tools.analytics.sqlgen import generate_sql

READ_ONLY = "the analytics agent is read-only"

SHOP_WRITES = [
    "Delete all orders",
    "drop table orders",
    "DELETE FROM orders WHERE status = 'returned';",
    "Please update the status of order 5 to shipped",
    "Insert a new region called East",
    "TRUNCATE order_lines",
    "Can you remove all records from 2024?",
    "Show me the orders, then delete them",
    "alter table orders add column note text",
    "Create a new table for my notes",
    "grant select on orders to bob",
]
DEMO_WRITES = ["Delete all sales", "drop table sales", "Update the sale price of every sale to 0"]
#: Questions about data that happen to carry a write verb: answered, not refused.
NOT_WRITES = [
    "How many orders were deleted?",
    "Drop in sales by region in 2025",
    "Which products were dropped?",
    "Create a chart of sales by region",
    "Create a table of units sold by region",
    "Update frequency by month",
    "What was the drop off rate?",
    "Number of orders created in 2024",
    "Deleted orders by month",
    "Units built versus planned by plant in 2025",
    "Show me the biggest drop",
]


@pytest.mark.parametrize("question", SHOP_WRITES + DEMO_WRITES)
def test_write_requests_are_recognised(question: str) -> None:
    refusal = write_request(question)
    assert refusal is not None and READ_ONLY in refusal


@pytest.mark.parametrize("question", NOT_WRITES)
def test_questions_about_changes_are_not_write_requests(question: str) -> None:
    assert write_request(question) is None


def test_the_guards_refusal_of_a_write_says_the_agent_is_read_only() -> None:
    with pytest.raises(WriteRefused) as refused:
        validate_sql("TRUNCATE analytics.sales")
    message = str(refused.value)
    assert "a TRUNCATE statement (it would change data)" in message and READ_ONLY in message
    with pytest.raises(SQLRefused) as other:
        validate_sql("SELECT pg_sleep(1)")
    assert not isinstance(other.value, WriteRefused)


# --- the demo, through the API ------------------------------------------------------------------


@pytest.fixture
def api(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(rate_limit_per_minute=10_000))) as client:
        yield client


@pytest.mark.parametrize("question", DEMO_WRITES)
def test_the_demo_refuses_a_write_request_instead_of_counting(
    api: TestClient, question: str
) -> None:
    generation = semantic.generate(question, TODAY)
    assert generation.sql is None and READ_ONLY in generation.message
    response = api.post("/analytics/query", json={"question": question})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["sql"] is None and body["rows"] == [] and READ_ONLY in body["text"], body


# --- a connected database -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop(postgres_url: str) -> Iterator[ShopDB]:
    yield from create_shop(postgres_url)


@pytest.fixture
def source(shop: ShopDB, tmp_path: Path) -> ExternalSource:
    return open_source(shop.reader_url, ("shop",), tmp_path / "catalogue.yaml")


@pytest.fixture
async def pool(shop: ShopDB) -> AsyncIterator[AsyncConnectionPool]:
    pool = open_reader_pool(shop.reader_url, max_size=2)
    await pool.open()
    yield pool
    await pool.close()


def orders(shop: ShopDB) -> int:
    with psycopg.connect(shop.owner_url) as conn:
        row = conn.execute("SELECT count(*) FROM shop.orders").fetchone()
    return int(row[0]) if row else -1


@pytest.mark.parametrize("question", SHOP_WRITES)
def test_the_catalogue_engine_refuses_a_write_request(
    source: ExternalSource, question: str
) -> None:
    generation = ask.generate(question, source.catalogue, TODAY)
    assert generation.sql is None and READ_ONLY in generation.message


async def test_with_a_model_a_write_request_is_refused_before_the_model(
    shop: ShopDB, source: ExternalSource, pool: AsyncConnectionPool
) -> None:
    ctx = AnalyticsContext(pool=pool, scope=source.scope, catalogue=source.catalogue)
    model = ScriptedChatModel(script=[])
    generation = await generate_sql(
        "Delete all orders", TODAY, model,
        catalogue=source.catalogue, scope=source.scope, check=ctx.explain,
    )  # fmt: skip
    assert generation.sql is None and READ_ONLY in generation.message and model.calls == []
    # a write the question does not spell out: the model's DELETE is refused, neither retried
    # nor replaced by the catalogue's count of what the question named
    model = ScriptedChatModel(
        script=[{"sql": "DELETE FROM shop.orders WHERE status = 'returned'", "explanation": ""}]
    )
    generation = await generate_sql(
        "Tidy up the returned orders", TODAY, model,
        catalogue=source.catalogue, scope=source.scope, check=ctx.explain,
    )  # fmt: skip
    assert generation.sql is None and len(model.calls) == 1
    assert "a DELETE statement (it would change data)" in generation.message
    assert READ_ONLY in generation.message
    assert orders(shop) == 90


def test_a_connected_database_refuses_a_write_request_over_http(
    make_settings: Callable[..., Settings], shop: ShopDB, tmp_path: Path
) -> None:
    settings = make_settings(
        analytics_database_url=shop.reader_url,
        analytics_schemas="shop",
        analytics_catalogue_path=str(tmp_path / "cat.yaml"),
    )
    with TestClient(create_app(settings)) as api:
        for question in ("Delete all orders", "drop table orders"):
            body = api.post("/analytics/query", json={"question": question}).json()
            assert body["sql"] is None and READ_ONLY in body["text"], body
        answered = api.post("/analytics/query", json={"question": "How many orders are there?"})
        assert answered.json()["rows"] == [[90]]
    assert orders(shop) == 90
