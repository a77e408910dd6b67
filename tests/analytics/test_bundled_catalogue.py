"""The demo's hand-written semantic layer as an instance of the catalogue format: the generic
engine (`tools.analytics.ask`) over `bundled_catalogue()` gives the semantic layer's numbers."""

from __future__ import annotations

from datetime import date

import pytest
from psycopg_pool import AsyncConnectionPool

from tools.analytics import ask, semantic
from tools.analytics.bundled import bundled_catalogue
from tools.analytics.catalogue import METRICS
from tools.analytics.catalogue_file import Catalogue, dump_yaml
from tools.analytics.executor import run_readonly

TODAY = date(2026, 1, 1)
QUESTIONS = [
    "Revenue by region in 2025",
    "Damage rate by carrier in Q3 2025",
    "Units built by plant in 2024",
    "Top 5 dealers by revenue in 2025",
    "Average selling price by segment",
    "Monthly downtime in 2025",
    "Units sold in Q1 2025 vs Q1 2024",
    "Warranty attach rate by make",
    "Shipping cost per vehicle by transport mode",
    "Defect rate by country",
]


def test_every_metric_and_table_is_in_the_catalogue() -> None:
    cat = bundled_catalogue()
    assert {m.key for m in cat.metrics} == {m.key for m in METRICS}
    gap = next(m for m in cat.metrics if m.key == "gap_attach_pct")
    assert "s." not in gap.sql and "gap_sold" in gap.sql
    sales = cat.table("analytics.sales")
    assert sales is not None and sales.time_column == "sold_on"
    assert Catalogue.model_validate(cat.model_dump(by_alias=True)) == cat
    assert "region" in dump_yaml(cat)


@pytest.mark.parametrize("question", QUESTIONS)
async def test_the_generic_engine_gives_the_semantic_layers_numbers(
    reader_pool: AsyncConnectionPool, question: str
) -> None:
    mine = ask.generate(question, bundled_catalogue(), TODAY)
    theirs = semantic.generate(question, TODAY)
    assert mine.sql is not None and theirs.sql is not None, mine.message
    got = await run_readonly(reader_pool, mine.sql)
    want = await run_readonly(reader_pool, theirs.sql)
    assert got.rows == want.rows, (got.sql, want.sql)
