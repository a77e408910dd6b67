"""The dense leg and the document registry, both in Qdrant.

Two collections per knowledge base:

- ``<name>_chunks``: one point per chunk with the NAMED dense vector ``dense`` (dot product of
  unit vectors = cosine) and the payload ``document_id, version, title, source, external_id,
  chunk_index, heading, start, end, text``. ``version`` is the content hash of the document the
  chunk was cut from, so a replace can write the new version next to the old one and drop the
  old one only afterwards.
- ``<name>_documents``: the registry, one vector-less point per document (id = document id) with
  ``title, source, external_id, version, signature, chunk_count, created_at, updated_at``.
  The registry row is written after the chunks: it is the commit point of an ingestion.

Local mode (``QDRANT_URL`` unset) keeps everything under ``DATA_DIR/qdrant``; its client is not
thread-safe, so calls are serialised by a lock here. Blocking calls; the store runs them in
worker threads.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

try:  # a scoped BLAS thread limit; see VectorIndex._blas_limit
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - optional: without it searches just use numpy's default
    ThreadpoolController = None

DENSE = "dense"


class VectorStoreError(RuntimeError):
    """Qdrant is unreachable or the collection does not fit; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class DenseHit:
    """A ranked dense match (rank is 1-based, score is the cosine similarity)."""

    chunk_id: str
    document_id: str
    score: float
    rank: int


def connect_qdrant(url: str | None, api_key: str | None, path: Path) -> QdrantClient:
    """A client for the Qdrant server at `url`, or local mode under `path` when `url` is None."""
    if url is None:
        path.mkdir(parents=True, exist_ok=True)
        try:
            return QdrantClient(path=str(path), force_disable_check_same_thread=True)
        except RuntimeError as exc:  # "Storage folder ... is already accessed by another instance"
            raise VectorStoreError(
                f"Qdrant local storage at {path} is already open ({exc}). Local mode allows one "
                "client per folder: share one client in this process (KnowledgeStore("
                "qdrant_client=...)), stop the other process, or set QDRANT_URL to a Qdrant "
                "server that several processes can share"
            ) from exc
    client = QdrantClient(url=url, api_key=api_key, timeout=30)
    try:
        client.get_collections()
    except Exception as exc:  # connection errors come in several types across transports
        raise VectorStoreError(
            f"Qdrant at {url} is not answering ({exc}); start it or fix QDRANT_URL "
            "(unset it to use the embedded local mode)"
        ) from exc
    return client


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


