"""Collections and filters on the real engine (Postgres 16 with pgvector, MiniLM): BM25's
statistics over exactly the searched collections, every kind of filter inside both legs (and
top-k still filled when a filter is selective), and the in-place migration of a knowledge base
made before collections into ``shared``."""

from __future__ import annotations

import logging
from collections.abc import Callable

import psycopg
import pytest

from config import Settings
from tools.knowledge.loaders import LoadedDocument
from tools.knowledge.scope import SHARED, Filters, Scope, private_collection
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

HANDBOOK = LoadedDocument(
    "handbook",
    "Deploy handbook",
    "Canary deploys roll out to five percent of traffic first. Roll back when the error rate "
    "passes two percent.",
    "handbook.md",
)
NOTE = LoadedDocument("note", "Alice's note", "The canary sings in the morning.", "note.md")


def _doc(key: str, text: str, title: str = "") -> LoadedDocument:
    return LoadedDocument(key, title or key, text, f"{key}.md")


async def _scores(store: KnowledgeStore, query: str, scope: Scope) -> dict[str, float]:
    result = await store.search(query, lambda_mult=0.0, top_k=50, scope=scope)
    return {h.title: float(h.lexical_score or 0.0) for h in result.hits}


async def test_bm25_statistics_cover_exactly_the_searched_collections(
    store: KnowledgeStore,
) -> None:
    await store.ingest_documents([HANDBOOK, NOTE])  # shared
    alice, bob = Scope("alice"), Scope("bob")
    before = await _scores(store, "canary rollback error rate", bob)
    assert set(before) == {"Deploy handbook", "Alice's note"}

    # alice's private collection fills with "canary": bob's scores must not move
    noise = [_doc(f"n{i}", f"canary canary canary bird {i}") for i in range(40)]
    await store.ingest_documents(noise, collection=private_collection("alice"))
    assert await _scores(store, "canary rollback error rate", bob) == before

    # alice's own ranking counts her collection: "canary" is common there, its idf drops
    mine = await _scores(store, "canary rollback error rate", alice)
    assert mine["Alice's note"] < before["Alice's note"]
    shared_idf = store.idf(["canari"], bob)["canari"]
    assert store.idf(["canari"], alice)["canari"] < shared_idf
    # N, avgdl and df are the sums over the searched set: the idf matches the formula
    with store.engine.connection() as conn:
        n = conn.execute(
            "SELECT sum(chunks) FROM knowledge.corpus WHERE collection = ANY(%s)",
            ([private_collection("alice"), SHARED],),
        ).fetchone()
    assert n is not None and int(n[0]) == 42
    df = store.engine.document_frequency([private_collection("alice"), SHARED], ["canari"])
    assert df == {"canari": 42}


