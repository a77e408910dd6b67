"""The routing bench's labeled set is well-formed, and the bench runs end to end on a sample."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import pytest

from bench.routing import (
    DEFAULT_DATA,
    DEFAULT_FROZEN,
    DEFAULT_HANDBOOK,
    HELD_OUT,
    SPLITS,
    labeled_sets,
    load_rows,
    main,
)
from graph.workflow import build_registry


def test_the_labeled_set_covers_every_agent_in_both_splits() -> None:
    rows = load_rows(DEFAULT_DATA)
    assert len(rows) >= 60
    registered = set(build_registry().names)
    counts = Counter((agent, r.split) for r in rows for agent in r.expected)
    for agent in registered:
        assert all(counts[(agent, split)] >= 5 for split in SPLITS), (agent, counts)
    kinds = {r.kind for r in rows}
    assert {"greeting-smalltalk-general", "explicit-document-question",
            "implicit-document-question", "test-code"} <= kinds  # fmt: skip


def test_a_malformed_row_names_its_line(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": "a", "text": "hi", "expected": "chat", "kind": "k", "split": "x"}\n')
    with pytest.raises(SystemExit, match="rows.jsonl:1: split must be one of"):
        load_rows(data)


def test_the_bench_routes_a_sample_and_skips_agents_not_registered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        ("c1", "hello", "chat", "calibration"),
        ("c2", "Tell me a joke.", "chat", "test"),
        ("k1", "How do I restart the payments worker?", "knowledge", "calibration"),
        ("k2", "What is the hotel cap in North America?", "knowledge", "test"),
        ("x1", "Will it rain in Lisbon tomorrow?", "weather", "test"),  # no such agent
    ]
    data = tmp_path / "sample.jsonl"
    data.write_text("".join(
        json.dumps({"id": i, "text": t, "expected": e, "kind": "sample", "split": s}) + "\n"
        for i, t, e, s in rows
    ))  # fmt: skip
    assert main(["--data", str(data), "--json"]) == 0
    out = capsys.readouterr().out
    assert "skipped rows (agent not registered): weather 1" in out
    assert "accuracy (all)            1.000  (4/4)" in out
    figures = json.loads(out[out.index("\n{\n") :])
    assert figures["per_agent"]["knowledge"]["recall"] == 1.0
    assert figures["methods"]["data"] == 2


def test_the_frozen_independent_set_loads_with_its_data() -> None:
    rows = load_rows(DEFAULT_FROZEN / "messages.jsonl")
    splits = Counter(r.split for r in rows)
    assert splits["frozen"] >= 150 and splits["calibration"] > 0 and "frozen" in HELD_OUT
    args = argparse.Namespace(data=None, handbook=DEFAULT_HANDBOOK, frozen=None, no_frozen=False)
    own, frozen = labeled_sets(args)
    assert frozen.personal == DEFAULT_FROZEN / "personal.json" and frozen.handbook.is_dir()
    assert own.personal is None
