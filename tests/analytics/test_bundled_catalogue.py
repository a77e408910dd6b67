"""The demo's hand-written semantic layer as an instance of the catalogue format: the generic
engine (`tools.analytics.ask`) over `bundled_catalogue()` gives the semantic layer's numbers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg_pool import AsyncConnectionPool

from app.api import create_app
from app.components.analytics import catalogue_command
from config import Settings
from tools.analytics import ask, semantic
from tools.analytics.bundled import bundled_catalogue
from tools.analytics.catalogue import (
    DEMO_LAYER,
    DIMENSIONS,
    FACTS,
    METRICS,
    demo_catalogue,
    demo_layer,
    layer_from,
)
from tools.analytics.catalogue_file import Catalogue, dump_yaml
from tools.analytics.executor import _json_value, run_readonly
from tools.analytics.reference import (
    CARRIERS,
    MAKES,
    MODELS,
    PLANTS,
    REGIONS,
    SEGMENTS,
    STATE_NAMES,
    TRANSPORT_MODES,
    dealer_names,
)
from tools.analytics.schema import SCHEMA, TABLES

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


# --- the catalogue file is the semantic layer's source ------------------------------------------


def test_the_demo_file_describes_the_schema_it_ships_with() -> None:
    """demo_catalogue.yaml and tools.analytics.schema (the DDL) name the same tables, columns,
    types, keys and foreign keys: the file cannot drift from the data."""
    cat = demo_catalogue()
    assert sorted(t.name for t in cat.tables) == sorted(t.name for t in TABLES)
    for table in TABLES:
        entry = cat.table(f"{SCHEMA}.{table.name}")
        assert entry is not None
        assert sorted((c.name, c.type) for c in entry.columns) == sorted(
            (c.name, c.type.replace(" NOT NULL", "")) for c in table.columns
        ), table.name
        assert entry.primary_key == list(table.primary_key)
        assert sorted((fk.columns[0], fk.references, fk.referenced_columns[0])
                      for fk in entry.foreign_keys) == sorted(
            (c, f"{SCHEMA}.{t}", rc) for c, t, rc in table.foreign_keys)  # fmt: skip


def test_the_demo_files_values_are_the_datasets() -> None:
    """The values questions can filter by are the reference data the seed generates rows from."""
    dims = {d.key: d for d in DIMENSIONS}
    assert dims["region"].values == REGIONS
    assert dims["state"].values == tuple(STATE_NAMES)
    assert dims["dealer"].values == tuple(d[1] for d in dealer_names())
    assert dims["make"].values == tuple(MAKES)
    assert dims["model"].values == tuple(m.model for m in MODELS)
    assert dims["segment"].values == SEGMENTS
    assert dims["plant"].values == tuple(p.name for p in PLANTS)
    assert dims["carrier"].values == tuple(c.name for c in CARRIERS)
    assert dims["transport_mode"].values == TRANSPORT_MODES
    assert {c.short.lower(): c.name for c in CARRIERS}.items() <= dims[
        "carrier"
    ].value_aliases.items()
    assert {p.short.lower(): p.name for p in PLANTS}.items() <= dims["plant"].value_aliases.items()
    states = {name.lower(): code for code, name in STATE_NAMES.items()}
    assert dims["state"].value_aliases == states


def test_the_semantic_layer_is_read_from_the_file() -> None:
    """Facts, joins along the file's foreign keys, metrics with their parts, dimensions in the
    file's order: what the semantic engine answers from."""
    layer = layer_from(demo_catalogue())
    assert layer.metrics == METRICS and layer.dimensions == DIMENSIONS and layer.facts == FACTS
    assert list(FACTS) == ["sales", "production", "shipments"]
    assert FACTS["sales"].joins == {
        "dealers": "JOIN analytics.dealers AS d ON d.dealer_id = s.dealer_id",
        "vehicles": "JOIN analytics.vehicles AS v ON v.vin = s.vin",
        "plants": "JOIN analytics.plants AS p ON p.plant_id = v.plant_id",
    }
    assert FACTS["shipments"].date_column == "sh.shipped_on"
    assert FACTS["shipments"].date_label == "ship date"
    plant = next(d for d in DIMENSIONS if d.key == "plant")
    assert plant.joins == {"sales": ("vehicles", "plants"), "production": ("plants",),
                           "shipments": ("plants",)}  # fmt: skip
    gap = next(m for m in METRICS if m.key == "gap_attach_financed_pct")
    assert gap.numerator == "SUM(CASE WHEN s.gap_sold THEN 1 ELSE 0 END)"
    assert gap.denominator == "SUM(CASE WHEN s.financed THEN 1 ELSE 0 END)" and gap.scale == 100
    assert [d.key for d in DIMENSIONS] == ["region", "state", "dealer", "make", "model",
                                           "segment", "plant", "country", "carrier",
                                           "transport_mode"]  # fmt: skip


