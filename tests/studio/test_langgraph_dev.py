"""LangGraph Studio: `langgraph dev` serves our graph from langgraph.json, persisting to Redis."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def langgraph_dev(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """`langgraph dev` started from the repo, offline; yields its base URL."""
    binary = Path(sys.executable).with_name("langgraph")
    if not binary.exists():
        binary = Path(shutil.which("langgraph") or "langgraph")
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATA_DIR": str(tmp_path / "data"),
        "LLM_PROVIDER": "none",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(REPO),
    }
    log = open(tmp_path / "langgraph-dev.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [str(binary), "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (tmp_path / "langgraph-dev.log").read_text()[-3000:]
            try:
                if httpx.get(f"{base}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "langgraph dev did not come up"
            time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


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
