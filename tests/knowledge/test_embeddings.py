"""The embedding factory: bundled model offline, unit vectors, caching, non-blocking async."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from config import load_settings
from tools.providers.embeddings import (
    EmbeddingError,
    NormalizedEmbeddings,
    SentenceTransformerEmbeddings,
    embed_matrix,
    get_embeddings,
)


def test_bundled_model_gives_unit_vectors_and_sensible_similarity(
    embedder: SentenceTransformerEmbeddings,
) -> None:
    docs = embedder.embed_documents(["The cat sleeps on the sofa.", "Quarterly revenue grew."])
    query = np.asarray(embedder.embed_query("Where is the cat napping?"))
    matrix = np.asarray(docs)
    assert matrix.shape == (2, embedder.dimension) and embedder.dimension == 384
    assert np.linalg.norm(matrix, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert float(matrix[0] @ query) > float(matrix[1] @ query) + 0.2


def test_factory_is_cached_per_provider_and_model(embedder: SentenceTransformerEmbeddings) -> None:
    settings = load_settings(embedding_provider="sentence-transformers")
    first = get_embeddings(settings)
    assert get_embeddings(load_settings(embedding_provider="sentence-transformers")) is first
    assert isinstance(first, SentenceTransformerEmbeddings)
    assert first.batch_size == settings.embeddings.batch_size


def test_unknown_local_model_error_names_the_setting(tmp_path: Any) -> None:
    with pytest.raises(EmbeddingError, match="EMBEDDING_MODEL"):
        SentenceTransformerEmbeddings(str(tmp_path / "no-model-here"))


async def test_async_embedding_does_not_block_the_event_loop(
    embedder: SentenceTransformerEmbeddings,
) -> None:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)  # a heartbeat: counts loop turns during the embedding

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    vectors = await embedder.aembed_documents([f"sentence number {i} " * 20 for i in range(64)])
    elapsed = time.perf_counter() - started
    stop.set()
    await task
    assert len(vectors) == 64
    assert ticks >= max(2, int(elapsed / 0.005) // 4), (ticks, elapsed)


class Raw(Embeddings):
    """A provider that returns unnormalised vectors and records its batch sizes."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        return [[3.0, 4.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [0.0, 2.0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


async def test_wrapped_provider_is_batched_and_normalised() -> None:
    raw = Raw()
    wrapped = NormalizedEmbeddings(raw, batch_size=2)
    assert np.asarray(wrapped.embed_documents(["a", "b", "c"])) == pytest.approx(
        np.asarray([[0.6, 0.8]] * 3)
    )
    assert raw.batches == [2, 1]
    assert await wrapped.aembed_query("q") == pytest.approx([0.0, 1.0])
    assert (await wrapped.aembed_documents(["a"]))[0] == pytest.approx([0.6, 0.8])
    assert wrapped.dimension == 2
    assert embed_matrix(wrapped, ["x"]).dtype == np.float32


def test_ollama_provider_builds_a_normalising_ollama_client() -> None:
    settings = load_settings(
        embedding_provider="ollama", embedding_model="nomic-embed-text",
        ollama_base_url="http://127.0.0.1:9",
    )  # fmt: skip
    made = get_embeddings(settings)
    assert isinstance(made, NormalizedEmbeddings)
    assert type(made.inner).__name__ == "OllamaEmbeddings"
    assert made.inner.model == "nomic-embed-text"  # type: ignore[attr-defined]


def test_small_inputs_run_on_one_thread_and_restore_the_setting(
    embedder: SentenceTransformerEmbeddings,
) -> None:
    import torch

    before = torch.get_num_threads()
    embedder.embed_query("a short query")
    embedder.embed_documents([f"text {i}" for i in range(10)])
    assert torch.get_num_threads() == before


async def test_one_text_is_embedded_once_by_concurrent_callers(
    embedder: SentenceTransformerEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The router and every data probe embed the same message: one model call serves them."""
    calls: list[list[str]] = []
    encode = embedder._model.encode

    def counting(texts: list[str], **kwargs: Any) -> Any:
        calls.append(list(texts))
        return encode(texts, **kwargs)

    monkeypatch.setattr(embedder._model, "encode", counting)
    text = f"a message asked once {time.time_ns()}"
    vectors = await asyncio.gather(*(embedder.aembed_query(text) for _ in range(5)))
    assert calls == [[text]]
    assert all(v == vectors[0] for v in vectors)
    assert embed_matrix(embedder, [text])[0].tolist() == pytest.approx(vectors[0])
    embedder.embed_documents([text, "another text"])  # batches are computed, not cached
    assert calls[-1] == [text, "another text"]


def test_the_query_cache_is_bounded() -> None:
    from tools.providers.embeddings import QueryCache

    cache = QueryCache(size=2)
    for i in range(3):
        cache.put(str(i), np.full(2, i, dtype=np.float32))
    assert cache.get("0") is None and cache.get("2") is not None
