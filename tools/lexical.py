"""The lexical leg: a persistent tantivy BM25 index of chunks with an English stemming analyzer.

Why tantivy (see the knowledge README in the report): BM25 over a real inverted index answers a
SciFact query in well under a millisecond (qdrant-client local mode scored sparse vectors at about
140 ms), it persists on disk, and it supports incremental add / delete by term, which bm25s (a
static matrix rebuilt on every change) does not.

Analyzer: simple tokenizer (splits on non-alphanumerics, so ``IL-6`` -> ``il``, ``6``), drop
tokens over 40 chars, lowercase, ASCII folding, Snowball English stemmer. No stop-word filter:
BM25's idf already discounts them, and keeping them lets quoted phrases match exactly.
Scoring is tantivy's BM25 (k1 = 1.2, b = 0.75, Lucene's idf).

Writes open a short-lived `IndexWriter` (tantivy allows one per index, also across processes),
so a CLI ingest and a running server do not hold each other's lock for longer than one batch.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

SCHEMA_VERSION = "1"
_ANALYZER = "en_stem_fold"
_QUOTED = re.compile(r'"([^"]+)"')


class LexicalIndexError(RuntimeError):
    """The lexical index cannot be opened or written; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    """One chunk to index: ids for mapping/deletion, ``version`` = its document's content hash."""

    chunk_id: str
    document_id: str
    version: str
    text: str


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """A ranked lexical match (rank is 1-based)."""

    chunk_id: str
    document_id: str
    score: float
    rank: int


