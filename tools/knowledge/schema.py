"""The knowledge tables (schema ``knowledge``), created idempotently under an advisory lock.

- ``bases``: one row per knowledge base (``kb``): the embedding model and vector size it was
  built with (vectors of two models are not comparable, so a mismatch is an error), and the
  lexical analyzer that built its postings (`tools.knowledge.reanalyze` rebuilds them when
  KNOWLEDGE_ANALYZER changes).
- ``documents``: the registry, one row per ``(kb, collection, document_id)`` with the upload's
  ``metadata`` (jsonb). It is written in the same transaction as the document's chunks and
  postings: the commit point of an ingestion.
- ``chunks``: text, position, payload and the ``vector(D)`` embedding, with an HNSW index
  (cosine) for the dense leg; ``length`` is the chunk's length in terms (BM25's ``dl``);
  ``page`` the page it came from (PDF page number, slide number, sheet name; NULL for formats
  without pages), added by ALTER so that a database made before it upgrades in place.
  Deleted with their document (ON DELETE CASCADE).
- ``postings``: ``(kb, collection, term, chunk) -> tf, dl``: the inverted index the lexical leg
  scores with BM25 in SQL (a covering primary key: one index range per query term and
  collection).
- ``corpus``: per ``(kb, collection)`` chunk count and total length (summed over the searched
  collections: BM25's N and avgdl), kept in step by the same transactions.

``collection`` is `tools.knowledge.scope`'s: ``shared`` (or another shared name) or
``private:<owner>``. A database made before collections (the column was ``owner``, ``""`` for
the one knowledge base every key read) is migrated in place, once, under the same lock: the
column is renamed, its rows become the ``shared`` collection, and one line is logged.
"""

from __future__ import annotations

import logging

import psycopg

log = logging.getLogger(__name__)

#: Advisory lock serialising the creation of the extension and the tables across processes.
SCHEMA_LOCK = 0x5357_5950_4B42_0001


class KnowledgeEngineError(RuntimeError):
    """The knowledge base cannot be opened or used; the message says how to fix it."""


def _ddl(dimension: int) -> list[str]:
    d = int(dimension)
    return [
        "CREATE SCHEMA IF NOT EXISTS knowledge",
        "CREATE TABLE IF NOT EXISTS knowledge.bases ("
        " kb text PRIMARY KEY, model text NOT NULL, dimension int NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())",
        # the lexical analyzer that built the postings (NULL: before it was recorded, `english`)
        "ALTER TABLE knowledge.bases ADD COLUMN IF NOT EXISTS analyzer text",
        "CREATE TABLE IF NOT EXISTS knowledge.documents ("
        " kb text NOT NULL, collection text NOT NULL, document_id uuid NOT NULL,"
        " title text NOT NULL, source text NOT NULL, external_id text,"
        " content_hash text NOT NULL, version text NOT NULL, signature text NOT NULL,"
        " chunk_count int NOT NULL, chars int NOT NULL,"
        " created_at text NOT NULL, updated_at text NOT NULL,"
        " PRIMARY KEY (kb, collection, document_id))",
        # uploads of one API key are `upload:<owner>/...`: its quota counts them by prefix
        "CREATE INDEX IF NOT EXISTS documents_source ON knowledge.documents"
        " (kb, collection, source text_pattern_ops)",
        "CREATE SEQUENCE IF NOT EXISTS knowledge.chunk_ids",
        "CREATE TABLE IF NOT EXISTS knowledge.chunks ("
        " id bigint PRIMARY KEY DEFAULT nextval('knowledge.chunk_ids'),"
        " kb text NOT NULL, collection text NOT NULL, document_id uuid NOT NULL,"
        " chunk_id uuid NOT NULL, version text NOT NULL, chunk_index int NOT NULL,"
        " heading text, start_pos int NOT NULL, end_pos int NOT NULL, text text NOT NULL,"
        f" length int NOT NULL, embedding vector({d}) NOT NULL,"
        " UNIQUE (kb, collection, chunk_id),"
        " FOREIGN KEY (kb, collection, document_id) REFERENCES knowledge.documents"
        " ON DELETE CASCADE)",
        # databases made before chunks kept their page: upgraded in place (NULL for old rows)
        "ALTER TABLE knowledge.chunks ADD COLUMN IF NOT EXISTS page text",
        "CREATE INDEX IF NOT EXISTS chunks_document ON knowledge.chunks"
        " (kb, collection, document_id)",
        "CREATE INDEX IF NOT EXISTS chunks_embedding ON knowledge.chunks"
        " USING hnsw (embedding vector_cosine_ops)",
        "CREATE TABLE IF NOT EXISTS knowledge.postings ("
        " kb text NOT NULL, collection text NOT NULL, term text NOT NULL,"
        " chunk bigint NOT NULL REFERENCES knowledge.chunks (id) ON DELETE CASCADE,"
        " tf int NOT NULL, dl int NOT NULL,"
        " PRIMARY KEY (kb, collection, term, chunk) INCLUDE (tf, dl))",
        "CREATE INDEX IF NOT EXISTS postings_chunk ON knowledge.postings (chunk)",
        "CREATE TABLE IF NOT EXISTS knowledge.corpus ("
        " kb text NOT NULL, collection text NOT NULL, chunks bigint NOT NULL,"
        " total_length bigint NOT NULL, PRIMARY KEY (kb, collection))",
        "CREATE TABLE IF NOT EXISTS knowledge.imports ("
        " kb text NOT NULL, source text NOT NULL, documents int NOT NULL,"
        " chunks int NOT NULL, imported_at timestamptz NOT NULL DEFAULT now(),"
        " PRIMARY KEY (kb, source))",
        # added with collections: existing databases gain them in place
        "ALTER TABLE knowledge.documents ADD COLUMN IF NOT EXISTS"
        " metadata jsonb NOT NULL DEFAULT '{}'::jsonb",
    ]


