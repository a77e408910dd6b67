"""Cross-encoder reranking (sentence-transformers `CrossEncoder`), scores in 0..1.

The model reads (query, passage) pairs jointly, which is more precise than comparing two separate
embeddings, and slower: it only sees the `RERANKER_FETCH_K` fused candidates. Scores go through a
sigmoid so that a grader can threshold them like the other 0..1 scores.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class RerankerError(RuntimeError):
    """The reranker model cannot be loaded; the message says how to fix it."""


class CrossEncoderReranker:
    """Score (query, passage) pairs with a cross-encoder; thread-safe, one model per instance."""

    def __init__(
        self,
        model: str,
        *,
        max_length: int = 512,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model = _load_cross_encoder(model, max_length=max_length, device=device)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance of each passage to `query`, 0..1 (sigmoid of the model's logit)."""
        if not passages:
            return []
        import torch

        pairs = [(query, passage) for passage in passages]
        with self._lock:
            raw: Any = self._model.predict(
                pairs,
                batch_size=self.batch_size,
                activation_fn=torch.nn.Sigmoid(),
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        values = raw.reshape(len(passages), -1)[:, 0] if getattr(raw, "ndim", 1) > 1 else raw
        return [float(v) for v in values]

    async def ascore(self, query: str, passages: Sequence[str]) -> list[float]:
        """`score` in a worker thread, so the event loop keeps serving."""
        return await asyncio.to_thread(self.score, query, passages)


def _load_cross_encoder(model: str, *, max_length: int, device: str) -> Any:
    from sentence_transformers import CrossEncoder

    local = Path(model).expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    try:
        if local.exists():
            return CrossEncoder(
                str(local), max_length=max_length, device=device, local_files_only=True
            )
        return CrossEncoder(model, max_length=max_length, device=device, local_files_only=offline)
    except Exception as exc:  # OSError, ValueError and hub errors, depending on the cause
        raise RerankerError(
            f"Cannot load the reranker model {model!r}: {exc}. Set RERANKER_MODEL to a local "
            "cross-encoder folder (or a hub name with downloads allowed), or set "
            "ENABLE_RERANKING=false."
        ) from exc


_CACHE: dict[tuple[str, int, str], CrossEncoderReranker] = {}
_CACHE_LOCK = threading.Lock()


def get_reranker(model: str, *, max_length: int = 512, device: str = "cpu") -> CrossEncoderReranker:
    """A cached reranker for `model` (loaded once per process)."""
    key = (model, max_length, device)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    made = CrossEncoderReranker(model, max_length=max_length, device=device)
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, made)