# --- an operator's edits laid over the demo's file ----------------------------------------------

DEMO_EDITS = """\
tables:
  - name: analytics.shipments
    columns:
      - name: carrier
        synonyms: [carrier, carriers, trucking company, trucking companies]
  - name: analytics.dealers
    columns:
      - name: name
        hidden: true
metrics:
  - key: damaged_units
    label: Damaged units
    table: analytics.shipments
    numerator: SUM(CASE WHEN damaged THEN 1 ELSE 0 END)
    synonyms: [damaged units, vehicles damaged]
"""
EDITED_QUESTION = "Damaged units by trucking company in 2025"
EDITED_SQL = (
    "SELECT carrier, SUM(CASE WHEN damaged THEN 1 ELSE 0 END) FROM analytics.shipments "
    "WHERE shipped_on >= DATE '2025-01-01' AND shipped_on < DATE '2026-01-01' GROUP BY carrier"
)


async def test_an_operators_edits_change_the_demos_answers(
    tmp_path: Path, reader_pool: AsyncConnectionPool, owner: psycopg.Connection
) -> None:
    assert semantic.generate(EDITED_QUESTION, TODAY).sql is None  # the shipped words
    path = tmp_path / "demo.edits.yaml"
    path.write_text(DEMO_EDITS, encoding="utf-8")
    layer = demo_layer(path)
    generation = semantic.generate(EDITED_QUESTION, TODAY, layer)
    assert generation.sql is not None, generation.message
    got = await run_readonly(reader_pool, generation.sql)
    want = [[_json_value(v) for v in row] for row in owner.execute(EDITED_SQL).fetchall()]
    assert sorted(got.rows) == sorted(want) and len(want) == 5
    hidden = semantic.generate("Revenue by dealer in 2025", TODAY, layer)
    assert hidden.sql is None and "break results down by 'dealer'" in hidden.message
    assert semantic.generate("Revenue by dealer in 2025", TODAY).sql is not None
    assert demo_layer(tmp_path / "absent.yaml") is DEMO_LAYER


def test_the_app_lays_the_demo_edits_over_its_file(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    (tmp_path / "demo.edits.yaml").write_text(DEMO_EDITS, encoding="utf-8")
    settings = make_settings(analytics_catalogue_path=str(tmp_path / "catalogue.yaml"))
    with TestClient(create_app(settings)) as api:
        body = api.post("/analytics/query", json={"question": EDITED_QUESTION}).json()
        assert body["sql"] is not None and body["row_count"] == 5, body
        assert body["columns"] == ["carrier", "damaged_units"]
    assert catalogue_command(settings) == 0
    exported = (tmp_path / "demo.catalogue.yaml").read_text(encoding="utf-8")
    assert "damaged_units" in exported and "trucking company" in exported
    (tmp_path / "demo.edits.yaml").write_text("tables:\n  - name: nowhere\n", encoding="utf-8")
    assert catalogue_command(settings) == 3  # a wrong edit is named, not ignored
