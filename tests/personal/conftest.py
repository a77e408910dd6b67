"""Fixtures of the personal-agent tests: real Postgres (the machine's 15, and an embedded 16 with
pgvector), Qdrant local mode, deterministic or real embeddings, a service per vector backend."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from qdrant_client import QdrantClient

from tests.personal.support import HashEmbeddings
from tools.embedded import EmbeddedPostgres
from tools.personal.migrations import migrate
from tools.personal.pgvector import PgVectorItemIndex
from tools.personal.service import PersonalLimits, PersonalService
from tools.personal.vectors import QdrantItemIndex


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    """A private embedded Postgres 16 (with pgvector) for this test session."""
    server = EmbeddedPostgres(Path(tmp_path_factory.mktemp("pgserver")))
    yield server
    server.release()


def fresh_database(server: EmbeddedPostgres) -> str:
    """URL of a new, empty database on the embedded server."""
    name = f"personal_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, query = server.url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}?{query}"


@pytest.fixture(scope="session")
def embedded_pg(embedded_server: EmbeddedPostgres) -> str:
    """URL of a database on the embedded Postgres 16 shared by this session's tests."""
    return fresh_database(embedded_server)


def new_pool(url: str) -> AsyncConnectionPool:
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=4,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )


@pytest.fixture
async def pg_pool(postgres_url: str) -> AsyncIterator[AsyncConnectionPool]:
    """A pool on the machine's Postgres (a temporary database), with the schema migrated."""
    pool = new_pool(postgres_url)
    await pool.open()
    await migrate(pool)
    yield pool
    await pool.close()


@pytest.fixture
async def embedded_pool(embedded_pg: str) -> AsyncIterator[AsyncConnectionPool]:
    """A pool on the embedded Postgres 16, with the schema migrated."""
    pool = new_pool(embedded_pg)
    await pool.open()
    await migrate(pool)
    yield pool
    await pool.close()


@pytest.fixture
def hash_embeddings() -> Embeddings:
    return HashEmbeddings()


@pytest.fixture(scope="session")
def minilm() -> Embeddings:
    """The bundled all-MiniLM-L6-v2, loaded offline (as the app loads it)."""
    from tools.providers.embeddings import SentenceTransformerEmbeddings

    return SentenceTransformerEmbeddings("all-MiniLM-L6-v2")


@pytest.fixture
def user() -> str:
    """A fresh user id (tests share one database; users never see each other's rows)."""
    return f"user-{uuid.uuid4().hex[:10]}"


async def make_service(
    backend: str, pool: AsyncConnectionPool, embeddings: Embeddings, **limits: object
) -> PersonalService:
    index = (
        QdrantItemIndex(QdrantClient(":memory:"))
        if backend == "qdrant"
        else PgVectorItemIndex(pool)
    )
    service = PersonalService(pool, index, embeddings, PersonalLimits(**limits))  # type: ignore[arg-type]
    await service.setup()
    return service


@pytest.fixture(params=["qdrant", "pgvector"])
async def service(
    request: pytest.FixtureRequest,
    hash_embeddings: Embeddings,
    postgres_url: str,
    embedded_pg: str,
) -> AsyncIterator[PersonalService]:
    """The engine on each backend: Qdrant local mode + the machine's Postgres 15, or pgvector in
    the embedded Postgres 16 (rows and vectors in one database)."""
    pool = new_pool(postgres_url if request.param == "qdrant" else embedded_pg)
    await pool.open()
    yield await make_service(request.param, pool, hash_embeddings)
    await pool.close()


@pytest.fixture
async def qdrant_service(postgres_url: str) -> AsyncIterator[PersonalService]:
    """The engine on one backend (Qdrant local mode + the machine's Postgres), for tests whose
    subject is not the vector backend."""
    pool = new_pool(postgres_url)
    await pool.open()
    yield await make_service("qdrant", pool, HashEmbeddings())
    await pool.close()
