"""TTL: every key of a thread (run index included) gets one, keys expire, reads re-arm it."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, cast

import pytest
import redis
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointMetadata
from langgraph.checkpoint.memory import InMemorySaver

from checkpointer import AsyncRedisSaver, RedisSaver
from checkpointer.base import parse_ttl
from tests.checkpointer.scenarios import SCENARIOS, Env


def prefixed_ttls(url: str, prefix: str) -> dict[bytes, int]:
    client = redis.Redis.from_url(url)
    try:
        return {key: client.pttl(key) for key in client.scan_iter(match=f"{prefix}*", count=1000)}
    finally:
        client.close()


def put_one(saver: RedisSaver, thread: str, **metadata: Any) -> RunnableConfig:
    checkpoint: Any = {
        "v": 4,
        "id": str(uuid.uuid4()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"messages": ["a", "b"], "n": 1},
        "channel_versions": {"messages": "1", "n": "1"},
        "versions_seen": {},
        "updated_channels": None,
    }
    config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    # The extra keys (run_id here) are CheckpointMetadata keys, but a `**` of a plain dict
    # cannot be checked against the TypedDict.
    full_metadata = cast(CheckpointMetadata, {"source": "loop", "step": 0, **metadata})
    stored = saver.put(config, checkpoint, full_metadata, {"messages": "1", "n": "1"})
    saver.put_writes(stored, [("n", 2)], "task")
    return stored


async def test_every_key_has_a_ttl_after_any_operation(shared_url: str, key_prefix: str) -> None:
    """Graph runs (interrupts, subgraphs, fan-out, failures, forks), then copy, prune and
    delete_for_runs: no key under the prefix is left without a TTL."""
    async with AsyncRedisSaver.from_conn_string(shared_url, key_prefix=key_prefix, ttl=30) as saver:
        for name, scenario in SCENARIOS.items():
            await scenario(Env(saver, "async"), name)
        await saver.acopy_thread("subgraph", "copy-of-subgraph")
        await saver.aprune(["time_travel"], strategy="keep_latest")
        run: RunnableConfig = {
            "configurable": {"thread_id": "run-thread", "checkpoint_ns": ""},
            "metadata": {},
        }
        await saver.aput(run, _checkpoint(), {"run_id": "run-1", "source": "loop", "step": 0}, {})
        await saver.adelete_for_runs(["no-such-run"])
    ttls = prefixed_ttls(shared_url, key_prefix)
    assert any(b":run:" in key for key in ttls), "the run index should be under test too"
    assert len(ttls) >= 4 * (len(SCENARIOS) + 1)
    without = [key for key, ttl in ttls.items() if not 0 < ttl <= 30 * 60_000]
    assert without == []


def _checkpoint() -> Any:
    return {
        "v": 4,
        "id": str(uuid.uuid4()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {},
        "channel_versions": {},
        "versions_seen": {},
        "updated_channels": None,
    }


def test_all_keys_of_a_thread_expire_together(shared_url: str, key_prefix: str) -> None:
    with RedisSaver.from_conn_string(shared_url, key_prefix=key_prefix, ttl=0.01) as saver:
        stored = put_one(saver, "t", run_id="r1")
        ttls = prefixed_ttls(shared_url, key_prefix)
        assert len(ttls) == 5  # c, w, b, e and the run index
        assert all(0 < ttl <= 600 for ttl in ttls.values())
        assert saver.get_tuple(stored) is not None
        time.sleep(0.7)
        assert prefixed_ttls(shared_url, key_prefix) == {}
        assert saver.get_tuple(stored) is None
        # The thread starts afresh after expiry (nothing stale cached about its elements).
        again = put_one(saver, "t")
        tup = saver.get_tuple(again)
        assert tup is not None and tup.checkpoint["channel_values"]["messages"] == ["a", "b"]


@pytest.mark.parametrize("refresh", [True, False])
def test_reads_refresh_the_ttl_when_asked(shared_url: str, key_prefix: str, refresh: bool) -> None:
    ttl = {"default_ttl": 1, "refresh_on_read": refresh}
    with RedisSaver.from_conn_string(shared_url, key_prefix=key_prefix, ttl=ttl) as saver:
        stored = put_one(saver, "t")
        client = saver.client
        thread_keys = [k for k in prefixed_ttls(shared_url, key_prefix) if b":run:" not in k]
        for read in (
            lambda: saver.get_tuple(stored),
            lambda: list(saver.list({"configurable": {"thread_id": "t"}})),
            lambda: list(saver.list({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})),
        ):
            for key in thread_keys:
                client.pexpire(key, 5_000)  # as if 55 s had passed
            read()
            ttls = [client.pttl(key) for key in thread_keys]
            if refresh:
                assert all(55_000 < t <= 60_000 for t in ttls), ttls
            else:
                assert all(0 < t <= 5_000 for t in ttls), ttls


def test_ttl_option_forms() -> None:
    assert parse_ttl(None) == (0, False)
    assert parse_ttl(2) == (120_000, True)
    assert parse_ttl({"default_ttl": 0.5, "refresh_on_read": False}) == (30_000, False)
    assert parse_ttl({"default_ttl": None}) == (0, False)
    for bad in (0, -1, "10", True):
        with pytest.raises(ValueError, match="positive number of minutes"):
            parse_ttl(bad)  # type: ignore[arg-type]


async def test_expired_thread_reads_like_a_new_one(shared_url: str, key_prefix: str) -> None:
    """A graph on an expired thread behaves like InMemorySaver on a new thread."""
    async with AsyncRedisSaver.from_conn_string(
        shared_url, key_prefix=key_prefix, ttl=0.01
    ) as saver:
        await SCENARIOS["time_travel"](Env(saver, "async"), "thread")
        await asyncio.sleep(0.7)
        got = await SCENARIOS["send_fan_out"](Env(saver, "async"), "thread")
    assert got == await SCENARIOS["send_fan_out"](Env(InMemorySaver(), "async"), "thread")
