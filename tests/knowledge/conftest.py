"""Fixtures of the knowledge tests: one real embedding model per session, a store per test.

Everything is real: the bundled all-MiniLM-L6-v2 model and Postgres 16 with pgvector (one
embedded pgserver for the session, a fresh database per test).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from config import Settings, load_settings
from tests.support.pgvector import reachable_dir
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbeddings:
    """The bundled MiniLM, loaded once for the whole run."""
    return SentenceTransformerEmbeddings("all-MiniLM-L6-v2", batch_size=16)


@pytest.fixture
def embedded_data_dir() -> Iterator[Path]:
    """A DATA_DIR for the embedded defaults (its own pgserver), removed after the test."""
    root = reachable_dir("sy-kbdata-")
    yield root / "data"
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def knowledge_db(pgvector_db: str) -> str:
    """A fresh database on the session's embedded pgvector Postgres, for one test."""
    return pgvector_db


@pytest.fixture
def make_settings(tmp_path: Path, knowledge_db: str) -> Callable[..., Settings]:
    """Settings with DATA_DIR in tmp_path, a fresh pgvector database, small chunks."""

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "database_url": knowledge_db,
            "chunk_size": 400,
            "chunk_overlap": 80,
            "enable_reranking": False,
        }
        values.update(overrides)
        return load_settings(**values)

    return make


@pytest.fixture
async def store(
    make_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> AsyncIterator[KnowledgeStore]:
    """An empty knowledge base on a real Postgres (pgvector), closed after the test."""
    opened = await KnowledgeStore.open(make_settings(), embeddings=embedder, name="kb")
    yield opened
    await opened.close()


CORPUS: dict[str, str] = {
    "keys.md": (
        "# Rotating API keys\n\n"
        "API keys must be rotated every 90 days. Run `keyctl rotate --all` to issue new keys; "
        "the old keys stay valid for 24 hours so clients can switch over.\n\n"
        "## Revoking a key\n\n"
        "A leaked key is revoked at once with `keyctl revoke KEY_ID`. Revoked keys cannot be "
        "restored.\n"
    ),
    "backups.md": (
        "# Backups\n\n"
        "Database backups run nightly at 02:00 UTC and are kept for 30 days. Restores are "
        "tested every month on a staging copy.\n\n"
        "## Restoring\n\n"
        "To restore, stop the API, run `pg_restore` with the latest dump, then start the API "
        "again.\n"
    ),
    "errors.txt": (
        "Error E1042 means the upload exceeded the size limit. Split the file or raise "
        "MAX_DOCUMENT_BYTES.\n\n"
        "Error E2001 means the embedding model could not be loaded. Check EMBEDDING_MODEL.\n"
    ),
    "cats.rst": (
        "Cats\n====\n\n"
        "Domestic cats sleep between twelve and sixteen hours a day. Kittens sleep even more "
        "while they grow.\n\n"
        "Feeding\n-------\n\n"
        "Adult cats are fed twice a day; fresh water must always be available.\n"
    ),
}


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    """A small folder of documents the tests write (md, txt, rst)."""
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in CORPUS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
async def corpus_store(store: KnowledgeStore, corpus_dir: Path) -> KnowledgeStore:
    """The test store with `CORPUS` ingested."""
    report = await store.ingest_paths([corpus_dir])
    assert report.ok and report.added == len(CORPUS)
    return store


#: The handbook the routing bench ingests: policies, runbooks with numbered steps and bullet
#: lists, an FAQ (realistic markdown, written for these tests and the bench).
HANDBOOK = Path(__file__).resolve().parents[2] / "bench" / "data" / "handbook"


@pytest.fixture
def handbook_settings(make_settings: Callable[..., Settings]) -> Callable[..., Settings]:
    """Settings with the production chunk size (a section per chunk), overridable."""

    def make(**overrides: Any) -> Settings:
        return make_settings(**{"chunk_size": 1200, "chunk_overlap": 200, **overrides})

    return make


@pytest.fixture
async def handbook_store(
    handbook_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> AsyncIterator[KnowledgeStore]:
    """A knowledge base holding the handbook (7 documents), closed after the test."""
    opened = await KnowledgeStore.open(handbook_settings(), embeddings=embedder, name="handbook")
    report = await opened.ingest_paths([HANDBOOK])
    assert report.ok and report.added == 7
    yield opened
    await opened.close()
