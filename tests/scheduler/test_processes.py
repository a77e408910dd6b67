"""The scheduler across real processes on the machine's Redis: two runners racing for the same
jobs fire each once; a runner SIGKILLed holding a claimed job leaves it to the next one, which
fires it once (waits are for events: Redis keys the processes write, never fixed durations)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aredis

from tools.scheduler import Scheduler, SchedulerSettings

REPO = Path(__file__).resolve().parents[2]


def wait_for(condition: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


class Runners:
    """Runner processes (tests/scheduler/runner.py) on one Redis database."""

    def __init__(self, url: str, client: redis.Redis) -> None:
        self.url, self.client = url, client
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, **env: str) -> subprocess.Popen[bytes]:
        settings = {"SCHEDULER_POLL_SECONDS": "0.05", "SCHEDULER_LEASE_SECONDS": "2"}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.scheduler.runner", self.url],
            cwd=REPO,
            env={**os.environ, **settings, **env, "PYTHONPATH": str(REPO)},
        )
        self.processes.append(process)
        wait_for(
            lambda: self.client.sismember("probe:ready", str(process.pid)) or process.poll(),
            what="the runner to start",
        )
        assert process.poll() is None, "the runner exited"
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                process.wait(10)

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(c) for c in self.client.lrange("probe:calls", 0, -1)]

    def effects(self) -> list[dict[str, Any]]:
        return [json.loads(c) for c in self.client.lrange("probe:effects", 0, -1)]


@pytest.fixture
def runners(redis_url: str, redis_client: redis.Redis) -> Iterator[Runners]:
    found = Runners(redis_url, redis_client)
    yield found
    found.stop()


def schedule(url: str, jobs: list[str], due: datetime) -> None:
    async def go() -> None:
        client = aredis.Redis.from_url(url)
        scheduler = Scheduler(client, SchedulerSettings())
        for job in jobs:
            await scheduler.schedule(job, kind="probe", owner="t", due=due, quota=0)
        await client.aclose()

    asyncio.run(go())


def test_two_processes_racing_fire_each_job_once(redis_url: str, runners: Runners) -> None:
    one, two = runners.start(SCHEDULER_BATCH_SIZE="3"), runners.start(SCHEDULER_BATCH_SIZE="3")
    jobs = [f"race-{i}" for i in range(300)]
    # due a moment from now: both runners are polling when the jobs come due
    schedule(runners.url, jobs, datetime.now(UTC) + timedelta(seconds=0.5))
    wait_for(lambda: len(runners.calls()) >= len(jobs), what="every job to fire")
    calls = runners.calls()
    by_pid = {p.pid: sum(c["pid"] == p.pid for c in calls) for p in (one, two)}
    print(f"two processes, {len(jobs)} jobs due at once: {len(calls)} firings, by process {by_pid}")
    assert sorted(c["firing"].split("@")[0] for c in calls) == sorted(jobs)  # each exactly once
    assert all(c["attempt"] == 1 for c in calls)
    assert all(by_pid.values()), "both processes should have claimed some jobs"


@pytest.mark.parametrize("hold", ["before", "after"])
def test_sigkill_of_the_claimer_fires_once_after_restart(
    redis_url: str, runners: Runners, hold: str
) -> None:
    """``before``: killed about to fire (nothing happened): the restart fires it. ``after``:
    killed after the effect, before completing: the restart re-delivers the same firing id and
    the idempotent effect is not repeated. Either way: one effect."""
    doomed = runners.start(PROBE_HOLD=hold)
    schedule(runners.url, ["job"], datetime.now(UTC))
    wait_for(lambda: runners.client.llen("probe:held"), what="the runner to claim the job")
    doomed.send_signal(signal.SIGKILL)
    doomed.wait(10)
    killed_at = time.monotonic()
    runners.start()  # the restart (a new process: no memory of the claim)
    wait_for(lambda: len(runners.calls()) == 2, what="the job to be fired again")
    waited = time.monotonic() - killed_at
    calls, effects = runners.calls(), runners.effects()
    print(f"SIGKILL {hold} the effect: re-fired {waited:.2f}s after the kill (lease 2s); "
          f"deliveries {[c['attempt'] for c in calls]}, effects {len(effects)}")  # fmt: skip
    assert [c["attempt"] for c in calls] == [1, 2]
    assert calls[0]["firing"] == calls[1]["firing"]
    assert len(effects) == 1
    wait_for(lambda: not runners.client.exists("{switchyard:sched}:job:job"), what="completion")
    assert len(runners.calls()) == 2  # and never again
