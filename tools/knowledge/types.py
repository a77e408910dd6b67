"""Value types of the knowledge base: registry rows, ingestion reports, progress, search hits.

All are plain dataclasses with `to_dict()` so the REST layer can return them as JSON and the graph
state can hold them without custom serialisers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DocumentStatus = Literal["added", "replaced", "unchanged", "error"]
FileStatus = Literal["ok", "partial", "error"]


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One registered document (a row of the registry)."""

    id: str
    title: str
    source: str
    external_id: str | None
    content_hash: str
    version: str
    chunk_count: int
    chars: int
    created_at: str
    updated_at: str
    #: The collection as its reader names it: ``private`` (the caller's own) or a shared name.
    collection: str = "shared"
    #: The upload's metadata (string, number and boolean values).
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_payload(cls, doc_id: str, payload: dict[str, Any]) -> DocumentRecord:
        """Build from a registry payload (tolerates fields added by later versions)."""
        return cls(
            id=doc_id,
            title=str(payload.get("title", "")),
            source=str(payload.get("source", "")),
            external_id=payload.get("external_id"),
            content_hash=str(payload.get("content_hash", "")),
            version=str(payload.get("version", "")),
            chunk_count=int(payload.get("chunk_count", 0)),
            chars=int(payload.get("chars", 0)),
            created_at=str(payload.get("created_at", "")),
            updated_at=str(payload.get("updated_at", "")),
            collection=str(payload.get("collection") or "shared"),
            metadata=dict(payload.get("metadata") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass(slots=True)
class DocumentOutcome:
    """What happened to one document of an ingestion."""

    document_id: str
    title: str
    source: str
    status: DocumentStatus
    chunks: int = 0
    error: str | None = None
    external_id: str | None = None


@dataclass(slots=True)
class FileResult:
    """What happened to one input file (or upload)."""

    path: str
    status: FileStatus = "ok"
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    documents: list[DocumentOutcome] = field(default_factory=list)


@dataclass(slots=True)
class IngestReport:
    """Result of an ingestion call: per-file results and totals."""

    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0

    def _count(self, status: DocumentStatus) -> int:
        return sum(1 for f in self.files for d in f.documents if d.status == status)

    @property
    def added(self) -> int:
        """Documents indexed for the first time."""
        return self._count("added")

    @property
    def replaced(self) -> int:
        """Documents whose changed content replaced their old chunks."""
        return self._count("replaced")

    @property
    def unchanged(self) -> int:
        """Documents skipped because their content hash was already indexed."""
        return self._count("unchanged")

    @property
    def failed_documents(self) -> int:
        """Documents that could not be indexed (their old version, if any, is kept)."""
        return self._count("error")

    @property
    def failed_files(self) -> list[FileResult]:
        """Files with an error (unreadable, unsupported, or some documents failed)."""
        return [f for f in self.files if f.status != "ok"]

    @property
    def chunks(self) -> int:
        """Chunks written by this call."""
        return sum(d.chunks for f in self.files for d in f.documents if d.status != "unchanged")

    @property
    def documents_per_second(self) -> float:
        """Documents processed (indexed, replaced or skipped) per wall-clock second."""
        done = self.added + self.replaced + self.unchanged
        return done / self.seconds if self.seconds > 0 else 0.0

    @property
    def ok(self) -> bool:
        """True when every file and document went in."""
        return not self.failed_files

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with totals."""
        return {
            "ok": self.ok,
            "added": self.added,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "failed_documents": self.failed_documents,
            "chunks": self.chunks,
            "seconds": round(self.seconds, 3),
            "files": [asdict(f) for f in self.files],
        }


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """Progress event, sent after each file is read and after each indexed batch."""

    files_total: int
    files_done: int
    documents_done: int
    chunks_indexed: int
    current: str


ProgressCallback = Callable[[IngestProgress], "None | Awaitable[None]"]


@dataclass(slots=True)
class SearchHit:
    """One retrieved chunk with the evidence behind its position.

    - ``fused_score``: weighted RRF normalised to 0..1 by its best possible value (rank-based:
      1.0 = first in every weighted leg).
    - ``relevance``: an absolute 0..1 estimate that does not depend on the other hits:
      ``lambda * dense_relevance + (1 - lambda) * lexical_coverage`` (see the retriever);
      None for hits beyond ``fetch_k`` (only when ``top_k > fetch_k``).
    - ``rerank_score``: the cross-encoder's sigmoid score, when reranked.
    - ``score``: what graders threshold: the rerank score when present, else ``relevance``
      (0.0 when neither was computed).
    """

    chunk_id: str
    document_id: str
    title: str
    source: str
    text: str
    chunk_index: int
    rank: int
    fused_score: float
    rrf_score: float
    relevance: float | None
    dense_rank: int | None = None
    dense_score: float | None = None
    lexical_rank: int | None = None
    lexical_score: float | None = None
    rerank_score: float | None = None
    external_id: str | None = None
    heading: str | None = None
    #: The collection as the searcher names it (``private`` or a shared name).
    collection: str = "shared"
    #: The page the chunk came from: a PDF page number, a slide number, a sheet name (None for
    #: formats without pages); `page_label` says it for a reader.
    page: str | None = None

    @property
    def score(self) -> float:
        """The score a grader thresholds (rerank score if reranked, else relevance)."""
        if self.rerank_score is not None:
            return self.rerank_score
        return self.relevance if self.relevance is not None else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, including ``score``."""
        out = asdict(self)
        out["score"] = self.score
        return out


def page_label(page: str | None, source: str) -> str:
    """How a citation names a page: ``slide N`` in a .pptx, ``sheet NAME`` in a .xlsx, else
    ``p. N`` ("" without a page)."""
    if not page:
        return ""
    suffix = source.rsplit(".", 1)[-1].lower() if "." in source else ""
    if suffix == "pptx":
        return f"slide {page}"
    if suffix == "xlsx":
        return f"sheet {page}"
    return f"p. {page}"


@dataclass(slots=True)
class SearchResult:
    """Hits plus how they were obtained (weights, depths, per-stage timings in ms).

    ``ordering`` says what ordered the head: ``rrf``, ``relevance`` (the model-free reranker)
    or ``cross-encoder``."""

    query: str
    hits: list[SearchHit]
    lambda_mult: float
    fetch_k: int
    top_k: int
    reranked: bool
    ordering: str = "rrf"
    timings_ms: dict[str, float] = field(default_factory=dict)
    query_lambda: float | None = None
    """The dense weight this query was fused with (`tools.knowledge.fusion`: ``lambda_mult``
    moved towards the leg whose best hits the other leg supports); None: not fused."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "query": self.query,
            "lambda_mult": self.lambda_mult,
            "query_lambda": self.query_lambda,
            "fetch_k": self.fetch_k,
            "top_k": self.top_k,
            "reranked": self.reranked,
            "ordering": self.ordering,
            "timings_ms": self.timings_ms,
            "hits": [h.to_dict() for h in self.hits],
        }
