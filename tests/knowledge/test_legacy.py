"""An embedded DATA_DIR in the old layout (Qdrant local mode + a tantivy folder) is imported into
Postgres on the first start, once, with a log line; nothing ingested is lost."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from config import Settings
from tests.knowledge.conftest import CORPUS
from tools.knowledge.chunking import chunk_text
from tools.knowledge.ingest import CHUNKER_REVISION, chunk_id, content_hash, embedding_input
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

KB = "knowledge"


def write_old_layout(data_dir: Path, embedder: SentenceTransformerEmbeddings) -> dict[str, str]:
    """What the previous engine left under DATA_DIR: ``<kb>_chunks`` (named ``dense`` vectors +
    payloads), ``<kb>_documents`` (vector-less registry points) and a tantivy folder.
    Returns title -> document id."""
    (data_dir / "lexical" / KB).mkdir(parents=True)
    (data_dir / "lexical" / KB / "meta.json").write_text("{}")
    client = QdrantClient(path=str(data_dir / "qdrant"))
    client.create_collection(
        f"{KB}_chunks",
        vectors_config={"dense": models.VectorParams(size=384, distance=models.Distance.DOT)},
        metadata={"embedding_model": "all-MiniLM-L6-v2"},
    )
    client.create_collection(f"{KB}_documents", vectors_config={})
    ids: dict[str, str] = {}
    for name, text in CORPUS.items():
        doc_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"old:{name}"))
        title = name.split(".")[0]
        version = content_hash(title, text + CHUNKER_REVISION)
        chunks = chunk_text(text, 400, 80)
        vectors = embedder.embed_array([embedding_input(title, c) for c in chunks])
        client.upsert(
            f"{KB}_chunks",
            points=[
                models.PointStruct(
                    id=chunk_id(doc_id, version, c.index),
                    vector={"dense": vectors[i].tolist()},
                    payload={
                        "document_id": doc_id,
                        "version": version,
                        "title": title,
                        "source": f"/old/{name}",
                        "external_id": None,
                        "chunk_index": c.index,
                        "heading": c.heading,
                        "start": c.start,
                        "end": c.end,
                        "text": c.text,
                    },  # fmt: skip
                )
                for i, c in enumerate(chunks)
            ],
        )
        client.upsert(
            f"{KB}_documents",
            points=[
                models.PointStruct(
                    id=doc_id,
                    vector={},
                    payload={
                        "title": title,
                        "source": f"/old/{name}",
                        "external_id": None,
                        "content_hash": content_hash(title, text),
                        "version": version,
                        "signature": "old",
                        "chunk_count": len(chunks),
                        "chars": len(text),
                        "created_at": "2026-01-01T00:00:00+00:00",
                        "updated_at": "2026-01-01T00:00:00+00:00",
                    },  # fmt: skip
                )
            ],
        )
        ids[title] = doc_id
    client.close()
    return ids


async def test_an_old_embedded_data_dir_is_imported_once_with_a_log_line(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings()
    ids = write_old_layout(settings.storage.data_dir, embedder)
    with caplog.at_level(logging.WARNING, logger="tools.knowledge.legacy"):
        store = await KnowledgeStore.open(settings, embeddings=embedder)
    try:
        lines = [r.getMessage() for r in caplog.records]
        assert any("importing 4 document(s) from the old embedded layout" in m for m in lines)
        assert any("imported 4 document(s)" in m for m in lines)
        docs = {d.title: d for d in await store.list_documents()}
        assert {t: d.id for t, d in docs.items()} == ids
        assert docs["keys"].created_at.startswith("2026-01-01")  # the registry came along
        for lam in (0.0, 1.0):  # both legs find the imported chunks
            hits = (await store.search("keyctl rotate keys", lambda_mult=lam, top_k=1)).hits
            assert hits[0].title == "keys", lam
        stats = await store.stats()
        assert (
            stats["chunks"] == stats["lexical_chunks"] == sum(d.chunk_count for d in docs.values())
        )
    finally:
        await store.close()
    data_dir = settings.storage.data_dir
    assert not (data_dir / "lexical" / KB).exists()
    assert (data_dir / "lexical.imported" / KB / "meta.json").exists()
    assert (data_dir / "qdrant" / "collection" / f"{KB}_chunks").is_dir()  # left as it was

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tools.knowledge.legacy"):
        again = await KnowledgeStore.open(settings, embeddings=embedder)
    try:
        assert not [r for r in caplog.records if "import" in r.getMessage()]
        assert len(await again.list_documents()) == 4
    finally:
        await again.close()
