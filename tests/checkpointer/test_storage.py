"""Storage design: one slot per thread, one round trip per operation, values stored once and as
the serializer made them, list channels growing like their elements, options checked."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

import pytest
import redis
import redis.asyncio as aredis
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, CheckpointMetadata
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from redis.cluster import key_slot

from checkpointer import AsyncRedisSaver, CorruptThreadError, RedisSaver
from checkpointer.keys import run_key, thread_keys, thread_of_key
from checkpointer.records import typed
from tests.support.servers import RedisServer


def checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> Any:
    return {
        "v": 4,
        "id": str(uuid.uuid1()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": {},
        "updated_channels": None,
    }


def keys_of(client: redis.Redis, prefix: str) -> list[bytes]:
    return sorted(client.scan_iter(match=f"{prefix}*", count=1000))


@pytest.mark.parametrize("thread_id", ["t", "", "{x}", "}x{", "a{b}c", "%7B", "é/ü:*?", 42])
def test_thread_keys_share_one_slot_and_decode_back(thread_id: Any) -> None:
    keys = thread_keys("cp", thread_id)
    assert len({key_slot(k.encode()) for k in keys.all}) == 1
    assert thread_of_key("cp", keys.checkpoints) == str(thread_id)
    assert keys.all == thread_keys("cp", str(thread_id)).all
    assert thread_keys("cp", "{x}").all != thread_keys("cp", "x").all
    assert "{" not in run_key("cp", "{run}")[len("cp:run:{") : -1]


def test_bad_prefix_and_decoding_client_are_refused() -> None:
    with pytest.raises(ValueError, match="key_prefix"):
        RedisSaver(redis.Redis(), key_prefix="a{b}")
    with pytest.raises(ValueError, match="decode_responses=False"):
        RedisSaver(redis.Redis(decode_responses=True))
    with pytest.raises(ValueError, match="decode_responses=False"):
        AsyncRedisSaver(aredis.Redis(decode_responses=True))


def test_get_next_version_increases_and_differs_per_fork() -> None:
    saver = RedisSaver(redis.Redis())
    first = saver.get_next_version(None, None)
    second = saver.get_next_version(first, None)
    assert first < second < saver.get_next_version(second, None)
    # An int version (InMemorySaver's default) continues from that counter.
    assert saver.get_next_version(7, None).startswith("0000000008.")
    # InMemorySaver-style versions (32 digits) continue in order.
    assert saver.get_next_version("0" * 31 + "5.123", None) > "0" * 31 + "5.123"
    assert len({saver.get_next_version(first, None) for _ in range(50)}) > 45


def test_one_round_trip_per_operation(private_redis: RedisServer) -> None:
    """MONITOR shows one client command (a script call) per put, put_writes and get_tuple."""
    client = redis.Redis.from_url(private_redis.url)
    saver = RedisSaver(client)
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages: list[BaseMessage] = [HumanMessage("hi", id="1")]

    def put() -> None:
        nonlocal config, messages
        messages = [*messages, AIMessage(f"step {len(messages)}", id=f"a{len(messages)}")]
        versions: ChannelVersions = {"messages": str(len(messages))}
        config = saver.put(
            config, checkpoint({"messages": messages}, versions), {"run_id": "r"}, versions
        )

    def put_writes() -> None:
        saver.put_writes(config, [("messages", [AIMessage("w")]), ("x", 1)], "task")

    def get_tuple() -> None:
        assert saver.get_tuple(config) is not None

    for operation in (put, put_writes, get_tuple):  # scripts loaded, run indexed
        operation()
    watcher = redis.Redis.from_url(private_redis.url)
    with watcher.monitor() as monitor:

        def client_commands(operation: Any) -> list[str]:
            client.echo("begin")
            operation()
            client.echo("end")
            seen: list[str] = []
            for event in monitor.listen():
                if event["command"] == "ECHO begin":
                    seen = []
                elif event["command"] == "ECHO end":
                    return seen
                elif event.get("client_type") != "lua":
                    seen.append(event["command"].split(" ")[0])
            raise AssertionError("monitor stopped")

        for _ in range(3):
            for operation in (put, put_writes, get_tuple):
                assert client_commands(operation) == ["EVALSHA"], operation.__name__
    watcher.close()
    client.close()


def test_values_stored_once_and_as_serialized(shared_url: str, key_prefix: str) -> None:
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix)
    keys = thread_keys(key_prefix, "t")
    base: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    note = {"big": "x" * 1000}
    first = saver.put(
        base,
        checkpoint({"note": note, "n": 1}, {"note": "1", "n": "1"}),
        {},
        {"note": "1", "n": "1"},
    )
    assert client.hlen(keys.blobs) == 2
    for n in range(2, 6):  # `note` unchanged: never written again
        first = saver.put(
            first, checkpoint({"note": note, "n": n}, {"note": "1", "n": str(n)}), {}, {"n": str(n)}
        )
    assert client.hlen(keys.blobs) == 6
    stored = client.hget(keys.blobs, b"\x00note\x001")
    assert stored == b"V" + typed(JsonPlusSerializer().dumps_typed(note))
    client.close()


def test_list_channel_grows_like_its_elements(shared_url: str, key_prefix: str) -> None:
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix)
    keys = thread_keys(key_prefix, "t")
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages: list[Any] = []
    sizes = {}
    for step in range(1, 81):
        messages = [*messages, AIMessage("word " * 100, id=f"m{step}")]  # like add_messages
        config = saver.put(
            config,
            checkpoint({"messages": messages}, {"messages": str(step)}),
            {},
            {"messages": str(step)},
        )
        if step in (20, 40, 80):
            sizes[step] = sum(client.memory_usage(k, samples=0) or 0 for k in keys.all)
    assert client.hlen(keys.elements) == 80 + 1  # each message once (+ the token)
    assert sizes[80] / sizes[40] < 2.1 and sizes[40] / sizes[20] < 2.1
    # Keep the first and the last 10 (message pruning): a few ranges, no element rewritten.
    messages = [messages[0], *messages[-10:]]
    saver.put(
        config, checkpoint({"messages": messages}, {"messages": "81"}), {}, {"messages": "81"}
    )
    assert client.hlen(keys.elements) == 81
    blob = client.hget(keys.blobs, b"\x00messages\x0081")
    assert isinstance(blob, bytes)
    assert blob.count(b";") == 2
    # A new saver (nothing cached) reads all versions back.
    fresh = RedisSaver(client, key_prefix=key_prefix)
    got = fresh.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    assert got is not None and got.checkpoint["channel_values"]["messages"] == messages
    history = [t.checkpoint["channel_values"]["messages"] for t in fresh.list(got.config)]
    assert [len(h) for h in history] == [11]
    client.close()


def test_fragmented_list_is_stored_whole(shared_url: str, key_prefix: str) -> None:
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix)
    keys = thread_keys(key_prefix, "t")
    value = [1, 2] * 20  # small ints are shared objects: every other element repeats
    stored = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        checkpoint({"v": value}, {"v": "1"}),
        {},
        {"v": "1"},
    )
    blob = client.hget(keys.blobs, b"\x00v\x001")
    assert isinstance(blob, bytes)
    assert blob.startswith(b"V")
    got = saver.get_tuple(stored)
    assert got is not None
    assert got.checkpoint["channel_values"]["v"] == value
    client.close()


def test_replaced_list_is_stored_whole(shared_url: str, key_prefix: str) -> None:
    """A list a node rewrites at every step (documents re-ranked: new objects) shares nothing
    with its previous version: it is stored as one value, and takes no element positions (a
    gap would stop reads from skipping the appended messages after it)."""
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix)
    keys = thread_keys(key_prefix, "t")
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages: list[Any] = []
    docs: list[Any] = []
    for step in range(1, 7):
        messages = [*messages, AIMessage("word " * 50, id=f"m{step}")]
        docs = [{"id": d, "score": step / (d + 1), "text": "doc " * 250} for d in range(4)]
        config = saver.put(
            config,
            checkpoint(
                {"messages": messages, "docs": docs}, {"messages": str(step), "docs": str(step)}
            ),
            {},
            {"messages": str(step), "docs": str(step)},
        )
    for step in range(2, 7):  # the first version had no previous one to replace
        blob = client.hget(keys.blobs, b"\x00docs\x00" + str(step).encode())
        assert isinstance(blob, bytes) and blob.startswith(b"V"), step
    assert client.hlen(keys.elements) == 6 + 4 + 1  # the messages, the first docs, the token
    # Growing again from the last replacing list: elements, reusing nothing stored whole.
    docs = [*docs, {"id": 4, "score": 0.0, "text": "new"}]
    config = saver.put(
        config,
        checkpoint({"messages": messages, "docs": docs}, {"messages": "6", "docs": "7"}),
        {},
        {"docs": "7"},
    )
    blob = client.hget(keys.blobs, b"\x00docs\x007")
    assert isinstance(blob, bytes) and blob.startswith(b"L")
    token, hints = saver.context().elements.hints(keys.thread_id)
    assert token and [upto for upto, _items in hints.values()] == [6 + 4 + 5]  # no gap
    got = RedisSaver(client, key_prefix=key_prefix).get_tuple(config)
    assert got is not None
    assert got.checkpoint["channel_values"] == {"messages": messages, "docs": docs}
    client.close()


class TaggingSerializer(JsonPlusSerializer):
    """A custom serde: marks its type so the test sees it is the one used."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        return "tag+" + kind, data[::-1]

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, payload = data
        assert kind.startswith("tag+")
        return super().loads_typed((kind[4:], payload[::-1]))