#: The tables whose ``owner`` column became ``collection``.
_PARTITIONED = ("documents", "chunks", "postings", "corpus")


def _migrate_to_collections(conn: psycopg.Connection) -> None:
    """Turn a database made before collections into the new layout, in place (inside
    `ensure_schema`'s transaction and lock, so once): rename ``owner`` to ``collection``, and
    make its rows the ``shared`` collection (``""``, the knowledge base every key read; any
    other partition, which only tests made, becomes that owner's private collection).

    Uploads of API keys (sources ``upload:<owner>/...``) stay in ``shared`` too: every key read
    them until now, and an upgrade must not silently take them out of other keys' answers. Their
    uploader can still delete them (see `tools.knowledge.operations.may_delete`), and they still
    count towards the uploader's quota."""
    old = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = 'knowledge'"
        " AND table_name = 'documents' AND column_name = 'owner'"
    ).fetchone()
    if old is None:
        return
    fk = conn.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = 'knowledge.chunks'::regclass"
        " AND contype = 'f'"
    ).fetchone()
    if fk is not None:  # the parent key changes below: the FK is re-made after
        conn.execute(f'ALTER TABLE knowledge.chunks DROP CONSTRAINT "{fk[0]}"')
    counts: dict[str, int] = {}
    for table in _PARTITIONED:
        conn.execute(f"ALTER TABLE knowledge.{table} RENAME COLUMN owner TO collection")
        cur = conn.execute(
            f"UPDATE knowledge.{table} SET collection = CASE WHEN collection = ''"
            " THEN 'shared' ELSE 'private:' || collection END"
        )
        counts[table] = cur.rowcount
    conn.execute(
        "ALTER TABLE knowledge.chunks ADD FOREIGN KEY (kb, collection, document_id)"
        " REFERENCES knowledge.documents ON DELETE CASCADE"
    )
    log.warning(
        "knowledge base: migrated to collections, once: %d document(s) and %d chunk(s) of the "
        "knowledge base every key read are now the 'shared' collection (uploads of API keys "
        "included: their uploader can still delete them); new uploads go to each key's "
        "private collection",
        counts["documents"],
        counts["chunks"],
    )


def ensure_schema(conn: psycopg.Connection, kb: str, model: str, dimension: int) -> None:
    """Create the extension and tables if needed and register `kb` with its model.

    Raises `KnowledgeEngineError` naming the fix when pgvector is missing, or when the tables
    or the knowledge base were built for another vector size or model.
    """
    if not 1 <= dimension <= 2000:  # HNSW indexes up to 2000 dimensions
        raise KnowledgeEngineError(f"embedding dimension {dimension} is out of range 1..2000")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if row is None:
            raise KnowledgeEngineError(
                "This Postgres has no pgvector extension, which the knowledge base needs: "
                "install it on the server (Debian/Ubuntu: postgresql-<version>-pgvector; Docker: "
                "the pgvector/pgvector:pg16 image), or unset DATABASE_URL to use the embedded "
                "Postgres, which ships it"
            )
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        _migrate_to_collections(conn)
        for statement in _ddl(dimension):
            conn.execute(statement)  # built from constants only
        found = conn.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'knowledge.chunks'::regclass"
            " AND attname = 'embedding'"
        ).fetchone()
        size = int(found[0]) if found else -1
        if size != dimension:
            raise KnowledgeEngineError(
                f"knowledge.chunks holds vectors of size {size}, the embedding model makes "
                f"{dimension}: go back to the previous EMBEDDING_MODEL, or use another database "
                "for this model (or DROP SCHEMA knowledge CASCADE and re-ingest)"
            )
        conn.execute(
            "INSERT INTO knowledge.bases (kb, model, dimension) VALUES (%s, %s, %s)"
            " ON CONFLICT (kb) DO NOTHING",
            (kb, model, dimension),
        )
        built = conn.execute("SELECT model FROM knowledge.bases WHERE kb = %s", (kb,)).fetchone()
        if built and model and built[0] and built[0] != model:
            raise KnowledgeEngineError(
                f"The knowledge base {kb!r} was built with the embedding model {built[0]!r}, not "
                f"{model!r}: set EMBEDDING_MODEL back, or use another KNOWLEDGE_BASE_NAME for the "
                "new model and re-ingest"
            )