class VectorIndex:
    """Chunk vectors and the document registry of one knowledge base in Qdrant."""

    def __init__(self, client: QdrantClient, name: str, dimension: int, *, model: str = "") -> None:
        self.client = client
        self.model = model
        self.chunks = f"{name}_chunks"
        self.documents = f"{name}_documents"
        self.dimension = dimension
        self.local = type(client._client).__name__ == "QdrantLocal"
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if self.local else contextlib.nullcontext()
        )
        self._ensure_collections()
        if self.local:
            self._tune_local_storage()
        self._blas = ThreadpoolController() if self.local and ThreadpoolController else None

    def _blas_limit(self) -> contextlib.AbstractContextManager[Any]:
        """Local mode scores every vector with one numpy mat-vec product. OpenBLAS splits that
        over all cores and, on a busy 2-core machine, its spinning threads made a 1.5 ms product
        take 20-30 ms; one thread is as fast when idle and stable under load."""
        if self._blas is None:
            return contextlib.nullcontext()
        return self._blas.limit(limits=1, user_api="blas")

    def _tune_local_storage(self) -> None:
        """Local mode commits (and fsyncs) its SQLite file once per point: ~7 ms each, 60 s for
        9k chunks. WAL with synchronous=NORMAL keeps every commit atomic and ordered (a crash
        loses at most the last commits, never half of one) without an fsync per point. Reaches
        into qdrant-client internals, so it is best-effort: if they change, nothing breaks,
        ingestion is only slower."""
        collections = getattr(self.client._client, "collections", {})
        for name in (self.chunks, self.documents):
            conn = getattr(getattr(collections.get(name), "storage", None), "storage", None)
            if conn is None:
                continue
            with contextlib.suppress(Exception):
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")

    def _ensure_collections(self) -> None:
        with self._lock:
            if self.client.collection_exists(self.chunks):
                config = self.client.get_collection(self.chunks).config
                built_with = (config.metadata or {}).get("embedding_model")
                if self.model and built_with and built_with != self.model:
                    # Same size is not enough: vectors of two models are not comparable.
                    raise VectorStoreError(
                        f"Qdrant collection {self.chunks!r} was built with the embedding model "
                        f"{built_with!r}, not {self.model!r}: set EMBEDDING_MODEL back, or use "
                        "another knowledge-base name for the new model and re-ingest"
                    )
                vectors = config.params.vectors
                params = vectors.get(DENSE) if isinstance(vectors, Mapping) else None
                if params is None or params.size != self.dimension:
                    found = params.size if params is not None else "no 'dense' vector"
                    raise VectorStoreError(
                        f"Qdrant collection {self.chunks!r} holds vectors of size {found}, the "
                        f"embedding model gives {self.dimension}: use another knowledge-base "
                        "name for this model, or delete the collection and re-ingest"
                    )
            else:
                self.client.create_collection(
                    self.chunks,
                    vectors_config={
                        # The embedder returns unit vectors, so DOT is the cosine similarity;
                        # local-mode COSINE would re-normalise every stored vector per query.
                        DENSE: models.VectorParams(
                            size=self.dimension, distance=models.Distance.DOT
                        )
                    },
                    metadata={"embedding_model": self.model} if self.model else None,
                )
                if not self.local:  # payload indexes only exist on a server
                    for key in ("document_id", "version"):
                        self.client.create_payload_index(
                            self.chunks, key, models.PayloadSchemaType.KEYWORD
                        )
            if not self.client.collection_exists(self.documents):
                self.client.create_collection(self.documents, vectors_config={})

    # --- chunks --------------------------------------------------------------------------

    def upsert_chunks(
        self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict[str, Any]]
    ) -> None:
        """Store chunk points (batched; ``vectors`` rows align with ``ids``)."""
        if not ids:
            return
        step = 256
        with self._lock:
            for i in range(0, len(ids), step):
                self.client.upsert(
                    self.chunks,
                    points=models.Batch(
                        ids=list(ids[i : i + step]),
                        vectors={DENSE: vectors[i : i + step].tolist()},
                        payloads=list(payloads[i : i + step]),
                    ),
                    wait=True,
                )

    def search(self, vector: Sequence[float] | np.ndarray, limit: int) -> list[DenseHit]:
        """The `limit` nearest chunks by cosine similarity."""
        if limit <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).tolist()
        with self._lock, self._blas_limit():
            response = self.client.query_points(
                self.chunks, query=query, using=DENSE, limit=limit, with_payload=["document_id"]
            )
        return [
            DenseHit(str(p.id), str((p.payload or {}).get("document_id", "")), float(p.score), r)
            for r, p in enumerate(response.points, start=1)
        ]

    def fetch_chunks(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Payload of each existing chunk id."""
        if not ids:
            return {}
        with self._lock:
            records = self.client.retrieve(
                self.chunks, ids=list(ids), with_payload=True, with_vectors=False
            )
        return {str(rec.id): dict(rec.payload or {}) for rec in records}

    def fetch_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Dense vector of each existing chunk id."""
        if not ids:
            return {}
        with self._lock:
            records = self.client.retrieve(
                self.chunks, ids=list(ids), with_payload=False, with_vectors=[DENSE]
            )
        out: dict[str, np.ndarray] = {}
        for rec in records:
            vec = rec.vector.get(DENSE) if isinstance(rec.vector, dict) else None
            if vec is not None:
                out[str(rec.id)] = np.asarray(vec, dtype=np.float32)
        return out

    def iter_chunks(self, document_id: str | None = None, batch: int = 512) -> Iterator[Any]:
        """Every chunk record (payload only), optionally of one document."""
        flt = models.Filter(must=[_match("document_id", document_id)]) if document_id else None
        offset: Any = None
        while True:
            with self._lock:
                records, offset = self.client.scroll(
                    self.chunks, scroll_filter=flt, limit=batch, offset=offset, with_payload=True
                )
            yield from records
            if offset is None:
                return

    def count_chunks(self) -> int:
        """Number of stored chunks."""
        with self._lock:
            return int(self.client.count(self.chunks, exact=True).count)

    def delete_document_chunks(self, document_id: str) -> None:
        """Remove every chunk of a document."""
        self._delete(models.Filter(must=[_match("document_id", document_id)]))

    def delete_other_versions(self, document_id: str, version: str) -> None:
        """Remove a document's chunks that are not of `version` (after a replace)."""
        self._delete(
            models.Filter(
                must=[_match("document_id", document_id)],
                must_not=[_match("version", version)],
            )
        )

    def delete_version(self, document_id: str, version: str) -> None:
        """Remove one version's chunks (rollback of a failed replace)."""
        self._delete(
            models.Filter(must=[_match("document_id", document_id), _match("version", version)])
        )

    def _delete(self, flt: models.Filter) -> None:
        with self._lock:
            self.client.delete(
                self.chunks, points_selector=models.FilterSelector(filter=flt), wait=True
            )

    # --- registry ------------------------------------------------------------------------

    def get_documents(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Registry rows of the given document ids that exist."""
        if not ids:
            return {}
        out: dict[str, dict[str, Any]] = {}
        with self._lock:
            for i in range(0, len(ids), 1000):
                for rec in self.client.retrieve(
                    self.documents, ids=list(ids[i : i + 1000]), with_payload=True
                ):
                    out[str(rec.id)] = dict(rec.payload or {})
        return out

    def upsert_documents(self, rows: Mapping[str, dict[str, Any]]) -> None:
        """Write registry rows (``document_id -> payload``)."""
        if not rows:
            return
        points = [
            models.PointStruct(id=doc_id, vector={}, payload=row) for doc_id, row in rows.items()
        ]
        with self._lock:
            for i in range(0, len(points), 512):
                self.client.upsert(self.documents, points=points[i : i + 512], wait=True)

    def delete_document_row(self, document_id: str) -> None:
        """Remove a registry row."""
        with self._lock:
            self.client.delete(
                self.documents,
                points_selector=models.PointIdsList(points=[document_id]),
                wait=True,
            )

    def iter_documents(self, batch: int = 512) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every registry row as ``(document_id, payload)``."""
        offset: Any = None
        while True:
            with self._lock:
                records, offset = self.client.scroll(
                    self.documents, limit=batch, offset=offset, with_payload=True
                )
            for rec in records:
                yield str(rec.id), dict(rec.payload or {})
            if offset is None:
                return

    def count_documents(self) -> int:
        """Number of registered documents."""
        with self._lock:
            return int(self.client.count(self.documents, exact=True).count)

    def close(self) -> None:
        """Close the client (local mode releases its storage lock)."""
        with self._lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.client.close()
