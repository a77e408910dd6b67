"""Indexing of loaded documents: hash, skip-unchanged, chunk, embed, write in one transaction.

A document's ``version`` is a hash of its content AND of everything that shapes its chunks and
vectors (embedding model, chunk size/overlap, chunker revision), so re-ingesting identical content
is a no-op while a settings change re-indexes it.

A batch of documents is written by `KnowledgeEngine.write` in ONE Postgres transaction (registry
rows, the replaced chunks' removal, new chunks with vectors, BM25 postings): the registry row is
the commit point, so a failure or a killed process loses nothing already committed and leaves
nothing half-written. A batch that fails is retried one document at a time, so one bad
document fails alone.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langchain_core.embeddings import Embeddings

from tools.knowledge.analysis import DEFAULT_ANALYZER, term_frequencies
from tools.knowledge.chunking import Chunk, chunk_text
from tools.knowledge.engine import ChunkWrite, DocumentWrite, KnowledgeEngine
from tools.knowledge.loaders import LoadedDocument
from tools.knowledge.schema import KnowledgeEngineError
from tools.knowledge.scope import SHARED
from tools.knowledge.types import DocumentOutcome
from tools.providers.embeddings import embed_matrix

log = logging.getLogger(__name__)

#: Bump when the chunker's rules change, so existing documents are re-chunked on re-ingestion.
CHUNKER_REVISION = "1"
_CHUNK_NAMESPACE = uuid.UUID("0d7c5e0a-3f43-4d7a-b0f8-f0b7e51c2a90")


def stored_document_id(collection: str, document_id: str) -> str:
    """A document's id in `collection`: the loader's id in ``shared`` (so a knowledge base made
    before collections keeps its ids), a distinct one in any other collection (so the same file
    uploaded to two collections is two documents with two ids)."""
    if collection == SHARED:
        return document_id
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{collection}\x00{document_id}"))


def content_hash(title: str, text: str) -> str:
    """SHA-256 (hex, 32 chars) of a document's title and text."""
    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()[:32]


def index_signature(model: str, dimension: int, chunk_size: int, chunk_overlap: int) -> str:
    """Hash of the settings that shape chunks and vectors."""
    raw = f"{model}|{dimension}|{chunk_size}|{chunk_overlap}|{CHUNKER_REVISION}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def chunk_document(doc: LoadedDocument, chunk_size: int, chunk_overlap: int) -> list[Chunk]:
    """The chunks of a loaded document: per page section when it has pages, and whole records
    without overlap when it is made of records (table rows), so no chunk starts mid-row."""
    overlap = 0 if doc.records else chunk_overlap
    return chunk_text(doc.text, chunk_size, overlap, pages=doc.pages)


def document_version(
    doc: LoadedDocument, digest: str, signature: str, metadata: dict[str, Any] | None = None
) -> str:
    """The version of a document's chunks: its content hash and the index signature, and for a
    paged or row-based document how it is cut (its page starts, rows). That last part is only
    hashed when present, so the versions of plain documents are what they were before pages
    existed (re-ingesting them is still a no-op), while a PDF indexed before chunks kept their
    page is re-chunked, with pages, the next time it is ingested. New metadata alone makes a
    new version too (the row is rewritten); none keeps the version of before metadata."""
    raw = f"{digest}:{signature}"
    if metadata:
        raw += f":{sorted(metadata.items())!r}"
    if doc.pages or doc.records:
        raw += f":pages={doc.pages!r}:records={doc.records}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def chunk_id(document_id: str, version: str, index: int) -> str:
    """Deterministic point id, so retrying an interrupted ingestion overwrites, never doubles."""
    return str(uuid.uuid5(_CHUNK_NAMESPACE, f"{document_id}:{version}:{index}"))


def embedding_input(title: str, chunk: Chunk) -> str:
    """What the dense model reads for a chunk: the title, and the section heading when the chunk
    does not already start with it, give a passage cut from the middle its context."""
    parts = [title] if title else []
    if chunk.heading and not chunk.text.lstrip("#= ").startswith(chunk.heading):
        parts.append(chunk.heading)
    parts.append(chunk.text)
    return "\n".join(parts)


def lexical_text(title: str, text: str) -> str:
    """What BM25 indexes for a chunk: title and text in one field (the stronger BEIR setup)."""
    return f"{title}\n{text}" if title else text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(slots=True)
class _Prepared:
    doc: LoadedDocument
    metadata: dict[str, Any]
    doc_id: str
    content_hash: str
    version: str
    chunks: list[Chunk]
    previous: dict[str, Any] | None


