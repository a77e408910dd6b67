"""Weighted RRF math, and the lambda extremes on the real store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.hybrid import weighted_rrf
from tools.knowledge.analysis import analyze
from tools.knowledge.scope import OPERATOR
from tools.knowledge.store import KnowledgeStore


def test_rrf_matches_a_hand_computed_example() -> None:
    fused = weighted_rrf(["a", "b", "c"], ["c", "a", "d"], lambda_mult=0.5, k=60)
    assert [f.key for f in fused] == ["a", "c", "b", "d"]
    a, c, b, d = fused
    assert a.rrf == pytest.approx(0.5 / 61 + 0.5 / 62)
    assert c.rrf == pytest.approx(0.5 / 63 + 0.5 / 61)
    assert b.rrf == pytest.approx(0.5 / 62) and (b.dense_rank, b.lexical_rank) == (2, None)
    assert d.rrf == pytest.approx(0.5 / 63) and (d.dense_rank, d.lexical_rank) == (None, 3)
    assert a.normalised == pytest.approx((0.5 / 61 + 0.5 / 62) * 61)


def test_weights_shift_the_order_towards_the_heavier_leg() -> None:
    dense, lexical = ["x", "y"], ["y", "x"]
    assert [f.key for f in weighted_rrf(dense, lexical, lambda_mult=0.8)] == ["x", "y"]
    assert [f.key for f in weighted_rrf(dense, lexical, lambda_mult=0.2)] == ["y", "x"]


def test_k_is_the_rrf_constant() -> None:
    # One leg's first place beats fifth place in both legs when k = 2 (Qdrant's default),
    # but not when k = 60: a larger k flattens the head of each list.
    dense = ["solo", "d2", "d3", "d4", "both"]
    lexical = ["other", "l2", "l3", "l4", "both"]
    assert weighted_rrf(dense, lexical, lambda_mult=0.5, k=2)[0].key == "solo"
    assert weighted_rrf(dense, lexical, lambda_mult=0.5, k=60)[0].key == "both"


@given(
    dense=st.lists(st.integers(0, 30), max_size=25),
    lexical=st.lists(st.integers(0, 30), max_size=25),
    lam=st.floats(0, 1),
    k=st.integers(1, 200),
)
def test_fusion_invariants(dense: list[int], lexical: list[int], lam: float, k: int) -> None:
    fused = weighted_rrf(dense, lexical, lambda_mult=lam, k=k)
    scores = [f.rrf for f in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= f.normalised <= 1.0 + 1e-12 for f in fused)
    if lam == 0.0:
        assert [f.key for f in fused] == list(dict.fromkeys(lexical))
    if lam == 1.0:
        assert [f.key for f in fused] == list(dict.fromkeys(dense))
    if dense and lexical and dense[0] == lexical[0] and 0 < lam < 1:
        assert fused[0].key == dense[0] and fused[0].normalised == pytest.approx(1.0)


def test_lambda_outside_0_1_is_rejected() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        weighted_rrf(["a"], ["a"], lambda_mult=1.5)


async def test_lambda_extremes_are_the_pure_legs_on_the_store(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    query = "how do I restore the database from a backup?"
    lexical_only = await store.search(query, lambda_mult=0.0, top_k=20, fetch_k=20)
    assert [h.chunk_id for h in lexical_only.hits] == [
        h.chunk_id for h in store.engine.lexical(store.target(OPERATOR), analyze(query), 20)
    ]
    assert all(h.dense_rank is None and h.lexical_rank == h.rank for h in lexical_only.hits)

    dense_only = await store.search(query, lambda_mult=1.0, top_k=20, fetch_k=20)
    qvec = np.asarray(store.embeddings.embed_query(query), dtype=np.float32)
    assert [h.chunk_id for h in dense_only.hits] == [
        h.chunk_id for h in store.engine.dense(store.target(OPERATOR), qvec, 20)
    ]
    assert all(h.lexical_rank is None and h.dense_rank == h.rank for h in dense_only.hits)
    assert "lexical_ms" in lexical_only.timings_ms and "embed_ms" in dense_only.timings_ms


async def test_hybrid_hits_carry_per_leg_evidence_and_bounded_scores(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    result = await store.search("keyctl revoke a leaked key", lambda_mult=0.5, top_k=4)
    top = result.hits[0]
    assert top.title == "Rotating API keys"
    assert top.dense_rank is not None and top.lexical_rank is not None
    assert top.lexical_score is not None and top.dense_score is not None
    assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    for hit in result.hits:
        assert 0.0 <= hit.fused_score <= 1.0 and 0.0 <= hit.score <= 1.0
        assert hit.relevance is not None and hit.score == hit.relevance
    unrelated = await store.search("quantum chromodynamics gluon", lambda_mult=0.5, top_k=4)
    assert max(h.score for h in unrelated.hits) < top.score
    distinct = await store.search("keys", lambda_mult=0.5, top_k=4, distinct_documents=True)
    assert len({h.document_id for h in distinct.hits}) == len(distinct.hits)


async def test_bad_search_arguments_name_the_fix(store: KnowledgeStore) -> None:
    with pytest.raises(ValueError, match="query is empty"):
        await store.search("   ")
    with pytest.raises(ValueError, match="between 0 and 1"):
        await store.search("x", lambda_mult=-0.1)
    with pytest.raises(ValueError, match="top_k and fetch_k must be >= 1"):
        await store.search("x", top_k=0)


async def test_hybrid_head_is_reranked_by_relevance_and_the_tail_keeps_rrf_order(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    query = "restore a revoked key from backup"
    plain = await store.search(query, lambda_mult=0.5, top_k=8, fetch_k=8, score_rerank=False)
    assert plain.ordering == "rrf"
    assert [h.rrf_score for h in plain.hits] == sorted(
        (h.rrf_score for h in plain.hits), reverse=True
    )
    ranked = await store.search(query, lambda_mult=0.5, top_k=8, fetch_k=5)
    assert ranked.ordering == "relevance"
    head, tail = ranked.hits[:5], ranked.hits[5:]
    assert {h.chunk_id for h in head} == {h.chunk_id for h in plain.hits[:5]}
    assert [h.relevance for h in head] == sorted((h.relevance or 0.0 for h in head), reverse=True)
    assert [h.chunk_id for h in tail] == [h.chunk_id for h in plain.hits[5:8]]
    assert all(h.relevance is None and h.score == 0.0 for h in tail)
    extreme = await store.search(query, lambda_mult=1.0, top_k=5, fetch_k=5)
    assert extreme.ordering == "rrf", "a single leg keeps its own order"