async def test_every_kind_of_filter_applies_inside_both_legs(store: KnowledgeStore) -> None:
    docs = [
        _doc(f"doc{i}", f"Release notes for the payments service, version {i}.", f"Notes {i}")
        for i in range(30)
    ]
    for i, doc in enumerate(docs):
        meta = {"year": 2000 + i, "team": "ops" if i % 3 == 0 else "dev", "final": i % 2 == 0}
        await store.ingest_documents([doc], collection=SHARED, metadata=meta)
    await store.ingest_documents(
        [_doc("mine", "Release notes for the payments service, my draft.", "Draft")],
        collection=private_collection("alice"),
    )
    alice = "alice"

    async def titles(filters: dict[str, object], lam: float, top_k: int = 5) -> set[str]:
        scope = Scope(alice, Filters.model_validate(filters))
        result = await store.search(
            "payments release notes", lambda_mult=lam, top_k=top_k, scope=scope
        )
        return {h.title for h in result.hits}

    for lam in (0.0, 0.5, 1.0):  # lexical, hybrid, dense
        assert await titles({"metadata": {"year": 2007}}, lam) == {"Notes 7"}
        assert await titles({"metadata": {"year": [2003, 2021]}}, lam) == {"Notes 3", "Notes 21"}
        ranged = await titles({"metadata": {"year": {"gte": 2025, "lt": 2028}}}, lam)
        assert ranged == {"Notes 25", "Notes 26", "Notes 27"}
        both = await titles({"metadata": {"team": "ops", "final": True}}, lam, 10)
        assert both == {f"Notes {i}" for i in range(0, 30, 6)}
        assert await titles({"collection": "private"}, lam) == {"Draft"}
        assert "Draft" not in await titles({"collection": "shared"}, lam, 40)
        assert await titles({"source": ["doc4.md", "mine.md"]}, lam) == {"Notes 4", "Draft"}
        assert await titles({"title": "Notes 9"}, lam) == {"Notes 9"}
        # a selective filter still fills top-k (inside the legs, not after their cut)
        assert len(await titles({"metadata": {"team": "ops"}}, lam, 10)) == 10
    # a range never matches a string value, and a missing key matches nothing
    assert await titles({"metadata": {"team": {"gt": 0}}}, 0.5) == set()
    assert await titles({"metadata": {"colour": "red"}}, 0.5) == set()
    listed = await store.list_documents(Scope(alice))
    assert {d.metadata.get("year") for d in listed if d.title == "Notes 3"} == {2003}


async def test_a_collection_filter_cannot_reach_another_keys_collection(
    store: KnowledgeStore,
) -> None:
    await store.ingest_documents([NOTE], collection=private_collection("alice"))
    bob = Scope("bob", Filters(collection=["private", "shared"]))
    assert (await store.search("canary", scope=bob)).hits == []
    with pytest.raises(ValueError, match="not a shared collection name"):
        Filters(collection="private:alice")


#: The tables as they were before collections (the ``owner`` column; "" was every key's).
OLD_SCHEMA = [
    "CREATE SCHEMA knowledge",
    "CREATE TABLE knowledge.bases (kb text PRIMARY KEY, model text NOT NULL,"
    " dimension int NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
    "CREATE TABLE knowledge.documents (kb text NOT NULL, owner text NOT NULL,"
    " document_id uuid NOT NULL, title text NOT NULL, source text NOT NULL, external_id text,"
    " content_hash text NOT NULL, version text NOT NULL, signature text NOT NULL,"
    " chunk_count int NOT NULL, chars int NOT NULL, created_at text NOT NULL,"
    " updated_at text NOT NULL, PRIMARY KEY (kb, owner, document_id))",
    "CREATE INDEX documents_source ON knowledge.documents (kb, owner, source text_pattern_ops)",
    "CREATE SEQUENCE knowledge.chunk_ids",
    "CREATE TABLE knowledge.chunks (id bigint PRIMARY KEY DEFAULT nextval('knowledge.chunk_ids'),"
    " kb text NOT NULL, owner text NOT NULL, document_id uuid NOT NULL, chunk_id uuid NOT NULL,"
    " version text NOT NULL, chunk_index int NOT NULL, heading text, start_pos int NOT NULL,"
    " end_pos int NOT NULL, text text NOT NULL, length int NOT NULL,"
    " embedding vector(384) NOT NULL, UNIQUE (kb, owner, chunk_id),"
    " FOREIGN KEY (kb, owner, document_id) REFERENCES knowledge.documents ON DELETE CASCADE)",
    "CREATE INDEX chunks_document ON knowledge.chunks (kb, owner, document_id)",
    "CREATE INDEX chunks_embedding ON knowledge.chunks USING hnsw (embedding vector_cosine_ops)",
    "CREATE TABLE knowledge.postings (kb text NOT NULL, owner text NOT NULL, term text NOT NULL,"
    " chunk bigint NOT NULL REFERENCES knowledge.chunks (id) ON DELETE CASCADE,"
    " tf int NOT NULL, dl int NOT NULL, PRIMARY KEY (kb, owner, term, chunk) INCLUDE (tf, dl))",
    "CREATE INDEX postings_chunk ON knowledge.postings (chunk)",
    "CREATE TABLE knowledge.corpus (kb text NOT NULL, owner text NOT NULL,"
    " chunks bigint NOT NULL, total_length bigint NOT NULL, PRIMARY KEY (kb, owner))",
    "CREATE TABLE knowledge.imports (kb text NOT NULL, source text NOT NULL,"
    " documents int NOT NULL, chunks int NOT NULL,"
    " imported_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (kb, source))",
]