def build_analyzer() -> tantivy.TextAnalyzer:
    """The analyzer used for both indexing and queries (they must agree)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("document_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("version", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, tokenizer_name=_ANALYZER)
    return builder.build()


class LexicalIndex:
    """BM25 search over chunks, persisted under ``path`` (in memory when ``path`` is None).

    Thread-safe: writes are serialised by a lock; searches use the current searcher.
    """

    def __init__(self, path: Path | None, *, writer_heap_bytes: int = 64_000_000) -> None:
        self.path = path
        self._heap = writer_heap_bytes
        self._lock = threading.Lock()
        self._analyzer = build_analyzer()
        self._schema = _schema()
        if path is not None:
            path.mkdir(parents=True, exist_ok=True)
            marker = path / "switchyard-lexical-version"
            if marker.exists() and marker.read_text().strip() != SCHEMA_VERSION:
                raise LexicalIndexError(
                    f"The lexical index at {path} has schema version "
                    f"{marker.read_text().strip()!r}, this build needs {SCHEMA_VERSION!r}: delete "
                    "that folder and run `KnowledgeStore.sync_lexical()` (or re-ingest) to rebuild"
                )
            try:
                self._index = tantivy.Index(self._schema, path=str(path), reuse=True)
            except ValueError as exc:
                raise LexicalIndexError(
                    f"Cannot open the lexical index at {path} ({exc}); delete the folder to "
                    "rebuild it from Qdrant with `KnowledgeStore.sync_lexical()`"
                ) from exc
            marker.write_text(SCHEMA_VERSION)
        else:
            self._index = tantivy.Index(self._schema)
        self._index.register_tokenizer(_ANALYZER, self._analyzer)
        self._index.reload()

    # --- analysis ------------------------------------------------------------------------

    def analyze(self, text: str) -> list[str]:
        """Index terms of `text` (lowercased, folded, stemmed)."""
        return list(self._analyzer.analyze(text))

    def _query(self, query: str) -> tantivy.Query | None:
        terms = self.analyze(query)
        if not terms:
            return None
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "body", term))
            for term in terms
        ]
        # A quoted phrase also has to score as a phrase: exact wording beats scattered terms.
        for phrase in _QUOTED.findall(query):
            words: list[str | tuple[int, str]] = list(self.analyze(phrase))
            if len(words) > 1:
                exact = tantivy.Query.phrase_query(self._schema, "body", words)
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(exact, 2.0)))
        return tantivy.Query.boolean_query(clauses)

    # --- search --------------------------------------------------------------------------

    def search(self, query: str, limit: int) -> list[LexicalHit]:
        """The `limit` best chunks for `query` by BM25; empty when no query term is indexed."""
        parsed = self._query(query)
        if parsed is None or limit <= 0:
            return []
        searcher = self._index.searcher()
        result = searcher.search(parsed, limit, count=False)
        hits: list[LexicalHit] = []
        for rank, (score, address) in enumerate(result.hits, start=1):
            doc = searcher.doc(address)
            hits.append(
                LexicalHit(
                    chunk_id=str(doc["chunk_id"][0]),
                    document_id=str(doc["document_id"][0]),
                    score=float(score),
                    rank=rank,
                )
            )
        return hits

    def idf(self, terms: Iterable[str]) -> dict[str, float]:
        """Lucene BM25 idf of each (already analyzed) term in the current index."""
        searcher = self._index.searcher()
        n = max(searcher.num_docs, 1)
        out: dict[str, float] = {}
        for term in terms:
            if term not in out:
                df = searcher.doc_freq("body", term)
                out[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return out

    def idf_of(self, word: str) -> float:
        """idf of a surface word (analyzed first); 0.0 for a word the index has never seen."""
        terms = self.analyze(word)
        if not terms:
            return 0.0
        searcher = self._index.searcher()
        if min(searcher.doc_freq("body", t) for t in terms) == 0:
            return 0.0
        return max(self.idf(terms).values())

    def count(self) -> int:
        """Number of indexed (live) chunks."""
        return int(self._index.searcher().num_docs)

    def document_versions(self) -> dict[str, tuple[str, int]]:
        """``{document_id: (version, chunk count)}`` of everything indexed (a full scan)."""
        searcher = self._index.searcher()
        total = int(searcher.num_docs)
        out: dict[str, tuple[str, int]] = {}
        if total == 0:
            return out
        for _score, address in searcher.search(tantivy.Query.all_query(), total).hits:
            doc = searcher.doc(address)
            doc_id = str(doc["document_id"][0])
            version = str(doc["version"][0])
            prev = out.get(doc_id)
            # Two versions of one document only coexist after an interrupted replace; report
            # a sentinel so the caller re-syncs that document.
            if prev is not None and prev[0] != version:
                out[doc_id] = ("<mixed>", prev[1] + 1)
            else:
                out[doc_id] = (version, (prev[1] if prev else 0) + 1)
        return out

    # --- writes --------------------------------------------------------------------------

    def _writer(self) -> tantivy.IndexWriter:
        deadline = time.monotonic() + 30.0
        while True:
            try:
                return self._index.writer(heap_size=self._heap, num_threads=1)
            except ValueError as exc:  # another process holds the writer lock
                if time.monotonic() > deadline:
                    raise LexicalIndexError(
                        f"The lexical index at {self.path} is locked by another writer ({exc}); "
                        "wait for the other ingestion to finish, or stop the stale process"
                    ) from exc
                time.sleep(0.1)

    def _commit(self, writer: tantivy.IndexWriter) -> None:
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()

    def add(self, docs: Sequence[LexicalDoc]) -> None:
        """Index chunks (one commit). Re-adding a chunk id first removes the old copy."""
        if not docs:
            return
        with self._lock:
            writer = self._writer()
            try:
                for doc in docs:
                    writer.delete_documents_by_term("chunk_id", doc.chunk_id)
                    writer.add_document(
                        tantivy.Document(
                            chunk_id=doc.chunk_id,
                            document_id=doc.document_id,
                            version=doc.version,
                            body=doc.text,
                        )
                    )
                self._commit(writer)
            except BaseException:
                writer.rollback()
                writer.wait_merging_threads()
                raise

    def delete_documents(self, document_ids: Iterable[str]) -> None:
        """Remove every chunk of the given documents (one commit)."""
        ids = list(document_ids)
        if not ids:
            return
        with self._lock:
            writer = self._writer()
            for doc_id in ids:
                writer.delete_documents_by_term("document_id", doc_id)
            self._commit(writer)

    def delete_other_versions(self, keep: dict[str, str]) -> None:
        """For each ``document_id -> version``, remove that document's chunks of other versions."""
        if not keep:
            return
        with self._lock:
            writer = self._writer()
            for doc_id, version in keep.items():
                query = tantivy.Query.boolean_query(
                    [
                        (
                            tantivy.Occur.Must,
                            tantivy.Query.term_query(self._schema, "document_id", doc_id),
                        ),
                        (
                            tantivy.Occur.MustNot,
                            tantivy.Query.term_query(self._schema, "version", version),
                        ),
                    ]
                )
                writer.delete_documents_by_query(query)
            self._commit(writer)

    def delete_versions(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remove the chunks of each ``(document_id, version)`` (rollback of a failed write)."""
        pairs = list(pairs)
        if not pairs:
            return
        with self._lock:
            writer = self._writer()
            for document_id, version in pairs:
                query = tantivy.Query.boolean_query(
                    [
                        (
                            tantivy.Occur.Must,
                            tantivy.Query.term_query(self._schema, "document_id", document_id),
                        ),
                        (
                            tantivy.Occur.Must,
                            tantivy.Query.term_query(self._schema, "version", version),
                        ),
                    ]
                )
                writer.delete_documents_by_query(query)
            self._commit(writer)

    def clear(self) -> None:
        """Remove everything."""
        with self._lock:
            writer = self._writer()
            writer.delete_all_documents()
            self._commit(writer)
