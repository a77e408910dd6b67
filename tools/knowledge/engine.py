"""`KnowledgeEngine`: one knowledge base in Postgres (blocking calls; callers use worker threads).

Every read covers a `Target` (a set of collections of ``kb`` and an optional filter on the
chunks' documents, `tools.knowledge.scope`); every write goes to one collection. Each query is
ONE round trip:

- dense leg: pgvector HNSW (cosine) over the target's chunks, the filter in the same WHERE.
  pgvector >= 0.8 scans the index iteratively until the filtered LIMIT is filled
  (``hnsw.iterative_scan``); older versions filter AFTER their candidate list, so when the
  index returns fewer rows than asked while the target holds more (other collections' rows, or
  the filter, crowded them out), the query is re-run as an exact scan (correct, slower);
- lexical leg: exact BM25 (k1 1.2, b 0.75, Lucene idf -- tantivy's formula) summed in SQL from
  the postings of the query's terms, with N, avgdl and df over the target's collections;
- writes: a batch of documents is ONE transaction -- registry rows, the old chunks' removal,
  the new chunks (COPY) and postings (COPY), the corpus counts. The registry row is the commit
  point: a process killed mid-ingest leaves nothing of the batch behind, and what was committed
  before stays.

Over 400 lines because it is one class, `KnowledgeEngine`, whose methods share its connection pool
and the SQL of one schema, plus the row types they read and write.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from tools.knowledge.bm25 import BM25_SQL, document_filter
from tools.knowledge.schema import KnowledgeEngineError, ensure_schema
from tools.knowledge.scope import Target

#: BM25 parameters (tantivy's and Lucene's defaults).
K1, B = 1.2, 0.75
#: Engine-side bounds (callers bound their options too; these protect the database).
MAX_LEG_K = 1000
MAX_IDS = 1000
MAX_QUERY_TERMS = 256
#: HNSW candidate list: a leg of up to this many hits comes from the index.
EF_SEARCH = 200


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked match of one leg (rank is 1-based; score: cosine, or BM25)."""

    chunk_id: str
    document_id: str
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class ChunkWrite:
    """One chunk to store: ids, position, text, and its lexical text's term counts."""

    chunk_id: str
    index: int
    heading: str | None
    start: int
    end: int
    text: str
    terms: Counter[str]
    length: int
    #: The page (PDF page number, slide number, sheet name) the chunk lies on, if any.
    page: str | None = None


@dataclass(slots=True)
class DocumentWrite:
    """A document's registry row with its chunks and their vectors (rows align)."""

    document_id: str
    row: dict[str, Any]
    chunks: list[ChunkWrite]
    vectors: np.ndarray