def _old_knowledge_base(url: str, store: KnowledgeStore) -> None:
    """Rewrite the database as the old layout holding what ``store`` wrote (owner "")."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = {
            table: conn.execute(f"SELECT * FROM knowledge.{table}").fetchall()
            for table in ("bases", "documents", "chunks", "postings", "corpus")
        }
        conn.execute("DROP SCHEMA knowledge CASCADE")
        for statement in OLD_SCHEMA:
            conn.execute(statement)
        for row in rows["bases"]:
            conn.execute("INSERT INTO knowledge.bases VALUES (%s, %s, %s, %s)", row[:4])
        for row in rows["documents"]:  # collection "shared" -> owner "", no metadata
            conn.execute(
                "INSERT INTO knowledge.documents VALUES (%s, '', %s, %s, %s, %s, %s, %s, %s, %s,"
                " %s, %s, %s)",
                (row[0], *row[2:-1]),
            )
        for row in rows["chunks"]:
            conn.execute(
                "INSERT INTO knowledge.chunks VALUES (%s, %s, '', %s, %s, %s, %s, %s, %s, %s, %s,"
                " %s, %s)",
                (row[0], row[1], *row[3:-1]),  # the old layout had no page (the last column)
            )
        for row in rows["postings"]:
            conn.execute(
                "INSERT INTO knowledge.postings VALUES (%s, '', %s, %s, %s, %s)",
                (row[0], *row[2:]),
            )
        for row in rows["corpus"]:
            conn.execute("INSERT INTO knowledge.corpus VALUES (%s, '', %s, %s)", (row[0], *row[2:]))
        conn.execute("SELECT setval('knowledge.chunk_ids', (SELECT max(id) FROM knowledge.chunks))")


async def test_a_knowledge_base_from_before_collections_becomes_shared_once(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    knowledge_db: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings()
    upload = LoadedDocument("upload:key-1/n.md", "Upload", "The canary sings.", "upload:key-1/n.md")
    first = await KnowledgeStore.open(settings, embeddings=embedder, name="kb")
    await first.ingest_documents([HANDBOOK, upload])
    before = await first.search("canary roll back", lambda_mult=0.5, top_k=5)
    await first.close()
    _old_knowledge_base(knowledge_db, first)

    caplog.set_level(logging.WARNING, logger="tools.knowledge.schema")
    for _ in range(2):  # the second start finds nothing to migrate
        store = await KnowledgeStore.open(settings, embeddings=embedder, name="kb")
        try:
            for owner in ("key-1", "key-2"):
                listed = await store.list_documents(Scope(owner))
                assert {(d.title, d.collection) for d in listed if d.collection == "shared"} == {
                    ("Deploy handbook", "shared"),
                    ("Upload", "shared"),
                }
            after = await store.search(
                "canary roll back", lambda_mult=0.5, top_k=5, scope=Scope("key-2")
            )
            assert [(h.chunk_id, h.relevance) for h in after.hits] == [
                (h.chunk_id, h.relevance) for h in before.hits
            ]
            # writes work on the migrated tables (metadata column added in place)
            await store.ingest_documents([NOTE], collection=private_collection("key-1"))
            assert len(await store.list_documents(Scope("key-1"))) == 3
        finally:
            await store.close()
    migrated = [r for r in caplog.records if "migrated to collections" in r.getMessage()]
    assert len(migrated) == 1 and "2 document(s)" in migrated[0].getMessage()
