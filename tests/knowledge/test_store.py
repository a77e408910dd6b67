"""KnowledgeStore ingestion, registry, deletion and owner scoping on a real Postgres (pgvector)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from config import Settings
from tools.knowledge.engine import KnowledgeEngine
from tools.knowledge.schema import KnowledgeEngineError
from tools.knowledge.scope import Scope, private_collection
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import IngestProgress
from tools.providers.embeddings import SentenceTransformerEmbeddings


async def consistent(store: KnowledgeStore) -> dict[str, int]:
    """Counts of chunks and of the lexical statistics, after asserting they agree with the
    registry."""
    stats = await store.stats()
    expected = sum(d.chunk_count for d in await store.list_documents())
    assert stats["chunks"] == stats["lexical_chunks"] == expected, stats
    return stats


async def titles_found(store: KnowledgeStore, query: str, lam: float = 0.0) -> list[str]:
    result = await store.search(query, lambda_mult=lam, top_k=10, fetch_k=10)
    return [h.title for h in result.hits]


async def test_ingest_folder_lists_documents_and_finds_them(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    events: list[IngestProgress] = []
    report = await store.ingest_paths([corpus_dir], progress=events.append)
    assert report.ok and report.added == 4 and report.failed_documents == 0
    docs = await store.list_documents()
    assert sorted(d.title for d in docs) == ["Backups", "Cats", "Rotating API keys", "errors"]
    assert all(d.chunk_count >= 1 and len(d.content_hash) == 32 for d in docs)
    await consistent(store)
    assert events[-1].files_done == events[-1].files_total == 4
    assert events[-1].documents_done == 4 and events[-1].chunks_indexed == report.chunks
    hits = (await store.search("how long do cats sleep", top_k=1)).hits
    assert hits[0].title == "Cats"


async def test_reingesting_unchanged_content_is_skipped(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    first = await store.ingest_paths([corpus_dir])
    before = await consistent(store)
    again = await store.ingest_paths([corpus_dir, corpus_dir / "keys.md"])
    assert (again.added, again.replaced, again.unchanged) == (0, 0, 5)
    assert again.chunks == 0
    assert await consistent(store) == before
    assert first.chunks == before["chunks"]


async def test_changed_file_replaces_its_old_chunks(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    (old,) = [d for d in await store.list_documents() if d.title == "Backups"]
    assert "Backups" in await titles_found(store, "pg_restore")
    (corpus_dir / "backups.md").write_text(
        "# Backups\n\nSnapshots are taken hourly with zfs and shipped offsite.\n"
    )
    report = await store.ingest_paths([corpus_dir])
    assert (report.replaced, report.unchanged) == (1, 3)
    (new,) = [d for d in await store.list_documents() if d.title == "Backups"]
    assert new.id == old.id and new.version != old.version and new.created_at == old.created_at
    assert "Backups" not in await titles_found(store, "pg_restore")
    dense_hits = (await store.search("pg_restore", lambda_mult=1.0, top_k=10)).hits
    assert all("pg_restore" not in h.text for h in dense_hits), "old chunks left the dense leg"
    assert "Backups" in await titles_found(store, "zfs snapshots hourly")
    await consistent(store)


async def test_bad_files_fail_alone_and_nothing_indexed_is_lost(
    store: KnowledgeStore, corpus_dir: Path, tmp_path: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    before = await consistent(store)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "binary.txt").write_bytes(b"\x7fELF\x00\x00\x00binary")
    (bad / "empty.md").write_bytes(b"")
    (bad / "latin1.txt").write_bytes("résumé".encode("latin-1"))
    with (bad / "huge.txt").open("wb") as handle:  # sparse 200 MB
        handle.truncate(200 * 1024 * 1024)
    (bad / "good.md").write_text("# Good\n\nThe deploy pipeline runs on every merge.\n")
    report = await store.ingest_paths([bad, tmp_path / "missing.md"])
    errors = {Path(f.path).name: f.error for f in report.files if f.status == "error"}
    assert set(errors) == {"binary.txt", "empty.md", "latin1.txt", "huge.txt", "missing.md"}
    assert "looks binary" in str(errors["binary.txt"])
    assert "empty" in str(errors["empty.md"])
    assert "not valid UTF-8" in str(errors["latin1.txt"])
    assert "MAX_DOCUMENT_BYTES" in str(errors["huge.txt"])
    assert "no such file" in str(errors["missing.md"])
    assert report.added == 1 and not report.ok
    after = await consistent(store)
    assert after["documents"] == before["documents"] + 1
    assert "Rotating API keys" in await titles_found(store, "keyctl rotate")


class ExplodingEmbeddings(Embeddings):
    """The real model, except that any text containing EXPLODE fails to embed."""

    def __init__(self, inner: SentenceTransformerEmbeddings) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.model_name = inner.model_name

    def embed_array(self, texts: Any) -> Any:
        if any("EXPLODE" in t for t in texts):
            raise RuntimeError("embedding backend crashed")
        return self.inner.embed_array(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


async def test_failed_replace_keeps_the_old_version_and_others_still_go_in(
    make_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings, tmp_path: Path
) -> None:
    store = await KnowledgeStore.open(
        make_settings(), embeddings=ExplodingEmbeddings(embedder), name="kb"
    )
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "a.md").write_text("# Alpha\n\nAlpha covers the payment refunds process.\n")
        await store.ingest_paths([docs])
        (old,) = await store.list_documents()
        (docs / "a.md").write_text("# Alpha\n\nEXPLODE the new refunds text.\n")
        (docs / "b.md").write_text("# Beta\n\nBeta explains invoice numbering.\n")
        report = await store.ingest_paths([docs])
        by_name = {Path(f.path).name: f for f in report.files}
        assert by_name["a.md"].status == "error"
        assert "embedding backend crashed" in str(by_name["a.md"].documents[0].error)
        assert by_name["b.md"].status == "ok" and report.added == 1
        (alpha,) = [d for d in await store.list_documents() if d.title == "Alpha"]
        assert alpha.version == old.version
        assert "Alpha" in await titles_found(store, "payment refunds")
        await consistent(store)
    finally:
        await store.close()


async def test_delete_removes_document_from_every_index(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    await store.ingest_paths([corpus_dir])
    (keys,) = [d for d in await store.list_documents() if d.title == "Rotating API keys"]
    assert await store.get_document(keys.id) == keys
    assert await store.delete_document(keys.id) is True
    assert await store.get_document(keys.id) is None
    assert "Rotating API keys" not in await titles_found(store, "keyctl rotate revoke", lam=0.0)
    assert "Rotating API keys" not in await titles_found(store, "keyctl rotate revoke", lam=1.0)
    stats = await consistent(store)
    assert stats["documents"] == 3
    assert await store.delete_document(keys.id) is False


async def test_uploads_skip_unchanged_replace_changed_and_respect_the_size_limit(
    make_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> None:
    store = await KnowledgeStore.open(
        make_settings(max_document_bytes=2000), embeddings=embedder, name="kb"
    )
    try:
        first = await store.ingest_bytes("faq.md", b"# FAQ\n\nWe ship worldwide.")
        assert first.added == 1
        assert (await store.ingest_bytes("faq.md", b"# FAQ\n\nWe ship worldwide.")).unchanged == 1
        assert (await store.ingest_bytes("faq.md", b"# FAQ\n\nEU only.")).replaced == 1
        (doc,) = await store.list_documents()
        assert doc.source == "upload:faq.md" and doc.chunk_count == 1
        big = await store.ingest_bytes("big.txt", b"x " * 2000)
        assert big.files[0].status == "error" and "MAX_DOCUMENT_BYTES" in str(big.files[0].error)
        await consistent(store)
    finally:
        await store.close()


async def test_jsonl_corpus_keeps_external_ids(store: KnowledgeStore, tmp_path: Path) -> None:
    rows = [
        {"_id": "101", "title": "Vitamin D", "text": "Vitamin D deficiency weakens bones."},
        {"_id": "102", "title": "Iron", "text": "Iron deficiency causes anaemia and fatigue."},
    ]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    report = await store.ingest_paths([corpus])
    assert report.added == 2 and report.files[0].status == "partial"
    assert "invalid JSON" in report.files[0].warnings[0]
    hits = (await store.search("anaemia", lambda_mult=0.0, top_k=1)).hits
    assert hits[0].external_id == "102"


async def test_private_collections_see_only_their_own_documents(
    store: KnowledgeStore, corpus_dir: Path
) -> None:
    alice, bob = Scope("a"), Scope("b")
    await store.ingest_paths([corpus_dir], collection=private_collection("a"))
    report = await store.ingest_paths([corpus_dir / "cats.rst"], collection=private_collection("b"))
    assert report.added == 1
    assert len(await store.list_documents(alice)) == 4 and len(await store.list_documents(bob)) == 1
    assert await store.list_documents() == []  # the operator reads the shared collections only
    for lam in (0.0, 0.5, 1.0):
        found = await store.search("rotate the API keys", lambda_mult=lam, top_k=10, scope=bob)
        assert {h.title for h in found.hits} <= {"Cats"}
    found = await store.search("keyctl", lambda_mult=0.0, scope=alice)
    assert found.hits[0].title == "Rotating API keys" and found.hits[0].collection == "private"
    (cats,) = await store.list_documents(bob)
    assert cats.collection == "private"
    # the same file in two collections is two documents, with two ids
    assert await store.get_document(cats.id, alice) is None
    assert await store.delete_document(cats.id, private_collection("b"))
    assert len(await store.list_documents(alice)) == 4
    for scope in (alice, bob):
        stats = await store.stats(scope)
        expected = sum(d.chunk_count for d in await store.list_documents(scope))
        assert stats["chunks"] == stats["lexical_chunks"] == expected, stats


async def test_reopening_keeps_everything(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    corpus_dir: Path,
) -> None:
    store = await KnowledgeStore.open(make_settings(), embeddings=embedder, name="kb")
    await store.ingest_paths([corpus_dir])
    await store.close()
    reopened = await KnowledgeStore.open(make_settings(), embeddings=embedder, name="kb")
    try:
        assert len(await reopened.list_documents()) == 4
        assert (await reopened.ingest_paths([corpus_dir])).unchanged == 4
        assert "Backups" in await titles_found(reopened, "pg_restore")
    finally:
        await reopened.close()


async def test_opening_with_another_embedding_model_is_refused(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    corpus_dir: Path,
) -> None:
    store = await KnowledgeStore.open(make_settings(), embeddings=embedder, name="kb")
    await store.ingest_paths([corpus_dir])
    await store.close()
    other = ExplodingEmbeddings(embedder)
    other.model_name = "another-384-dim-model"  # same vector size, different space
    with pytest.raises(KnowledgeEngineError, match="built with the embedding model"):
        await KnowledgeStore.open(make_settings(), embeddings=other, name="kb")


async def test_a_replace_that_fails_mid_transaction_keeps_the_old_version(
    store: KnowledgeStore, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.ingest_paths([corpus_dir])
    before = await consistent(store)

    def crash(*args: Any) -> None:
        raise ConnectionError("postgres went away before the commit")

    # Fails after the rows, the old chunks' removal and the new chunks were sent.
    monkeypatch.setattr(KnowledgeEngine, "_add_to_corpus", crash)
    (corpus_dir / "errors.txt").write_text("Error E3003 means the disk is full.\n")
    report = await store.ingest_paths([corpus_dir / "errors.txt"])
    assert report.failed_documents == 1 and "previous version is kept" in str(report.to_dict())
    monkeypatch.undo()
    assert await consistent(store) == before
    assert "errors" in await titles_found(store, "E1042 upload size limit")
    assert "errors" not in await titles_found(store, "E3003 disk full")
    assert (await store.ingest_paths([corpus_dir / "errors.txt"])).replaced == 1
    assert "errors" in await titles_found(store, "E3003 disk full")
    await consistent(store)
