"""Shared fixtures: the machine's real Redis and Postgres, free ports, private redis-servers.

Isolation:
- Redis: each test gets its own logical database on the shared server (chosen per xdist worker),
  flushed before and after the test. Tests that need a server of their own (a cluster, one they
  stop) start a private `redis-server` on free ports through `private_redis`.
- Postgres: one temporary database per test run, dropped at the end.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psycopg
import psycopg.sql
import pytest
import redis
import redis.asyncio as aredis

from config import Settings
from tests.support.hang_report import reported_after
from tests.support.pgvector import PgvectorServer
from tests.support.servers import RedisServer, free_port
from tests.support.stub_openai import StubOpenAI, echo_responder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The data probes of routing are bounded by wall time (ROUTE_DATA_TIMEOUT_SECONDS, 1 s): on a
# machine loaded by other jobs a probe can take longer, and the message would be routed as if
# the user had no data. Tests assert routing decisions, not the machine's speed, so they give
# the probes a generous bound (the tests of the bound itself pass their own).
os.environ.setdefault("ROUTE_DATA_TIMEOUT_SECONDS", "30")
# Every app a test starts seeds the analytics dataset and (re)creates its reader role. Roles
# are cluster-wide, so this test process uses one of its own (dropped at the end of the run)
# instead of the default role, which it would leave behind on the machine's Postgres; the
# variable reaches Settings built in tests and the API processes they start.
ANALYTICS_TEST_READER = os.environ.setdefault(
    "ANALYTICS_READER_USER", f"sy_test_reader_{uuid.uuid4().hex[:10]}"
)

SHARED_REDIS_HOST = os.environ.get("TEST_REDIS_HOST", "127.0.0.1")
SHARED_REDIS_PORT = int(os.environ.get("TEST_REDIS_PORT", "6379"))
SHARED_POSTGRES_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


_claimed_db: int | None = None


def _claim_database() -> int:
    """A logical database (1..15) of the shared Redis that no other test process is using.

    Concurrent pytest runs on one machine (xdist workers, or two developers' runs) would flush
    each other's data if they shared a database; each process claims one with an expiring
    `SET NX` lock in database 0 and releases it at exit.
    """
    global _claimed_db
    if _claimed_db is not None:
        return _claimed_db
    client = redis.Redis(host=SHARED_REDIS_HOST, port=SHARED_REDIS_PORT, db=0)
    for db in range(1, 16):
        if client.set(f"switchyard-tests:db-lock:{db}", os.getpid(), nx=True, ex=6 * 3600):
            _claimed_db = db
            atexit.register(client.delete, f"switchyard-tests:db-lock:{db}")
            return db
    raise RuntimeError(
        "all 15 test databases of the shared Redis are claimed by other test runs; wait for "
        "them, or delete stale locks: redis-cli --scan --pattern 'switchyard-tests:db-lock:*'"
    )


_own_temproot: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Give this run a temporary root of its own (unless one was chosen).

    Tests start embedded Postgres servers (pgserver) with data under `tmp_path`; as root,
    pgserver runs them as its own system user and opens up the directories above the data for
    it. Every pytest run of the same user shares `/tmp/pytest-of-<user>`, and each run's start
    resets that directory to 0700, so a concurrent run (another checkout's suite on a shared
    machine) locked the running servers out of their own data (`pg_ctl: Permission denied`).
    """
    global _own_temproot
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    _own_temproot = tempfile.mkdtemp(prefix="switchyard-pytest-")
    os.environ["PYTEST_DEBUG_TEMPROOT"] = _own_temproot


def pytest_unconfigure(config: pytest.Config) -> None:
    if _own_temproot is not None:
        shutil.rmtree(_own_temproot, ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fail the run at once, with the fix, when the shared services are down."""
    try:
        redis.Redis(host=SHARED_REDIS_HOST, port=SHARED_REDIS_PORT, socket_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.exit(
            f"Redis at {SHARED_REDIS_HOST}:{SHARED_REDIS_PORT} is not answering ({exc}). Start it: "
            'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no',
            returncode=3,
        )
    try:
        psycopg.connect(SHARED_POSTGRES_URL, connect_timeout=3).close()
    except psycopg.Error as exc:
        pytest.exit(
            f"Postgres at {SHARED_POSTGRES_URL} is not answering ({exc}). Start it: "
            "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
            returncode=3,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop this run's analytics reader role (its databases are gone by now)."""
    if not ANALYTICS_TEST_READER.startswith("sy_test_reader_"):
        return  # chosen by whoever runs the tests: theirs to keep
    try:
        with psycopg.connect(SHARED_POSTGRES_URL, autocommit=True, connect_timeout=3) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                [ANALYTICS_TEST_READER],
            )
            conn.execute(
                psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(
                    psycopg.sql.Identifier(ANALYTICS_TEST_READER)
                )
            )
    except psycopg.Error as exc:  # a leftover role is harmless; say so and move on
        print(f"\nnote: analytics reader role {ANALYTICS_TEST_READER} not dropped ({exc})")


@pytest.fixture(autouse=True)
def _hang_report(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print every asyncio task's stack 20 s before pytest-timeout ends a test that hangs (set
    up first, torn down last: it covers the other fixtures' teardown, where a hung app shutdown
    waits)."""
    marker = request.node.get_closest_marker("timeout")
    timeout = (
        float(marker.args[0])
        if marker and marker.args
        else float(request.config.getini("timeout") or 0)
    )
    if timeout <= 30:
        yield
        return
    with reported_after(timeout - 20):
        yield


@pytest.fixture
def redis_db() -> int:
    """The shared Redis's logical database claimed by this test process (1..15)."""
    return _claim_database()


@pytest.fixture
def redis_url(redis_db: int) -> Iterator[str]:
    """URL of an empty logical database on the machine's Redis, flushed after the test."""
    url = f"redis://{SHARED_REDIS_HOST}:{SHARED_REDIS_PORT}/{redis_db}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A sync redis-py client on this test's empty database."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
async def aredis_client(redis_url: str) -> AsyncIterator[aredis.Redis]:
    """An async redis-py client on this test's empty database."""
    client = aredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a temporary database on the machine's Postgres, dropped after the run."""
    name = f"switchyard_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SHARED_POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = SHARED_POSTGRES_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(SHARED_POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[PgvectorServer]:
    """A private embedded Postgres 16 with pgvector (started on first use, once a session):
    the knowledge base needs pgvector, which the machine's Postgres 15 lacks."""
    server = PgvectorServer("sy-pgvector-")
    yield server
    server.stop()


@pytest.fixture
def pgvector_db(pgvector_server: PgvectorServer) -> str:
    """A fresh database on the session's pgvector Postgres, for one test."""
    return pgvector_server.database()


@pytest.fixture
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server on a free port (safe to stop and restart), shut down after."""
    server = RedisServer(port=free_port(), workdir=tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


# --- LLM and settings ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _stub_server() -> Iterator[StubOpenAI]:
    stub = StubOpenAI().start()
    yield stub
    stub.stop()


@pytest.fixture
def stub_openai(_stub_server: StubOpenAI) -> Iterator[StubOpenAI]:
    """The OpenAI-compatible stub server, reset for this test (echo answers, no latency)."""
    _stub_server.reset()
    _stub_server.responder = echo_responder
    _stub_server.latency = 0.0
    yield _stub_server
    _stub_server.reset()
    _stub_server.responder = echo_responder
    _stub_server.latency = 0.0


@pytest.fixture
def make_settings(
    tmp_path: pytest.TempPathFactory, redis_url: str, postgres_url: str
) -> Callable[..., Settings]:
    """Build Settings for a test: the machine's Redis/Postgres, no LLM, fast retries.

    The developer's `.env` is ignored; keyword overrides win.
    """

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "data_dir": tmp_path,
            "redis_url": redis_url,
            "database_url": postgres_url,
            "llm_provider": "none",
            "ollama_base_url": f"http://127.0.0.1:{free_port()}",
            "llm_retry_base_seconds": 0.01,
            "llm_probe_timeout_seconds": 1.0,
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)

    return build


@pytest.fixture
def stub_settings(
    make_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> Callable[..., Settings]:
    """Like `make_settings`, with the OpenAI-compatible provider pointed at the stub server."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "llm_provider": "openai",
            "openai_api_key": "sk-t",
            "openai_base_url": stub_openai.base_url,
        }
        values.update(overrides)
        return make_settings(**values)

    return build
