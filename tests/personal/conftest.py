"""Fixtures of the personal-agent tests: real Postgres (the machine's 15 without pgvector, and
the session's embedded 16 with it), deterministic or real embeddings, the engine on each."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from langchain_core.embeddings import Embeddings
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from tests.personal.support import HashEmbeddings
from tests.support.pgvector import PgvectorServer
from tools.personal.service import PersonalLimits, PersonalService


@pytest.fixture(scope="session")
def embedded_pg(pgvector_server: PgvectorServer) -> str:
    """URL of a database on the session's pgvector Postgres 16, shared by this session's
    personal tests (owners never see each other's rows)."""
    return pgvector_server.database()


def new_pool(url: str) -> AsyncConnectionPool:
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=4,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )


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
    pool: AsyncConnectionPool, embeddings: Embeddings, **limits: object
) -> PersonalService:
    service = PersonalService(pool, embeddings, PersonalLimits(**limits))  # type: ignore[arg-type]
    await service.setup()
    return service


@pytest.fixture
async def service(hash_embeddings: Embeddings, embedded_pg: str) -> AsyncIterator[PersonalService]:
    """The engine on a Postgres with pgvector (rows and vectors in one database)."""
    pool = new_pool(embedded_pg)
    await pool.open()
    yield await make_service(pool, hash_embeddings)
    await pool.close()


@pytest.fixture
async def service_without_pgvector(postgres_url: str) -> AsyncIterator[PersonalService]:
    """The engine on the machine's Postgres 15, which has no pgvector: semantic search off."""
    pool = new_pool(postgres_url)
    await pool.open()
    yield await make_service(pool, HashEmbeddings())
    await pool.close()