def vector_literal(vector: Sequence[float] | np.ndarray) -> str:
    """pgvector's text form of a vector, e.g. ``[0.1,0.2]``."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def _bound(value: int, upper: int) -> int:
    return max(0, min(int(value), upper))


_DOCUMENT_COLUMNS = (
    "title, source, external_id, content_hash, version, signature, chunk_count, chars, "
    "created_at, updated_at, metadata"
)
#: The chunk's document, for a filter on it (alias ``d``).
_JOIN_DOCUMENT = (
    " JOIN knowledge.documents d ON d.kb = c.kb AND d.collection = c.collection"
    " AND d.document_id = c.document_id"
)


class KnowledgeEngine:
    """Chunks, vectors, postings and the registry of knowledge base `kb` in one Postgres."""

    def __init__(
        self, url: str, *, kb: str, dimension: int, model: str = "", pool_size: int = 4
    ) -> None:
        """Nothing connects yet: the first call opens the pool and creates the schema (blocking),
        and raises `KnowledgeEngineError` naming the fix when it cannot -- so a server without
        pgvector costs the process its knowledge base, not its start-up."""
        self.kb = kb
        self.dimension = dimension
        self.model = model
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            open=False,
            kwargs={"autocommit": True, "prepare_threshold": None},
            configure=_configure,
        )
        self._ready = False
        self._lock = threading.Lock()
        #: pgvector >= 0.8: HNSW scans on until a filtered LIMIT is filled.
        self.iterative_scan = False

    def ready(self) -> None:
        """Open the pool and create the schema once; raises `KnowledgeEngineError`."""
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            try:
                self.pool.open(wait=True, timeout=30)
                with self.pool.connection() as conn:
                    ensure_schema(conn, self.kb, self.model, self.dimension)
                    found = conn.execute(
                        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                    ).fetchone()
                    self.iterative_scan = _version(str(found[0]) if found else "") >= (0, 8)
            except KnowledgeEngineError:
                raise
            except (psycopg.Error, PoolTimeout) as exc:
                raise KnowledgeEngineError(
                    f"Cannot open the knowledge base in Postgres ({type(exc).__name__}: {exc}); "
                    "start that server or fix DATABASE_URL (unset it to use the embedded Postgres)"
                ) from exc
            self._ready = True

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection (autocommit), the engine made ready first."""
        self.ready()
        with self.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        """Close the connection pool."""
        self.pool.close()

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
        with self.connection() as conn:
            return conn.execute(sql, params).fetchall()

    # --- search --------------------------------------------------------------------------

    def shared_collections(self) -> list[str]:
        """The shared collections that hold chunks (every key searches them)."""
        rows = self._rows(
            "SELECT collection FROM knowledge.corpus WHERE kb = %s AND chunks > 0"
            " AND collection NOT LIKE 'private:%%' ORDER BY collection",
            (self.kb,),
        )
        return [str(r[0]) for r in rows]

    def dense(self, target: Target, vector: Sequence[float] | np.ndarray, limit: int) -> list[Hit]:
        """The `limit` chunks of `target` nearest to `vector` (cosine), best first."""
        limit = _bound(limit, MAX_LEG_K)
        if limit == 0 or not target.collections:
            return []
        join = _JOIN_DOCUMENT if target.where else ""
        where = f" AND {target.where}" if target.where else ""
        sql = (
            "SELECT c.chunk_id::text, c.document_id::text, 1 - (c.embedding <=> q) FROM"
            f" knowledge.chunks c{join}, (SELECT %(v)s::vector AS q) query"
            f" WHERE c.kb = %(kb)s AND c.collection = ANY(%(collections)s){where}"
            " ORDER BY c.embedding <=> q LIMIT %(n)s"
        )
        params = {"v": vector_literal(vector), "kb": self.kb,
                  "collections": list(target.collections), "n": limit, **target.params}  # fmt: skip
        with self.connection() as conn:
            rows: list[tuple[Any, ...]] = []
            if limit <= EF_SEARCH:
                with conn.transaction():
                    if self.iterative_scan:  # the index keeps scanning until LIMIT is filled
                        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    rows = conn.execute(sql, params).fetchall()
                if self.iterative_scan:  # relaxed order: the few found are sorted here
                    rows.sort(key=lambda r: -float(r[2]))
            if len(rows) < limit and len(rows) < self._chunk_count(conn, target):
                with conn.transaction():  # the index missed some of the target's rows: exact
                    conn.execute("SET LOCAL enable_indexscan = off")
                    rows = conn.execute(sql, params).fetchall()
        return [Hit(r[0], r[1], float(r[2]), i) for i, r in enumerate(rows, start=1)]

    def _chunk_count(self, conn: psycopg.Connection, target: Target) -> int:
        """The target's chunks (an upper bound when it has a filter: then the filter decides,
        and an exact scan is what finds the few that pass it)."""
        row = conn.execute(
            "SELECT coalesce(sum(chunks), 0) FROM knowledge.corpus WHERE kb = %s"
            " AND collection = ANY(%s)",
            (self.kb, list(target.collections)),
        ).fetchone()
        return int(row[0]) if row else 0

    def lexical(self, target: Target, terms: Sequence[str], limit: int) -> list[Hit]:
        """The `limit` best chunks of `target` by BM25 for the (analyzed) query `terms`.

        A term repeated in the query counts once per occurrence (as tantivy's boolean query of
        one clause per term did)."""
        limit = _bound(limit, MAX_LEG_K)
        counts = Counter(terms[:MAX_QUERY_TERMS])
        if limit == 0 or not counts or not target.collections:
            return []
        sql = BM25_SQL.format(document_filter=document_filter(target.where))
        rows = self._rows(sql, {
            "terms": list(counts), "qtf": list(counts.values()), "kb": self.kb,
            "collections": list(target.collections), "n": limit, "k1": K1, "b": B,
            **target.params,
        })  # fmt: skip
        return [Hit(r[0], r[1], float(r[2]), i) for i, r in enumerate(rows, start=1)]

    def idf(self, collections: Sequence[str], terms: Sequence[str]) -> dict[str, float]:
        """Lucene's BM25 idf of each term over the chunks of `collections` (0 df gives the
        highest idf)."""
        unique = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
        if not unique:
            return {}
        rows = self._rows(
            "SELECT t.term, ln(1 + (c.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)),"
            " coalesce(d.df, 0) FROM unnest(%(terms)s::text[]) AS t(term)"
            " CROSS JOIN (SELECT coalesce(sum(chunks), 0)::float8 AS n FROM knowledge.corpus"
            "   WHERE kb = %(kb)s AND collection = ANY(%(collections)s)) c"
            " LEFT JOIN (SELECT term, count(*)::float8 AS df FROM knowledge.postings"
            "   WHERE kb = %(kb)s AND collection = ANY(%(collections)s)"
            "   AND term = ANY(%(terms)s) GROUP BY term) d USING (term)",
            {"terms": unique, "kb": self.kb, "collections": list(collections)},
        )
        return {str(r[0]): max(0.0, float(r[1])) for r in rows}

    def document_frequency(
        self, collections: Sequence[str], terms: Sequence[str]
    ) -> dict[str, int]:
        """How many chunks of `collections` hold each term."""
        unique = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
        if not unique:
            return {}
        rows = self._rows(
            "SELECT term, count(*) FROM knowledge.postings WHERE kb = %s"
            " AND collection = ANY(%s) AND term = ANY(%s) GROUP BY term",
            (self.kb, list(collections), unique),
        )
        found = {str(r[0]): int(r[1]) for r in rows}
        return {t: found.get(t, 0) for t in unique}

    def fetch_chunks(
        self,
        collections: Sequence[str],
        ids: Sequence[str],
        query_vector: Sequence[float] | np.ndarray | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Payload of each existing chunk id of `collections` (with ``cosine`` to
        `query_vector` when given)."""
        ids = list(dict.fromkeys(ids))[:MAX_IDS]
        if not ids or not collections:
            return {}
        cosine = "1 - (c.embedding <=> %(v)s::vector)" if query_vector is not None else "NULL"
        rows = self._rows(
            "SELECT c.chunk_id::text, c.document_id::text, d.title, d.source, d.external_id,"
            f" c.chunk_index, c.heading, c.start_pos, c.end_pos, c.text, c.version, {cosine},"
            " c.collection, c.page"
            f" FROM knowledge.chunks c{_JOIN_DOCUMENT}"
            " WHERE c.kb = %(kb)s AND c.collection = ANY(%(collections)s)"
            " AND c.chunk_id = ANY(%(ids)s::uuid[])",
            {
                "kb": self.kb,
                "collections": list(collections),
                "ids": ids,
                "v": vector_literal(query_vector) if query_vector is not None else None,
            },
        )
        keys = ("document_id", "title", "source", "external_id", "chunk_index", "heading",
                "start", "end", "text", "version", "cosine", "collection", "page")  # fmt: skip
        return {r[0]: dict(zip(keys, r[1:], strict=True)) for r in rows}

    # --- registry ------------------------------------------------------------------------

    def get_documents(
        self, collections: Sequence[str], ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Registry rows (with their ``collection``) of the given document ids that exist in
        `collections` (an id in two of them: the first collection listed wins)."""
        ids = list(dict.fromkeys(ids))
        order = {name: i for i, name in enumerate(collections)}
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), MAX_IDS):
            rows = self._rows(
                f"SELECT document_id::text, collection, {_DOCUMENT_COLUMNS}"
                " FROM knowledge.documents WHERE kb = %s AND collection = ANY(%s)"
                " AND document_id = ANY(%s::uuid[])",
                (self.kb, list(collections), ids[i : i + MAX_IDS]),
            )
            rows.sort(key=lambda r: -order.get(r[1], 0))  # the preferred collection last: wins
            out.update({r[0]: {**_document_row(r[2:]), "collection": r[1]} for r in rows})
        return out

    def list_documents(
        self, collections: Sequence[str], *, limit: int | None = None, offset: int = 0
    ) -> list[tuple[str, dict[str, Any]]]:
        """Registry rows of `collections` sorted by source, external id and title, one page."""
        rows = self._rows(
            f"SELECT document_id::text, collection, {_DOCUMENT_COLUMNS} FROM knowledge.documents"
            " WHERE kb = %s AND collection = ANY(%s)"
            " ORDER BY source, coalesce(external_id, ''), title, collection, document_id"
            " LIMIT %s OFFSET %s",
            (self.kb, list(collections), limit, max(0, int(offset))),
        )
        return [(r[0], {**_document_row(r[2:]), "collection": r[1]}) for r in rows]

    def counts(self, collections: Sequence[str]) -> dict[str, int]:
        """Documents and chunks of `collections` (chunks also counted from the corpus stats)."""
        row = self._rows(
            "SELECT (SELECT count(*) FROM knowledge.documents WHERE kb = %(kb)s"
            "  AND collection = ANY(%(collections)s)),"
            " (SELECT count(*) FROM knowledge.chunks WHERE kb = %(kb)s"
            "  AND collection = ANY(%(collections)s)),"
            " (SELECT coalesce(sum(chunks), 0) FROM knowledge.corpus WHERE kb = %(kb)s"
            "  AND collection = ANY(%(collections)s))",
            {"kb": self.kb, "collections": list(collections)},
        )[0]
        return {"documents": int(row[0]), "chunks": int(row[1]), "lexical_chunks": int(row[2])}

    def source_totals(
        self, collections: Sequence[str], prefix: str, *, excluding: Sequence[str] = ()
    ) -> tuple[int, int]:
        """(documents, chunks) in `collections` whose source starts with ``prefix`` (an
        owner's uploads), leaving out the sources in ``excluding`` (an upload about to replace
        them)."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        row = self._rows(
            "SELECT count(*), coalesce(sum(chunk_count), 0) FROM knowledge.documents"
            " WHERE kb = %s AND collection = ANY(%s) AND source LIKE %s ESCAPE '\\'"
            " AND NOT (source = ANY(%s))",
            (self.kb, list(collections), pattern, list(excluding)),
        )[0]
        return int(row[0]), int(row[1])

    # --- writes --------------------------------------------------------------------------

    def write(self, collection: str, docs: Sequence[DocumentWrite]) -> None:
        """Store (or replace) documents of `collection` with their chunks and postings in ONE
        transaction."""
        if not docs:
            return
        total = sum(len(d.chunks) for d in docs)
        with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO knowledge.documents"
                f" (kb, collection, document_id, {_DOCUMENT_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (kb, collection, document_id) DO UPDATE SET"
                " title = EXCLUDED.title, source = EXCLUDED.source,"
                " external_id = EXCLUDED.external_id, content_hash = EXCLUDED.content_hash,"
                " version = EXCLUDED.version, signature = EXCLUDED.signature,"
                " chunk_count = EXCLUDED.chunk_count, chars = EXCLUDED.chars,"
                " created_at = knowledge.documents.created_at, updated_at = EXCLUDED.updated_at,"
                " metadata = EXCLUDED.metadata",
                [(self.kb, collection, d.document_id, *_document_values(d.row)) for d in docs],
            )
            gone = self._delete_chunks(cur, collection, [d.document_id for d in docs])
            cur.execute(
                "SELECT nextval('knowledge.chunk_ids') FROM generate_series(1, %s)", (total,)
            )
            ids = iter([int(r[0]) for r in cur.fetchall()])
            postings: list[tuple[Any, ...]] = []
            added_length = 0
            with cur.copy(
                "COPY knowledge.chunks (id, kb, collection, document_id, chunk_id, version,"
                " chunk_index, heading, start_pos, end_pos, text, length, embedding, page)"
                " FROM STDIN"
            ) as copy:
                for doc in docs:
                    version = str(doc.row.get("version", ""))
                    for chunk, vector in zip(doc.chunks, doc.vectors, strict=True):
                        cid = next(ids)
                        added_length += chunk.length
                        copy.write_row((
                            cid, self.kb, collection, doc.document_id, chunk.chunk_id, version,
                            chunk.index, chunk.heading, chunk.start, chunk.end, chunk.text,
                            chunk.length, vector_literal(vector), chunk.page,
                        ))  # fmt: skip
                        postings.extend(
                            (self.kb, collection, term, cid, tf, chunk.length)
                            for term, tf in chunk.terms.items()
                        )
            with cur.copy(
                "COPY knowledge.postings (kb, collection, term, chunk, tf, dl) FROM STDIN"
            ) as copy:
                for posting in postings:
                    copy.write_row(posting)
            self._add_to_corpus(cur, collection, total - gone[0], added_length - gone[1])

    def _delete_chunks(
        self, cur: psycopg.Cursor[Any], collection: str, document_ids: list[str]
    ) -> tuple[int, int]:
        cur.execute(
            "WITH gone AS (DELETE FROM knowledge.chunks WHERE kb = %s AND collection = %s"
            " AND document_id = ANY(%s::uuid[]) RETURNING length)"
            " SELECT count(*), coalesce(sum(length), 0) FROM gone",
            (self.kb, collection, document_ids),
        )
        row = cur.fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def _add_to_corpus(
        self, cur: psycopg.Cursor[Any], collection: str, chunks: int, length: int
    ) -> None:
        # Last in the transaction: the one row every writer of (kb, collection) updates is
        # locked only for the commit's duration.
        cur.execute(
            "INSERT INTO knowledge.corpus (kb, collection, chunks, total_length)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (kb, collection) DO UPDATE SET"
            " chunks = knowledge.corpus.chunks + EXCLUDED.chunks,"
            " total_length = knowledge.corpus.total_length + EXCLUDED.total_length",
            (self.kb, collection, chunks, length),
        )

    def delete_document(self, collection: str, document_id: str) -> bool:
        """Remove a document of `collection`, its chunks and postings (one transaction); False
        if unknown."""
        with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
            gone = self._delete_chunks(cur, collection, [document_id])
            cur.execute(
                "DELETE FROM knowledge.documents WHERE kb = %s AND collection = %s"
                " AND document_id = %s::uuid",
                (self.kb, collection, document_id),
            )
            if cur.rowcount == 0:
                return False
            self._add_to_corpus(cur, collection, -gone[0], -gone[1])
            return True


def _configure(conn: psycopg.Connection) -> None:
    # A custom GUC is accepted before the extension loads, and applies once it does.
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")


def _document_values(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        str(row.get("title", "")),
        str(row.get("source", "")),
        row.get("external_id"),
        str(row.get("content_hash", "")),
        str(row.get("version", "")),
        str(row.get("signature", "")),
        int(row.get("chunk_count", 0)),
        int(row.get("chars", 0)),
        str(row.get("created_at", "")),
        str(row.get("updated_at", "")),
        Jsonb(dict(row.get("metadata") or {})),
    )


def _document_row(values: Sequence[Any]) -> dict[str, Any]:
    keys = ("title", "source", "external_id", "content_hash", "version", "signature",
            "chunk_count", "chars", "created_at", "updated_at", "metadata")  # fmt: skip
    return dict(zip(keys, values, strict=True))


def _version(text: str) -> tuple[int, ...]:
    """``0.8.0`` -> ``(0, 8, 0)`` (non-numeric parts end it)."""
    parts: list[int] = []
    for part in text.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)