def test_custom_serde_is_used_everywhere(shared_url: str, key_prefix: str) -> None:
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix, serde=TaggingSerializer())
    values = {"messages": [HumanMessage("a", id="1"), AIMessage("b", id="2")], "n": 3}
    stored = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        checkpoint(values, {"messages": "1", "n": "1"}),
        # Savers keep any metadata key; CheckpointMetadata only lists LangGraph's own.
        cast(CheckpointMetadata, {"k": "v"}),
        {"messages": "1", "n": "1"},
    )
    saver.put_writes(stored, [("n", 4)], "task")
    got = saver.get_tuple(stored)
    assert got is not None and got.checkpoint["channel_values"] == values
    metadata = cast(dict[str, Any], got.metadata)  # "k" is not a CheckpointMetadata key
    assert metadata["k"] == "v" and got.pending_writes == [("task", "n", 4)]
    keys = thread_keys(key_prefix, "t")
    stored_values = [*client.hvals(keys.blobs), *client.hvals(keys.elements)]
    assert all(
        isinstance(v, bytes) and v.startswith((b"Vtag+", b"tag+", b"L"))
        for v in stored_values
        if v != b"E" and len(v) > 20
    )
    client.close()


def test_damaged_thread_reports_the_missing_element(shared_url: str, key_prefix: str) -> None:
    client = redis.Redis.from_url(shared_url)
    saver = RedisSaver(client, key_prefix=key_prefix)
    stored = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        checkpoint({"m": ["a", "b"]}, {"m": "1"}),
        {},
        {"m": "1"},
    )
    keys = thread_keys(key_prefix, "t")
    victim = next(f for f in client.hkeys(keys.elements) if f != b"tok")
    client.hdel(keys.elements, victim)
    # A saver that has not seen the thread (the writer keeps the element bytes it wrote).
    with pytest.raises(CorruptThreadError, match="maxmemory"):
        RedisSaver(client, key_prefix=key_prefix).get_tuple(stored)
    client.close()


