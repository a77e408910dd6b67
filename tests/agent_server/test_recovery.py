"""SIGKILL during a background run started through the SDK: after a restart the run finishes
from its last checkpoint, and only the step that was running at the kill runs again.

The `steps` test agent runs step_1..step_4, counting each execution in Redis; the test holds
step_3 (it waits while its hold key exists), kills the API process once step_3's counter shows
it started, releases the hold and starts a new process on the same Redis: its worker takes the
run over (after RUN_CLAIM_TIMEOUT_SECONDS) and resumes it. Nothing here waits for a duration:
every wait is for an event (a counter, a status, the run's end).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
from langgraph_sdk import get_sync_client

from tests.agent_server.conftest import KEY_A, api_env, wait_for
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer
from tests.support.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow


def counts(store: redis.Redis, thread_id: str) -> dict[str, int]:
    return {
        step: int(store.get(f"sy-test:steps:{thread_id}:{step}") or 0)
        for step in ("step_1", "step_2", "step_3", "step_4")
    }


def test_a_killed_run_resumes_from_its_last_checkpoint_after_a_restart(
    tmp_path: Path,
    redis_server: RedisServer,
    postgres_url: str,
    stub: StubOpenAI,
    store: redis.Redis,
) -> None:
    env = api_env(tmp_path / "data", redis_server.url, postgres_url, stub)
    module = "tests.agent_server.serve"
    first = ApiProcess(env, log_path=tmp_path / "api-1.log", module=module).start(timeout=180)
    try:
        client: Any = get_sync_client(url=first.url, api_key=KEY_A)
        thread_id = client.threads.create()["thread_id"]
        store.set("sy-test:hold:step_3", "1")
        run = client.runs.create(
            thread_id,
            "steps",
            input={"messages": [{"type": "human", "content": "go"}], "target_agent": "steps"},
            stream_mode=["updates", "custom"],
            stream_subgraphs=True,
            stream_resumable=True,
        )
        wait_for(lambda: counts(store, thread_id)["step_3"] == 1, what="step_3 to start")
        saved = client.threads.get_state(thread_id, subgraphs=True)
        assert client.runs.get(thread_id, run["run_id"])["status"] == "running"
    finally:
        first.kill()  # SIGKILL: no clean-up, the run is left running with its queue entry
    store.delete("sy-test:hold:step_3")
    # what the dead process had saved: the steps agent is on step_3, steps 1 and 2 done
    (agent,) = saved["tasks"]
    assert agent["state"]["values"]["done"] == ["step_1", "step_2"]
    assert agent["state"]["next"] == ["step_3"]
    assert counts(store, thread_id) == {"step_1": 1, "step_2": 1, "step_3": 1, "step_4": 0}

    second = ApiProcess(env, log_path=tmp_path / "api-2.log", module=module).start(timeout=180)
    try:
        client = get_sync_client(url=second.url, api_key=KEY_A)
        output = client.runs.join(thread_id, run["run_id"])
        finished = client.runs.get(thread_id, run["run_id"])
        events = list(client.runs.join_stream(thread_id, run["run_id"], last_event_id="-1"))
        history = client.threads.get_history(thread_id, limit=100)
    finally:
        second.stop()
    assert finished["status"] == "success"
    assert output["answer"] == "step_1 step_2 step_3 step_4"
    final = counts(store, thread_id)
    # redone: only step_3, which was running at the kill
    assert final == {"step_1": 1, "step_2": 1, "step_3": 2, "step_4": 1}, final
    attempts = [e.data["attempt"] for e in events if e.event == "metadata"]
    assert attempts == [1, 2]
    # not restarted from its input: one input checkpoint, one human message
    inputs = [h for h in history if h["metadata"].get("source") == "input"]
    assert len(inputs) == 1 and [m["type"] for m in output["messages"]] == ["human", "ai"]
    started = [e.data["step"] for e in events if e.event.startswith("custom")]
    print(
        f"\nSIGKILL at step_3 of run {run['run_id']}: executions per step {final}; "
        f"attempts {attempts}; steps started per stream: {started}"
    )
