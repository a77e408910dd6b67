"""Fixtures: the session's temporary database seeded once, a reader role of its own, pools.

The reader role is cluster-wide, so each test session creates its own (`sy_reader_<hex>`) and
drops it at the end; two sessions on one machine never share it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from tools.analytics.context import AnalyticsContext
from tools.analytics.executor import open_reader_pool, reader_conninfo
from tools.analytics.seed import SeedReport, ensure_seeded


@dataclass(frozen=True)
class AnalyticsDB:
    owner_url: str
    reader_user: str
    reader_url: str
    report: SeedReport


def drop_role(owner_url: str, role: str) -> None:
    """Drop a reader role: its grants in this database first, then the role."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
        )
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture(scope="session")
def analytics_db(postgres_url: str) -> Iterator[AnalyticsDB]:
    """The session database with the analytics dataset and a reader role of this session."""
    role = f"sy_reader_{uuid.uuid4().hex[:10]}"
    report = ensure_seeded(postgres_url, reader_user=role)
    yield AnalyticsDB(postgres_url, role, reader_conninfo(postgres_url, role, None), report)
    drop_role(postgres_url, role)


@pytest.fixture
async def reader_pool(analytics_db: AnalyticsDB) -> AsyncIterator[AsyncConnectionPool]:
    """An open pool of reader connections, closed after the test."""
    pool = open_reader_pool(analytics_db.reader_url, max_size=3)
    await pool.open()
    yield pool
    await pool.close()


@pytest.fixture
def make_ctx(reader_pool: AsyncConnectionPool) -> Callable[..., AnalyticsContext]:
    """Build an AnalyticsContext on the reader pool (keyword overrides win)."""

    def build(**overrides: Any) -> AnalyticsContext:
        return AnalyticsContext(pool=reader_pool, **overrides)

    return build


@pytest.fixture
def owner(analytics_db: AnalyticsDB) -> Iterator[psycopg.Connection]:
    """An autocommit connection as the schema owner, for hand-written checks."""
    with psycopg.connect(analytics_db.owner_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def scratch_db(postgres_url: str) -> Iterator[str]:
    """An empty extra database on the same server (for seeding races), dropped after."""
    base, _name = postgres_url.rsplit("/", 1)
    name = f"switchyard_scratch_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield f"{base}/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
