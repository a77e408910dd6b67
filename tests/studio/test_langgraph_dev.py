"""LangGraph Studio: `langgraph dev` serves our graph from langgraph.json, persisting to Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.support.processes import StudioProcess


@pytest.fixture
def langgraph_dev(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """`langgraph dev` started from the repo, offline; yields its base URL."""
    env = {"REDIS_URL": redis_url, "DATA_DIR": str(tmp_path / "data")}
    studio = StudioProcess(env, log_path=tmp_path / "langgraph-dev.log").start()
    try:
        yield studio.url
    finally:
        studio.stop()


@pytest.mark.slow
def test_a_run_through_langgraph_dev_persists_to_our_redis_saver(
    langgraph_dev: str, redis_client: redis.Redis
) -> None:
    with httpx.Client(base_url=langgraph_dev, timeout=120) as client:
        assistants = client.post("/assistants/search", json={"graph_id": "switchyard"}).json()
        assert assistants, "the switchyard graph is not registered"
        assistant_id = assistants[0]["assistant_id"]
        thread_id = client.post("/threads", json={}).json()["thread_id"]
        result = client.post(
            f"/threads/{thread_id}/runs/wait",
            json={
                "assistant_id": assistant_id,
                "input": {"messages": [{"role": "user", "content": "hello, who are you?"}]},
            },
        )
        assert result.status_code == 200, result.text
        state = result.json()
        assert state["route"]["agent"] == "chat"
        assert "No language model is configured" in state["answer"]
        assert state["turn_count"] == 1
        graph = client.get(f"/assistants/{assistant_id}/graph").json()
        node_ids = {node["id"] for node in graph["nodes"]}
        assert {"ingest", "route", "detect_handoff", "finalize"} <= node_ids
    # Studio's checkpoints are in Redis, under the thread's hash tag
    keys = [key for key in redis_client.keys("*") if thread_id.encode() in key]
    assert keys, "no checkpoint keys for the Studio thread in Redis"
