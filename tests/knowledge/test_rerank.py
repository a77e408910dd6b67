"""Reranker loading and scoring on a tiny cross-encoder that the test builds (no downloads)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from config import Settings
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings
from tools.rerank import CrossEncoderReranker, RerankerError

WORDS = (
    "the a of to and is how do i cats sleep hours day keys rotate revoke backup restore "
    "database error upload size limit api every nightly"
).split()


def build_tiny_cross_encoder(path: Path, *, bias: float | None = None, seed: int = 0) -> Path:
    """A 1-layer BERT sequence classifier (num_labels=1) with a 40-word vocab, saved to `path`.

    With ``bias`` set, every weight of the classifier head is zero and its bias is ``bias``, so
    every pair must score exactly ``sigmoid(bias)``.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizer(vocab={word: i for i, word in enumerate(vocab)})
    assert tokenizer.tokenize("cats sleep") == ["cats", "sleep"], "the vocabulary is in use"
    torch.manual_seed(seed)
    shape: dict[str, Any] = dict(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.5,  # large random weights: pairs get clearly different scores
    )
    config = BertConfig(**shape)
    model = BertForSequenceClassification(config)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.fill_(bias)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-ce"))


def test_scores_are_sigmoid_probabilities(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "constant", bias=2.0)
    reranker = CrossEncoderReranker(str(model), max_length=64)
    scores = reranker.score("how do cats sleep", ["cats sleep every day", "rotate api keys"])
    assert scores == pytest.approx([1 / (1 + math.exp(-2.0))] * 2, abs=1e-5)
    assert reranker.score("anything", []) == []


async def test_scores_are_deterministic_and_per_pair(tiny_model: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_model), max_length=64)
    passages = ["cats sleep every day", "rotate api keys nightly", "restore the database"]
    first = reranker.score("how do i restore a backup", passages)
    assert len(first) == 3 and all(0.0 < s < 1.0 for s in first)
    assert len(set(first)) == 3, "different pairs get different scores"
    assert await reranker.ascore("how do i restore a backup", passages) == pytest.approx(first)


def test_missing_model_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(RerankerError, match="RERANKER_MODEL") as err:
        CrossEncoderReranker(str(tmp_path / "no-such-model"))
    assert "ENABLE_RERANKING=false" in str(err.value)


async def test_store_reranks_fetch_k_candidates_down_to_top_k(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    tiny_model: Path,
    corpus_dir: Path,
) -> None:
    settings = make_settings(
        enable_reranking=True, reranker_model=str(tiny_model), reranker_fetch_k=6,
        retrieval_top_k=2,
    )  # fmt: skip
    store = await KnowledgeStore.open(settings, embeddings=embedder, name="kb")
    try:
        await store.ingest_paths([corpus_dir])
        query = "how do i restore the database"
        plain = await store.search(query, rerank=False, top_k=6, fetch_k=6)
        reranked = await store.search(query)  # defaults: rerank on, fetch 6, top 2
        assert reranked.reranked and (reranked.fetch_k, reranked.top_k) == (6, 2)
        assert len(reranked.hits) == 2
        expected = CrossEncoderReranker(str(tiny_model), max_length=512).score(
            query, [f"{h.title}\n{h.text}" for h in plain.hits]
        )
        best = sorted(zip(expected, (h.chunk_id for h in plain.hits), strict=True), reverse=True)
        assert [h.chunk_id for h in reranked.hits] == [cid for _, cid in best[:2]]
        for hit in reranked.hits:
            assert hit.rerank_score is not None and hit.score == hit.rerank_score
        assert "rerank_ms" in reranked.timings_ms
    finally:
        await store.close()


async def test_store_with_unloadable_reranker_fails_with_the_fix(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    corpus_dir: Path,
    tmp_path: Path,
) -> None:
    settings = make_settings(enable_reranking=True, reranker_model=str(tmp_path / "missing"))
    store = await KnowledgeStore.open(settings, embeddings=embedder, name="kb")
    try:
        await store.ingest_paths([corpus_dir])
        with pytest.raises(RerankerError, match="RERANKER_MODEL"):
            await store.search("cats")
        assert (await store.search("cats", rerank=False)).hits
    finally:
        await store.close()
