"""Chat routes analytics questions to the analytics agent, and keeps other agents' messages that
use business words (near misses) where they belong: the analytics rows (`analytics-*`) of the
routing bench's labeled set, `bench/data/routing.jsonl`, through the real router's keyword and
embedding tiers (the bundled model; no chat model, no stored data), with every shipped agent
registered. `python -m bench.routing` runs the whole set through every tier.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from config import Settings
from graph.routing import Router
from graph.workflow import build_registry
from tools.providers.embeddings import get_embeddings

ROWS = Path(__file__).resolve().parents[2] / "bench" / "data" / "routing.jsonl"


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    every = [json.loads(line) for line in ROWS.read_text().splitlines() if line.strip()]
    return [row for row in every if row["id"].startswith("analytics-")]


def test_the_labeled_rows_are_well_formed(rows: list[dict[str, Any]]) -> None:
    registry = build_registry()
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert row["expected"] in registry and row["text"].strip()
    analytics = [r for r in rows if r["expected"] == "analytics"]
    assert len(analytics) >= 30
    assert {r["split"] for r in analytics} == {"calibration", "test"}
    assert sum(r["expected"] != "analytics" for r in rows) >= 5  # near misses


def test_analytics_questions_route_to_the_analytics_agent(
    rows: list[dict[str, Any]], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings()
    model = get_embeddings(settings)
    router = Router(
        build_registry(),
        embeddings=lambda: model,
        llm=lambda: None,
        semantic_threshold=settings.routing.semantic_threshold,
        semantic_margin=settings.routing.semantic_margin,
    )
    wrong = []
    for row in rows:
        decision = asyncio.run(router.decide(row["text"]))
        if decision["agents"] != [row["expected"]]:
            wrong.append(f"{row['id']}: {decision['agents']} ({decision['method']}) {row['text']}")
    analytics = [r for r in rows if r["expected"] == "analytics"]
    misrouted = [w for w in wrong if "near-" not in w]
    accuracy = 1 - len(misrouted) / len(analytics)
    print(f"\nanalytics routing: {len(analytics) - len(misrouted)}/{len(analytics)} analytics rows")
    assert accuracy >= 0.95, "\n".join(wrong)
    assert not [w for w in wrong if "near-" in w], "\n".join(wrong)  # near misses stay put