class Indexer:
    """Blocking indexing of document batches into one collection of the knowledge base."""

    def __init__(
        self,
        engine: KnowledgeEngine,
        embeddings: Embeddings,
        *,
        model_name: str,
        chunk_size: int,
        chunk_overlap: int,
        analyzer: str = DEFAULT_ANALYZER,
    ) -> None:
        self.engine = engine
        self.analyzer = analyzer
        self.embeddings = embeddings
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.signature = index_signature(model_name, engine.dimension, chunk_size, chunk_overlap)

    def index(
        self,
        docs: Sequence[LoadedDocument],
        collection: str = SHARED,
        metadata: dict[str, Any] | None = None,
    ) -> list[DocumentOutcome]:
        """Index `docs` into `collection` (each with `metadata`: a change of it alone re-writes
        the document); one outcome per input document, in order."""
        outcomes: list[DocumentOutcome | None] = [None] * len(docs)
        remaining = list(range(len(docs)))
        while remaining:  # the same document twice in one batch: later copies go in a later round
            seen: set[str] = set()
            this_round: list[int] = []
            later: list[int] = []
            for i in remaining:
                (later if docs[i].document_id in seen else this_round).append(i)
                seen.add(docs[i].document_id)
            done = self._index_round([docs[i] for i in this_round], collection, metadata or {})
            for i, outcome in zip(this_round, done, strict=True):
                outcomes[i] = outcome
            remaining = later
        return [o for o in outcomes if o is not None]

    def _index_round(
        self, docs: Sequence[LoadedDocument], collection: str, metadata: dict[str, Any]
    ) -> list[DocumentOutcome]:
        ids = [stored_document_id(collection, d.document_id) for d in docs]
        existing = self.engine.get_documents([collection], ids)
        outcomes: list[DocumentOutcome] = []
        todo: list[tuple[int, _Prepared]] = []
        for doc, doc_id in zip(docs, ids, strict=True):
            digest = content_hash(doc.title, doc.text)
            version = document_version(doc, digest, self.signature, metadata)
            previous = existing.get(doc_id)
            outcome = DocumentOutcome(
                doc_id, doc.title, doc.source, "unchanged", external_id=doc.external_id
            )
            outcomes.append(outcome)
            if previous is not None and previous.get("version") == version:
                outcome.chunks = int(previous.get("chunk_count", 0))
                continue
            chunks = chunk_document(doc, self.chunk_size, self.chunk_overlap)
            if not chunks:
                outcome.status = "error"
                outcome.error = "no indexable text after chunking"
                continue
            todo.append(
                (
                    len(outcomes) - 1,
                    _Prepared(doc, metadata, doc_id, digest, version, chunks, previous),
                )
            )
        errors = self._write_isolating_failures(collection, [p for _, p in todo]) if todo else {}
        for slot, prepared in todo:
            outcome = outcomes[slot]
            if prepared.doc_id in errors:
                outcome.status = "error"
                outcome.error = errors[prepared.doc_id]
            else:
                outcome.status = "replaced" if prepared.previous else "added"
                outcome.chunks = len(prepared.chunks)
        return outcomes

    def _write_isolating_failures(self, collection: str, batch: list[_Prepared]) -> dict[str, str]:
        """Write the batch; on failure retry one by one so one bad document fails alone.

        Returns ``{document_id: error message}`` of the documents that could not be written.
        """
        try:
            self._write(collection, batch)
            return {}
        except KnowledgeEngineError:
            raise  # the knowledge base itself is unusable: no document can go in
        except Exception as exc:
            if len(batch) == 1:
                log.warning("indexing %s failed: %s", batch[0].doc.source, exc)
                return {batch[0].doc_id: f"indexing failed ({exc}); the previous version is kept"}
        errors: dict[str, str] = {}
        for prepared in batch:
            errors.update(self._write_isolating_failures(collection, [prepared]))
        return errors

    def _write(self, collection: str, batch: list[_Prepared]) -> None:
        texts = [embedding_input(p.doc.title, chunk) for p in batch for chunk in p.chunks]
        vectors = embed_matrix(self.embeddings, texts)
        now = _now()
        writes: list[DocumentWrite] = []
        offset = 0
        for p in batch:
            chunks: list[ChunkWrite] = []
            for chunk in p.chunks:
                terms, length = term_frequencies(
                    lexical_text(p.doc.title, chunk.text), self.analyzer
                )
                chunks.append(
                    ChunkWrite(
                        chunk_id(p.doc_id, p.version, chunk.index), chunk.index, chunk.heading,
                        chunk.start, chunk.end, chunk.text, terms, length, chunk.page,
                    )
                )  # fmt: skip
            row = {
                "title": p.doc.title,
                "source": p.doc.source,
                "external_id": p.doc.external_id,
                "content_hash": p.content_hash,
                "version": p.version,
                "signature": self.signature,
                "chunk_count": len(p.chunks),
                "chars": len(p.doc.text),
                "created_at": (p.previous or {}).get("created_at", now),
                "updated_at": now,
                "metadata": p.metadata,
            }
            writes.append(
                DocumentWrite(p.doc_id, row, chunks, vectors[offset : offset + len(chunks)])
            )
            offset += len(chunks)
        self.engine.write(collection, writes)
