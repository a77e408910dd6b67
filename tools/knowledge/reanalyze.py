"""Keep a knowledge base's BM25 postings built by the configured analyzer (KNOWLEDGE_ANALYZER).

A query is analyzed with the configured analyzer; postings built by another one would miss
(a stemmed query term against unstemmed postings, or the other way round). So
``knowledge.bases.analyzer`` records the analyzer that built the postings, and opening a
knowledge base with another one rebuilds them from the stored chunk texts -- once, in one
transaction, logged -- for every collection: the postings, each chunk's length in terms and the
corpus's total length (BM25's dl and avgdl). The vectors are untouched (the analyzer does not
shape them), so nothing is re-embedded and nothing needs re-ingesting.

The ``bases`` row is locked for the rebuild, so a second process opening the knowledge base at
the same time waits and then finds it done. Processes must agree on the analyzer: two with
different settings on one knowledge base would rebuild it back and forth at each start.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from tools.knowledge.analysis import LEGACY_ANALYZER, term_frequencies
from tools.knowledge.engine import KnowledgeEngine
from tools.knowledge.ingest import lexical_text

log = logging.getLogger(__name__)

#: Chunks read per round trip while rebuilding (a server-side cursor: memory stays bounded).
REBUILD_BATCH = 2_000


def recorded_analyzer(engine: KnowledgeEngine) -> str:
    """The analyzer that built `engine`'s postings (`LEGACY_ANALYZER` when none is recorded)."""
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT analyzer FROM knowledge.bases WHERE kb = %s", (engine.kb,)
        ).fetchone()
    return str(row[0]) if row and row[0] else LEGACY_ANALYZER


def reanalyze(engine: KnowledgeEngine, analyzer: str) -> int | None:
    """Make `engine`'s postings `analyzer`'s: record it when they already are (or there are no
    chunks), else rebuild them. Returns the number of chunks re-analyzed (None: nothing to do).
    Blocking; raises ValueError for an unknown analyzer before touching anything."""
    term_frequencies("", analyzer)  # an unknown name fails here, not mid-rebuild
    with engine.connection() as conn, conn.transaction():
        row = conn.execute(
            "SELECT analyzer FROM knowledge.bases WHERE kb = %s FOR UPDATE", (engine.kb,)
        ).fetchone()
        built = str(row[0]) if row and row[0] else LEGACY_ANALYZER
        if built == analyzer:
            if row is not None and row[0] is None:
                _record(conn, engine.kb, analyzer)
            return None
        started = time.perf_counter()
        chunks = _rebuild(conn, engine.kb, analyzer)
        _record(conn, engine.kb, analyzer)
    if chunks:
        log.warning(
            "knowledge base %r: the lexical postings were built by the %r analyzer and "
            "KNOWLEDGE_ANALYZER is %r: re-analyzed %d chunks in %.1f s (once; nothing was "
            "re-embedded)",
            engine.kb, built, analyzer, chunks, time.perf_counter() - started,
        )  # fmt: skip
    return chunks or None


def _record(conn: Any, kb: str, analyzer: str) -> None:
    conn.execute("UPDATE knowledge.bases SET analyzer = %s WHERE kb = %s", (analyzer, kb))


def _rebuild(conn: Any, kb: str, analyzer: str) -> int:
    """Postings, chunk lengths and corpus lengths of every collection of `kb`, from the chunks."""
    conn.execute("DELETE FROM knowledge.postings WHERE kb = %s", (kb,))
    conn.execute(
        "CREATE TEMP TABLE reanalyzed (id bigint PRIMARY KEY, length int NOT NULL) ON COMMIT DROP"
    )
    done = 0
    with conn.cursor(name="reanalyze_chunks") as read:
        read.itersize = REBUILD_BATCH
        read.execute(
            "SELECT c.id, c.collection, d.title, c.text FROM knowledge.chunks c"
            " JOIN knowledge.documents d"
            "   ON d.kb = c.kb AND d.collection = c.collection AND d.document_id = c.document_id"
            " WHERE c.kb = %s ORDER BY c.id",
            (kb,),
        )
        while batch := read.fetchmany(REBUILD_BATCH):
            lengths: list[tuple[int, int]] = []
            postings: list[tuple[Any, ...]] = []
            for chunk, collection, title, text in batch:
                terms, length = term_frequencies(lexical_text(title, text), analyzer)
                lengths.append((chunk, length))
                postings.extend((kb, collection, t, chunk, tf, length) for t, tf in terms.items())
            with conn.cursor() as write:
                with write.copy("COPY reanalyzed (id, length) FROM STDIN") as copy:
                    for item in lengths:
                        copy.write_row(item)
                with write.copy(
                    "COPY knowledge.postings (kb, collection, term, chunk, tf, dl) FROM STDIN"
                ) as copy:
                    for posting in postings:
                        copy.write_row(posting)
            done += len(batch)
    conn.execute(
        "UPDATE knowledge.chunks c SET length = r.length FROM reanalyzed r WHERE c.id = r.id"
    )
    conn.execute(
        "UPDATE knowledge.corpus k SET total_length = coalesce((SELECT sum(c.length)"
        " FROM knowledge.chunks c WHERE c.kb = k.kb AND c.collection = k.collection), 0)"
        " WHERE k.kb = %s",
        (kb,),
    )
    return done
