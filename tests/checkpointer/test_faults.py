"""Faults: Redis stopped in the middle of a run raises a clear error, loses no checkpoint saved
before, and the thread resumes from its last checkpoint once Redis is back."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from checkpointer import AsyncRedisSaver, RedisSaver, RedisUnavailableError
from tests.checkpointer.conftest import open_saver
from tests.checkpointer.scenarios import Mode, Runner
from tests.support.servers import RedisServer, free_port


class Steps(TypedDict):
    done: Annotated[list[str], operator.add]


def pipeline(server: RedisServer, calls: dict[str, int]) -> StateGraph[Any]:
    """a -> b -> c -> d; c stops Redis (the first time it runs) before it returns."""

    def node(name: str) -> Any:
        def run(state: Steps) -> Steps:
            calls[name] = calls.get(name, 0) + 1
            if name == "c" and calls[name] == 1:
                server.stop()
            return {"done": [name]}

        return run

    builder = StateGraph(Steps)
    previous = START
    for name in "abcd":
        builder.add_node(name, node(name))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_redis_outage_mid_run_then_resume(mode: Mode, private_redis: RedisServer) -> None:
    calls: dict[str, int] = {}
    config: Any = {"configurable": {"thread_id": "outage"}}
    async with open_saver(private_redis.url, mode) as saver:
        graph = Runner(pipeline(private_redis, calls).compile(checkpointer=saver), mode)
        # durability="sync": each step's checkpoint is stored before the next step starts, so
        # a and b are saved when c stops Redis, however slow the machine. (It is an argument
        # of invoke; a `durability` key in the config is ignored.)
        with pytest.raises(RedisUnavailableError) as raised:
            await graph.invoke({"done": []}, config, durability="sync")
        message = str(raised.value)
        assert f"redis://127.0.0.1:{private_redis.port}/0" in message
        assert "REDIS_URL" in message and "resume" in message
        assert "intact" in message

        private_redis.start()  # same data directory: the AOF brings the data back
        paused = await graph.state(config)
        assert paused.values == {"done": ["a", "b"]}
        assert paused.next == ("c",)
        history = await graph.history(config)
        assert [s.values.get("done") for s in history] == [["a", "b"], ["a"], [], []]

        final = await graph.invoke(None, config, durability="sync")
    assert final == {"done": ["a", "b", "c", "d"]}
    # a and b were checkpointed before the outage and are not run again; c (and, when LangGraph
    # got that far before the failed save surfaced, d) run again.
    assert (calls["a"], calls["b"], calls["c"]) == (1, 1, 2)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_unreachable_server_error_names_url_and_fix(mode: Mode) -> None:
    url = f"redis://127.0.0.1:{free_port()}/3"
    with pytest.raises(RedisUnavailableError, match=r"127\.0\.0\.1:\d+/3.*REDIS_URL"):
        async with open_saver(url, mode, cluster=False):
            pass
    with pytest.raises(RedisUnavailableError, match="REDIS_URL"):
        async with open_saver(url, mode):  # cluster auto-detection probes the server first
            pass


def test_unavailable_is_a_redis_connection_error() -> None:
    import redis

    assert issubclass(RedisUnavailableError, redis.ConnectionError)
    assert AsyncRedisSaver.__mro__[1] is RedisSaver.__mro__[1]
