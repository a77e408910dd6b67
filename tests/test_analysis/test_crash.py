"""Crash recovery with real API processes: SIGKILL mid-analysis, then restart or take-over
(and a cancel sent to the process that is not running the analysis).

Each test runs its own redis-server (nothing else can flush it mid-test) and its own stub LLM
server answering in 200 ms. The suite has 175 tests, so a hybrid analysis has 35 review
batches. The stub answers 8 reviews and holds every later call (unanswered) until the test releases
it; the kill comes once those 8 are saved, so the batches in flight at the kill are exactly the
held ones, whatever the machine's load. Which batches were saved is read from Redis with the
checkpoint saver right after the kill, and the stub's per-batch call counts then show that none
of them was reviewed again and only the held ones were asked twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer
from tests.support.stub_openai import StubOpenAI
from tests.test_analysis.graphkit import BatchRecorder, saved_batches, synthetic_suite

pytestmark = pytest.mark.slow

BATCHES = 35
CONCURRENCY = 3
SAVED_BEFORE_KILL = 8


@pytest.fixture
def recorder() -> Iterator[BatchRecorder]:
    batches = BatchRecorder()
    stub = StubOpenAI(batches, latency=0.2).start()
    batches.base_url = stub.base_url  # type: ignore[attr-defined]
    yield batches
    stub.stop()


def api_env(
    tmp_path: Path, name: str, redis: RedisServer, postgres_url: str, recorder: BatchRecorder
) -> dict[str, str]:
    return {
        "REDIS_URL": redis.url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(tmp_path / name),  # each process its own data folder
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": recorder.base_url,  # type: ignore[attr-defined]
        "LLM_CACHE_TTL_SECONDS": "0",  # every review reaches the stub: its counts are the truth
        "LLM_RATE_LIMIT_PER_MINUTE": "60000",
        "LLM_MAX_CONCURRENCY": str(CONCURRENCY),
        "ANALYSIS_CLAIM_TIMEOUT_SECONDS": "3",
        "ANALYSIS_HEARTBEAT_SECONDS": "0.3",
        "HF_HUB_OFFLINE": "1",
    }


def submit(api: ApiProcess, folder: str = "tests") -> str:
    response = httpx.post(
        f"{api.url}/analyses",
        timeout=30,
        json={"files": synthetic_suite(BATCHES * 5, per_file=35, folder=folder), "mode": "hybrid"},
    )
    assert response.status_code == 202, response.text
    return str(response.json()["thread_id"])


def poll(api: ApiProcess, thread_id: str, until: Any, timeout: float = 90.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = httpx.get(f"{api.url}/analyses/{thread_id}", timeout=10).json()
        if until(body):
            return body
        assert time.monotonic() < deadline, f"gave up; last status {body}"
        time.sleep(0.05)


def worker_pid(body: dict[str, Any]) -> int:
    return int(str(body["worker"]).rsplit("-", 2)[1])  # "<host>-<pid>-<suffix>"


def assert_resumed_without_redoing(
    done: dict[str, Any],
    recorder: BatchRecorder,
    saved: set[str],
    other: AbstractSet[str] = frozenset(),
) -> None:
    assert done["status"] == "done", done
    result = done["result"]
    assert result["quality"]["passed"], result["quality"]
    calls = {b: n for b, n in recorder.calls.items() if b not in other}
    assert result["metrics"]["llm_batches"] == BATCHES and len(calls) == BATCHES
    assert result["summary"]["by_source"]["llm"] == BATCHES
    redone_saved = {b: calls[b] for b in saved if calls[b] != 1}
    assert not redone_saved, f"batches saved before the kill were reviewed again: {redone_saved}"
    # only batches in flight at the kill (held by the stub, at most one per connection) were
    # asked twice
    redone = [b for b, n in calls.items() if n > 1]
    assert len(redone) <= CONCURRENCY, redone
    assert done["attempts"] == 2
    print(
        f"\n{len(saved)} of {BATCHES} batches saved at the kill; {sum(calls.values())} "
        f"review calls in all; redone (in flight at the kill): {len(redone)}"
    )


def test_a_killed_api_resumes_the_analysis_after_a_restart(
    tmp_path: Path, private_redis: RedisServer, postgres_url: str, recorder: BatchRecorder
) -> None:
    env = api_env(tmp_path, "api", private_redis, postgres_url, recorder)
    first = ApiProcess(env, log_path=tmp_path / "api-1.log").start()
    recorder.hold_after(SAVED_BEFORE_KILL)
    try:
        thread_id = submit(first)
        running = poll(first, thread_id, lambda b: b["batches"]["done"] >= SAVED_BEFORE_KILL)
        assert running["status"] == "running" and worker_pid(running) == first.process.pid  # type: ignore[union-attr]
    finally:
        first.kill()
        recorder.release()
    saved = saved_batches(private_redis.url, thread_id)
    assert len(saved) == SAVED_BEFORE_KILL

    second = ApiProcess(env, log_path=tmp_path / "api-2.log").start()
    try:
        done = poll(second, thread_id, lambda b: b["status"] in ("done", "failed"))
        events = httpx.get(f"{second.url}/analyses/{thread_id}/events", timeout=60).text
    finally:
        second.stop()
    assert_resumed_without_redoing(done, recorder, saved)
    # progress counts each batch once, across the kill and the resume
    counts = [int(line.split('"batches_done": ')[1].split("}")[0].split(",")[0])
              for line in events.splitlines() if '"batches_done": ' in line]  # fmt: skip
    assert counts and max(counts) == BATCHES and counts == sorted(counts), counts


def test_the_other_api_process_takes_over_when_the_one_running_it_dies(
    tmp_path: Path, private_redis: RedisServer, postgres_url: str, recorder: BatchRecorder
) -> None:
    apis = [
        ApiProcess(
            api_env(tmp_path, name, private_redis, postgres_url, recorder),
            log_path=tmp_path / f"{name}.log",
        )
        for name in ("api-a", "api-b")
    ]
    with ThreadPoolExecutor(2) as pool:  # both start at once: they load the same models
        list(pool.map(lambda api: api.start(), apis))
    try:
        # Cancel across processes: sent to the process that does not run the analysis, while
        # the stub holds its later review calls.
        recorder.hold_after(2)
        other = submit(apis[0], folder="other")
        running = poll(apis[0], other, lambda b: b["batches"]["done"] >= 2)
        not_holder = next(a for a in apis if a.process and a.process.pid != worker_pid(running))
        cancel = httpx.post(f"{not_holder.url}/analyses/{other}/cancel", timeout=10)
        assert cancel.status_code == 202
        assert poll(not_holder, other, lambda b: b["status"] != "running")["status"] == "cancelled"
        cancelled_calls = dict(recorder.calls)
        assert len(cancelled_calls) < BATCHES
        recorder.release()

        recorder.hold_after(SAVED_BEFORE_KILL)
        thread_id = submit(apis[0])
        running = poll(apis[0], thread_id, lambda b: b["batches"]["done"] >= SAVED_BEFORE_KILL)
        holder = next(a for a in apis if a.process and a.process.pid == worker_pid(running))
        survivor = next(a for a in apis if a is not holder)
        holder.kill()
        recorder.release()
        saved = saved_batches(private_redis.url, thread_id)
        assert len(saved) == SAVED_BEFORE_KILL
        done = poll(survivor, thread_id, lambda b: b["status"] in ("done", "failed"))
        assert worker_pid(done) == survivor.process.pid  # type: ignore[union-attr]
    finally:
        recorder.release()
        for api in apis:
            api.stop()
    # the cancelled analysis never ran again: all the while the other one ran to its end, no
    # batch of it was reviewed anew
    assert {b: recorder.calls[b] for b in cancelled_calls} == cancelled_calls
    assert_resumed_without_redoing(done, recorder, saved, other=set(cancelled_calls))
