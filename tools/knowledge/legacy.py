"""One-time import of a knowledge base from the old embedded layout into Postgres.

Before the Postgres engine, an embedded ``DATA_DIR`` held the knowledge base in qdrant-client
local mode (``DATA_DIR/qdrant``: collections ``<kb>_documents``, the registry, and
``<kb>_chunks``, payloads + vectors) and a tantivy index (``DATA_DIR/lexical/<kb>``, derived
from the chunk payloads). On start, when that layout holds ``<kb>`` and this database has not
imported it yet, every registered document is copied with its chunks and their stored vectors
into the ``shared`` collection
(nothing is re-embedded; the BM25 postings are rebuilt from the chunk texts) and one log line
says so. Each batch is one transaction and a re-run rewrites what is there, so a start that dies
half-way simply imports again next time. When done, the import is recorded in
``knowledge.imports`` (so it happens once per database) and the old tantivy folder is renamed
``lexical.imported``; the Qdrant folder is left as it was (nothing is deleted).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from tools.knowledge.analysis import LEGACY_ANALYZER, term_frequencies
from tools.knowledge.engine import ChunkWrite, DocumentWrite, KnowledgeEngine
from tools.knowledge.scope import SHARED

log = logging.getLogger(__name__)

#: Advisory lock: one process imports, the others wait and then find it done.
IMPORT_LOCK = 0x5357_5950_4B42_0002
BATCH_DOCUMENTS = 64


def legacy_collections(data_dir: Path, kb: str) -> Path | None:
    """The old Qdrant local folder if it holds knowledge base `kb`, else None."""
    folder = data_dir / "qdrant"
    found = (folder / "collection" / f"{kb}_documents").is_dir()
    return folder if found and (folder / "collection" / f"{kb}_chunks").is_dir() else None


def _lexical_text(title: str, text: str) -> str:
    return f"{title}\n{text}" if title else text


def import_legacy(
    engine: KnowledgeEngine,
    data_dir: Path,
    *,
    collection: str = SHARED,
    analyzer: str = LEGACY_ANALYZER,
) -> int | None:
    """Import `engine.kb` from the old layout under `data_dir` if not done yet.

    Returns the number of documents imported (None when there was nothing to import). Blocking.
    """
    folder = legacy_collections(data_dir, engine.kb)
    if folder is None:
        return None
    source = str(folder.resolve())
    with engine.connection() as lock_conn:
        lock_conn.execute("SELECT pg_advisory_lock(%s)", (IMPORT_LOCK,))
        try:
            done = lock_conn.execute(
                "SELECT 1 FROM knowledge.imports WHERE kb = %s AND source = %s",
                (engine.kb, source),
            ).fetchone()
            if done is not None:
                return None
            documents, chunks = _copy(engine, folder, collection, analyzer)
            lock_conn.execute(
                "INSERT INTO knowledge.imports (kb, source, documents, chunks)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (engine.kb, source, documents, chunks),
            )
        finally:
            lock_conn.execute("SELECT pg_advisory_unlock(%s)", (IMPORT_LOCK,))
    lexical = data_dir / "lexical" / engine.kb
    if lexical.is_dir():
        target = data_dir / "lexical.imported" / engine.kb
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            lexical.rename(target)
    return documents


def _copy(
    engine: KnowledgeEngine, folder: Path, collection: str, analyzer: str = LEGACY_ANALYZER
) -> tuple[int, int]:
    from qdrant_client import QdrantClient

    started = time.perf_counter()
    client = QdrantClient(path=str(folder), force_disable_check_same_thread=True)
    try:
        rows = _scroll(client, f"{engine.kb}_documents", vectors=False)
        registry = {str(r.id): dict(r.payload or {}) for r in rows}
        log.warning(
            "knowledge base %r: importing %d document(s) from the old embedded layout (%s and "
            "the tantivy index) into Postgres, once; nothing is re-embedded",
            engine.kb,
            len(registry),
            folder,
        )
        by_doc: dict[str, list[Any]] = defaultdict(list)
        for rec in _scroll(client, f"{engine.kb}_chunks", vectors=True):
            payload = rec.payload or {}
            doc_id = str(payload.get("document_id", ""))
            if registry.get(doc_id, {}).get("version") == payload.get("version"):
                by_doc[doc_id].append(rec)  # chunks of unregistered/stale versions stay behind
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.close()
    writes = [
        _document(doc_id, row, by_doc.get(doc_id, []), analyzer) for doc_id, row in registry.items()
    ]
    writes = [w for w in writes if w.chunks]
    for i in range(0, len(writes), BATCH_DOCUMENTS):
        engine.write(collection, writes[i : i + BATCH_DOCUMENTS])
    total = sum(len(w.chunks) for w in writes)
    log.warning(
        "knowledge base %r: imported %d document(s), %d chunk(s) into Postgres in %.1f s; the "
        "old folders are kept (the tantivy index renamed to lexical.imported)",
        engine.kb,
        len(writes),
        total,
        time.perf_counter() - started,
    )
    return len(writes), total


def _scroll(client: Any, collection: str, *, vectors: bool) -> list[Any]:
    out: list[Any] = []
    offset: Any = None
    while True:
        records, offset = client.scroll(
            collection, limit=512, offset=offset, with_payload=True, with_vectors=vectors
        )
        out.extend(records)
        if offset is None:
            return out


def _document(
    doc_id: str, row: dict[str, Any], records: list[Any], analyzer: str = LEGACY_ANALYZER
) -> DocumentWrite:
    records.sort(key=lambda r: int((r.payload or {}).get("chunk_index", 0)))
    title = str(row.get("title", ""))
    chunks: list[ChunkWrite] = []
    vectors: list[Any] = []
    for rec in records:
        payload = rec.payload or {}
        vector = rec.vector.get("dense") if isinstance(rec.vector, dict) else rec.vector
        if vector is None:
            continue
        text = str(payload.get("text", ""))
        terms, length = term_frequencies(_lexical_text(title, text), analyzer)
        chunks.append(
            ChunkWrite(
                str(rec.id), int(payload.get("chunk_index", 0)), payload.get("heading"),
                int(payload.get("start", 0)), int(payload.get("end", 0)), text, terms, length,
            )
        )  # fmt: skip
        vectors.append(vector)
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    return DocumentWrite(doc_id, {**row, "chunk_count": len(chunks)}, chunks, matrix)