async def test_list_all_threads_and_delete_for_runs(shared_url: str, key_prefix: str) -> None:
    async with AsyncRedisSaver.from_conn_string(shared_url, key_prefix=key_prefix) as saver:
        for thread in ("a", "b", "{c}"):
            for run in ("r1", "r2"):
                config: RunnableConfig = {
                    "configurable": {"thread_id": thread, "checkpoint_ns": ""}
                }
                await saver.aput(config, checkpoint({}, {}), {"run_id": run, "step": 1}, {})
        everything = [t async for t in saver.alist(None)]
        assert len(everything) == 6
        ids = [t.config["configurable"]["checkpoint_id"] for t in everything]
        assert ids == sorted(ids, reverse=True)
        assert {t.config["configurable"]["thread_id"] for t in everything} == {"a", "b", "{c}"}
        assert len([t async for t in saver.alist(None, filter={"run_id": "r1"}, limit=2)]) == 2
        await saver.adelete_for_runs(["r1"])
        left = [t async for t in saver.alist(None)]
        assert sorted(t.metadata["run_id"] for t in left) == ["r2", "r2", "r2"]
        await saver.adelete_thread("a")
        assert len([t async for t in saver.alist(None)]) == 2


async def test_async_saver_sync_api_from_another_thread(shared_url: str, key_prefix: str) -> None:
    async with AsyncRedisSaver.from_conn_string(shared_url, key_prefix=key_prefix) as saver:
        config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        stored = await asyncio.to_thread(
            saver.put, config, checkpoint({"m": ["a"]}, {"m": "1"}), {}, {"m": "1"}
        )
        await asyncio.to_thread(saver.put_writes, stored, [("m", ["b"])], "task")
        got = await asyncio.to_thread(saver.get_tuple, stored)
        assert got is not None and got.checkpoint["channel_values"] == {"m": ["a"]}
        assert got.pending_writes == [("task", "m", ["b"])]
        listed = await asyncio.to_thread(lambda: list(saver.list(config)))
        assert [t.config for t in listed] == [got.config]
        with pytest.raises(asyncio.InvalidStateError, match="async methods"):
            saver.get_tuple(stored)  # on the event loop's own thread: would deadlock
