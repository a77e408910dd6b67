"""nDCG@10 / Recall@100 against hand-computed values, and the BEIR readers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tools.knowledge.metrics import (
    dedupe,
    evaluate,
    ndcg_at_k,
    read_qrels,
    read_queries,
    recall_at_k,
)


def test_ndcg_hand_computed() -> None:
    # Relevant: d1 (grade 2), d2 (grade 1). Ranking: x, d2, d1.
    # DCG  = 0/log2(2) + 1/log2(3) + 2/log2(4) = 0.63093 + 1.0 = 1.63093
    # IDCG = 2/log2(2) + 1/log2(3)             = 2.0 + 0.63093 = 2.63093
    judgements = {"d1": 2, "d2": 1}
    expected = (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "d2", "d1"], judgements, k=10) == pytest.approx(expected)
    assert expected == pytest.approx(0.61991, abs=1e-5)
    assert ndcg_at_k(["d1", "d2"], judgements) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "d2", "d1"], judgements, k=1) == 0.0
    assert ndcg_at_k(["x"], {"d": 0}) == 0.0


def test_recall_hand_computed() -> None:
    judgements = {"a": 1, "b": 1, "c": 1, "z": 0}
    assert recall_at_k(["a", "x", "c"], judgements, k=100) == pytest.approx(2 / 3)
    assert recall_at_k(["a", "x", "c"], judgements, k=2) == pytest.approx(1 / 3)


def test_evaluate_dedupes_chunks_and_skips_unjudged_queries() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}}
    run = {"q1": ["d9", "d9", "d1"], "q2": ["q2", "d2"]}
    scores = evaluate(run, qrels)
    # q1: d9 twice counts once, d1 at rank 2 -> 1/log2(3); q2: the result equal to the query id
    # is ignored (BEIR default), d2 is then first -> 1.0. q3 has nothing relevant: left out.
    assert scores["queries"] == 2
    assert scores["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1.0) / 2)
    assert scores["recall@100"] == 1.0
    assert dedupe(["a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_beir_readers(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"_id": "1", "text": "first?", "metadata": {}}) + "\n\n"
    )
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n1\tA\t1\n1\tB\t2\n")
    assert read_queries(tmp_path / "q.jsonl") == {"1": "first?"}
    assert read_qrels(tmp_path / "qrels.tsv") == {"1": {"A": 1, "B": 2}}
