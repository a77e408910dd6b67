"""Graph scenarios on the Redis savers give the same results, states and state history as on
`InMemorySaver`, through the sync and the async API, on Redis 7, Redis 6.2 and Redis Cluster."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver

from tests.checkpointer.conftest import open_saver
from tests.checkpointer.scenarios import SCENARIOS, Env, Mode, Normalizer
from tests.support.cluster import RedisClusterServers
from tests.support.servers import RedisServer

MODES: list[Mode] = ["sync", "async"]


def stored_view(tuples: list[CheckpointTuple]) -> Any:
    """What a saver returns for a thread, minus channel versions (their format is per saver),
    newest first across namespaces (InMemorySaver lists namespace by namespace)."""
    norm = Normalizer()
    tuples = sorted(tuples, key=lambda t: t.config["configurable"]["checkpoint_id"], reverse=True)
    return norm(
        [
            {
                "config": t.config,
                "parent": t.parent_config,
                "values": t.checkpoint["channel_values"],
                "metadata": t.metadata,
                "writes": t.pending_writes,
            }
            for t in tuples
        ]
    )


async def check_scenario(name: str, mode: Mode, url: str, **options: Any) -> None:
    thread = f"thread-{uuid.uuid4()}"
    reference = InMemorySaver()
    expected = await SCENARIOS[name](Env(reference, mode), thread)
    async with open_saver(url, mode, **options) as saver:
        actual = await SCENARIOS[name](Env(saver, mode), thread)
    assert actual == expected
    # A new saver (nothing cached) reads back the same thread, every namespace included.
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    async with open_saver(url, "async", **options) as fresh:
        stored = [t async for t in fresh.alist(config)]
    assert stored_view(stored) == stored_view(list(reference.list(config)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_scenario_matches_in_memory(
    name: str, mode: Mode, shared_url: str, key_prefix: str
) -> None:
    await check_scenario(name, mode, shared_url, key_prefix=key_prefix)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_scenarios_on_redis_cluster(mode: Mode, redis_cluster: RedisClusterServers) -> None:
    for name in SCENARIOS:
        await check_scenario(name, mode, redis_cluster.url, key_prefix=f"t{uuid.uuid4().hex}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_scenarios_on_redis_6_2(mode: Mode, redis_62: RedisServer) -> None:
    import redis

    assert redis.Redis(port=redis_62.port).info("server")["redis_version"].startswith("6.2")
    for name in SCENARIOS:
        await check_scenario(name, mode, redis_62.url)


async def test_keep_latest_refuses_delta_channel_threads(shared_url: str, key_prefix: str) -> None:
    """keep_latest would cut the history a DeltaChannel rebuilds its value from: refused, and
    nothing is pruned (the other thread of the call neither)."""
    async with open_saver(shared_url, "async", key_prefix=key_prefix) as saver:
        await SCENARIOS["delta_channel"](Env(saver, "async"), "delta")
        await SCENARIOS["send_fan_out"](Env(saver, "async"), "plain")
        before = {
            t: [c async for c in saver.alist({"configurable": {"thread_id": t}})]
            for t in ("delta", "plain")
        }
        assert any("counters_since_delta_snapshot" in c.metadata for c in before["delta"])
        with pytest.raises(NotImplementedError, match="DeltaChannel"):
            await saver.aprune(["plain", "delta"], strategy="keep_latest")
        for thread, tuples in before.items():
            after = [c async for c in saver.alist({"configurable": {"thread_id": thread}})]
            assert stored_view(after) == stored_view(tuples)
        await saver.aprune(["delta"], strategy="delete")
        assert [c async for c in saver.alist({"configurable": {"thread_id": "delta"}})] == []


@pytest.mark.slow
async def test_cross_thread_operations_on_redis_cluster(redis_cluster: RedisClusterServers) -> None:
    """list(None) scans every primary; delete_for_runs and copy_thread span slots and nodes."""
    prefix = f"x{uuid.uuid4().hex[:8]}"
    async with open_saver(redis_cluster.url, "async", key_prefix=prefix, ttl=10) as saver:
        threads = [f"t{i}" for i in range(12)]  # spread over the three masters
        for thread in threads:
            await SCENARIOS["send_fan_out"](Env(saver, "async"), thread)
            await saver.aput(
                {"configurable": {"thread_id": thread, "checkpoint_ns": ""}},
                {
                    "v": 4,
                    "id": str(uuid.uuid4()),
                    "ts": "",
                    "channel_values": {},
                    "channel_versions": {},
                    "versions_seen": {},
                    "updated_channels": None,
                },
                {"run_id": "shared-run"},
                {},
            )
        everything = [t async for t in saver.alist(None)]
        assert {t.config["configurable"]["thread_id"] for t in everything} == set(threads)
        await saver.adelete_for_runs(["shared-run"])
        left = [t async for t in saver.alist(None, filter={"run_id": "shared-run"})]
        assert left == []
        await saver.acopy_thread("t0", "copy-of-t0")
        copied = [t async for t in saver.alist({"configurable": {"thread_id": "copy-of-t0"}})]
        original = [t async for t in saver.alist({"configurable": {"thread_id": "t0"}})]
        assert stored_view(copied)[0]["values"] == stored_view(original)[0]["values"]
        assert len(copied) == len(original) > 0
