"""Crons, delayed runs and thread TTLs through the real `langgraph-sdk` against real API
processes (the scheduler on their Redis): a cron every 2 seconds makes runs on its thread;
two API processes share its firings (each due time fired by one of them); a second key sees
nothing; ``after_seconds`` delays a run; a thread's ``ttl`` sweeps it. Waits are for events
(runs appearing, threads going), never fixed durations."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aredis
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from tests.agent_server.conftest import KEY_A, KEY_B, api_env, wait_for
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer
from tests.support.stub_openai import StubOpenAI
from tools.scheduler import Scheduler, SchedulerSettings

pytestmark = pytest.mark.slow

#: Every 2 seconds (croniter's sixth field is seconds): a short schedule, no controllable clock.
EVERY_2S = "* * * * * */2"
OPERATOR = "key-operator-0123456789"
FAST = {
    "SCHEDULER_POLL_SECONDS": "0.2",
    "SCHEDULER_LEASE_SECONDS": "5",
    "OPERATOR_API_KEYS": OPERATOR,  # /metrics with the scheduler's counters
}


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: RedisServer,
    postgres_url: str,
    stub: StubOpenAI,
) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    """Two API processes on one Redis (replicas)."""
    started = []
    for name in ("one", "two"):
        folder = tmp_path_factory.mktemp(f"crons-{name}")
        env = {**api_env(folder, redis_server.url, postgres_url, stub), **FAST}
        process = ApiProcess(env, log_path=folder / "api.log", module="tests.agent_server.serve")
        started.append(process.start(timeout=180))
    yield started[0], started[1]
    for process in started:
        process.stop()


@pytest.fixture(scope="module")
def server(servers: tuple[ApiProcess, ApiProcess]) -> ApiProcess:
    return servers[0]


def chat_input(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}], "target_agent": "chat"}


def get_cron(process: ApiProcess, key: str, cron_id: str) -> httpx.Response:
    """GET /runs/crons/{cron_id} (in the OpenAPI; langgraph-sdk 0.4 has no crons.get)."""
    return httpx.get(f"{process.url}/runs/crons/{cron_id}", headers={"X-API-Key": key}, timeout=60)


def scheduler_fired(process: ApiProcess, kind: str = "cron") -> int:
    """Firings of ``kind`` by this process so far (its /metrics)."""
    body = httpx.get(f"{process.url}/metrics", headers={"X-API-Key": OPERATOR}, timeout=60).json()
    return int(body["scheduler"]["fired_by_kind"].get(kind, 0))


def test_a_thread_cron_makes_runs_on_its_thread(
    servers: tuple[ApiProcess, ApiProcess], store: redis.Redis
) -> None:
    one, two = servers
    client: Any = get_sync_client(url=one.url, api_key=KEY_A)
    thread_id = client.threads.create(metadata={"cron-test": True})["thread_id"]
    before = scheduler_fired(one) + scheduler_fired(two)
    cron = client.crons.create_for_thread(
        thread_id, "chat", schedule=EVERY_2S, input=chat_input("tick"), metadata={"kind": "tick"}
    )
    cron_id = cron["cron_id"]
    assert cron["thread_id"] == thread_id and cron["enabled"] is True
    assert cron["schedule"] == EVERY_2S and cron["timezone"] == "UTC"
    assert cron["metadata"] == {"kind": "tick"} and cron["payload"]["input"] == chat_input("tick")
    assert datetime.fromisoformat(cron["next_run_date"]) > datetime.now(UTC) - timedelta(seconds=1)

    def finished() -> list[dict[str, Any]]:
        runs = client.runs.list(thread_id, limit=100)
        return [r for r in runs if r["status"] == "success"]

    done = wait_for(lambda: len(finished()) >= 3 and finished(), what="three cron runs")
    assert all(r["metadata"]["cron_id"] == cron_id for r in done)
    assert all(r["assistant_id"] == cron["assistant_id"] for r in done)
    state = client.threads.get_state(thread_id)
    assert [m["content"] for m in state["values"]["messages"] if m["type"] == "human"][:3] == [
        "tick"
    ] * 3
    # disable: no job, no next run date; the count of runs stops growing
    off = client.crons.update(cron_id, enabled=False)
    assert off["enabled"] is False and off["next_run_date"] is None
    assert not store.exists("{switchyard:sched}:job:cron:" + cron_id)
    runs_when_off = len(client.runs.list(thread_id, limit=100))
    fired = scheduler_fired(one) + scheduler_fired(two) - before
    print(f"cron every 2 s: {runs_when_off} runs on its thread; firings by process: "
          f"one {scheduler_fired(one)}, two {scheduler_fired(two)}")  # fmt: skip
    # each due time fired by exactly one of the two processes: one firing per run
    assert fired in (runs_when_off, runs_when_off + 1)  # +1: a firing refused after disabling
    assert client.runs.list(thread_id, limit=100)[0]["metadata"]["cron_id"] == cron_id
    # the schedule is read in its zone; next_run_date is UTC
    moved = client.crons.update(
        cron_id, schedule="0 9 * * *", timezone="Europe/Berlin", enabled=True
    )
    assert datetime.fromisoformat(moved["next_run_date"]).astimezone(UTC).hour in (7, 8)
    assert get_cron(one, KEY_A, cron_id).json()["timezone"] == "Europe/Berlin"
    assert client.crons.search(thread_id=thread_id)[0]["cron_id"] == cron_id
    assert client.crons.count(thread_id=thread_id) == 1
    client.crons.delete(cron_id)
    assert get_cron(one, KEY_A, cron_id).status_code == 404
    assert not store.exists("{switchyard:sched}:job:cron:" + cron_id)


async def test_the_sdk_crons_client_end_to_end_and_a_second_key_sees_nothing(
    server: ApiProcess,
) -> None:
    mine: Any = get_client(url=server.url, api_key=KEY_A)
    theirs: Any = get_client(url=server.url, api_key=KEY_B)
    thread_id = (await mine.threads.create())["thread_id"]
    end = datetime.now(UTC) + timedelta(days=30)
    made = await mine.crons.create_for_thread(
        thread_id,
        "switchyard",
        schedule="30 8 * * MON-FRI",
        input=chat_input("standup"),
        metadata={"team": "a"},
        context={"retrieval_top_k": 3},
        end_time=end,
        timezone="America/New_York",
        multitask_strategy="enqueue",
        stream_mode=["values"],
        durability="sync",
    )
    stateless = await mine.crons.create(
        "chat",
        schedule="0 0 1 1 *",
        input=chat_input("new year"),
        on_run_completed="keep",
        enabled=False,
        metadata={"team": "b"},
    )
    assert stateless["thread_id"] is None and stateless["on_run_completed"] == "keep"
    assert stateless["next_run_date"] is None and stateless["enabled"] is False
    assert datetime.fromisoformat(made["end_time"]) == end
    assert made["payload"]["context"] == {"retrieval_top_k": 3}
    ids = {made["cron_id"], stateless["cron_id"]}
    found = await mine.crons.search(limit=100)
    assert ids <= {c["cron_id"] for c in found}
    assert [c["cron_id"] for c in await mine.crons.search(metadata={"team": "a"})] == [
        made["cron_id"]
    ]
    assert [c["cron_id"] for c in await mine.crons.search(enabled=False, limit=100)] == [
        stateless["cron_id"]
    ]
    assert await mine.crons.count(metadata={"team": "b"}) == 1
    assert await mine.crons.count(assistant_id="chat") >= 1
    picked = await mine.crons.search(
        metadata={"team": "a"}, select=["cron_id", "schedule"], sort_by="next_run_date"
    )
    assert picked == [{"cron_id": made["cron_id"], "schedule": "30 8 * * MON-FRI"}]
    patched = await mine.crons.update(
        made["cron_id"], metadata={"extra": 1}, end_time=None, input=chat_input("sync")
    )
    assert patched["metadata"] == {"team": "a", "extra": 1} and patched["end_time"] is None
    assert patched["payload"]["input"] == chat_input("sync")
    # another key: nothing found, nothing changed
    assert await theirs.crons.search(limit=100) == []
    assert await theirs.crons.count() == 0
    assert get_cron(server, KEY_B, made["cron_id"]).status_code == 404
    for call in (
        lambda: theirs.crons.update(made["cron_id"], enabled=False),
        lambda: theirs.crons.delete(made["cron_id"]),
        lambda: theirs.crons.create_for_thread(thread_id, "chat", schedule="* * * * *"),
    ):
        with pytest.raises(NotFoundError):
            await call()
    assert get_cron(server, KEY_A, made["cron_id"]).json()["enabled"] is True
    # deleting the thread deletes its crons
    await mine.threads.delete(thread_id)
    assert get_cron(server, KEY_A, made["cron_id"]).status_code == 404
    await mine.crons.delete(stateless["cron_id"])


async def test_bad_crons_are_refused_with_the_fix(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    for kwargs, wanted in (
        ({"schedule": "every day"}, "invalid cron expression"),
        ({"schedule": "* * * * *", "timezone": "Mars/Base"}, "unknown time zone"),
        ({"schedule": "* * * * *", "interrupt_before": ["nope"]}, "unknown nodes"),
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            await client.crons.create("chat", **kwargs)
        assert wanted in caught.value.response.text
    with pytest.raises(NotFoundError):
        await client.crons.create("no-such-agent", schedule="* * * * *")


def test_a_stateless_cron_runs_on_new_threads(server: ApiProcess) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_B)
    cron = client.crons.create(
        "chat", schedule=EVERY_2S, input=chat_input("stateless"), on_run_completed="keep"
    )

    def cron_threads() -> list[str]:
        found = []
        for thread in client.threads.search(limit=1000):
            runs = client.runs.list(thread["thread_id"])
            if any(
                r["metadata"].get("cron_id") == cron["cron_id"] and r["status"] == "success"
                for r in runs
            ):
                found.append(thread["thread_id"])
        return found

    threads = wait_for(lambda: len(cron_threads()) >= 2 and cron_threads(), what="two runs")
    client.crons.delete(cron["cron_id"])
    assert len(set(threads)) == len(threads)  # a new thread per firing
    for thread_id in threads:  # kept (on_run_completed="keep"): the caller deletes them
        client.threads.delete(thread_id)


def test_after_seconds_delays_a_run(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "chat", input=chat_input("later"), after_seconds=1.5)
    assert run["status"] == "pending"
    assert client.runs.get(thread_id, run["run_id"])["status"] == "pending"
    client.runs.join(thread_id, run["run_id"])
    assert client.runs.get(thread_id, run["run_id"])["status"] == "success"
    record: dict[str, str] = store.hgetall(f"sy:run:{{{run['run_id']}}}")  # type: ignore[assignment]
    started, created = record["started_at"], record["created_at"]
    waited = (datetime.fromisoformat(started) - datetime.fromisoformat(created)).total_seconds()
    print(f"after_seconds=1.5: started {waited:.2f}s after it was created")
    assert waited >= 1.5
    # a delayed run can be cancelled before it is due: it never starts
    pending = client.runs.create(thread_id, "chat", input=chat_input("never"), after_seconds=600)
    client.runs.cancel(thread_id, pending["run_id"])
    assert client.runs.get(thread_id, pending["run_id"])["status"] == "interrupted"
    with pytest.raises(UnprocessableEntityError):
        client.runs.create(thread_id, "chat", input=chat_input("x"), after_seconds=-1)


def test_a_threads_ttl_sweeps_it(server: ApiProcess) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    doomed = client.threads.create(ttl=0.02)["thread_id"]  # 1.2 s; the SDK sends strategy delete
    kept = client.threads.create()["thread_id"]
    for text in ("one", "two"):
        client.runs.wait(kept, "chat", input=chat_input(text))
    assert len(client.threads.get_history(kept, limit=100)) > 1
    client.threads.update(kept, metadata={}, ttl={"ttl": 0.02, "strategy": "keep_latest"})

    def gone(thread_id: str) -> bool:
        try:
            client.threads.get(thread_id)
        except NotFoundError:
            return True
        return False

    wait_for(lambda: gone(doomed), what="the thread to be swept")
    wait_for(
        lambda: len(client.threads.get_history(kept, limit=100)) == 1, what="keep_latest prune"
    )
    assert client.threads.get_state(kept)["values"]["messages"]  # its latest state stays
    with pytest.raises(UnprocessableEntityError):
        client.threads.create(ttl={"ttl": 5, "strategy": "archive"})


def test_a_redelivered_firing_makes_no_second_run(
    servers: tuple[ApiProcess, ApiProcess], redis_server: RedisServer
) -> None:
    """What a crash between a cron's run submission and the firing's completion leads to: the
    same due time delivered again (same firing id). It finds the run the first delivery made."""
    one, two = servers
    client: Any = get_sync_client(url=one.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(
        thread_id, "chat", schedule="0 0 1 1 *", input=chat_input("once")
    )
    job_id = f"cron:{cron['cron_id']}"
    due = datetime.now(UTC).replace(microsecond=0)

    async def deliver() -> None:  # put the job back at the same due time, as a lost lease does
        client_redis = aredis.Redis.from_url(redis_server.url)
        await Scheduler(client_redis, SchedulerSettings()).reschedule(job_id, due)
        await client_redis.aclose()

    before = scheduler_fired(one) + scheduler_fired(two)

    def delivered() -> int:
        return scheduler_fired(one) + scheduler_fired(two) - before

    for delivery in (1, 2):
        asyncio.run(deliver())
        wait_for(lambda: delivered() >= delivery, what=f"delivery {delivery}")  # noqa: B023
    runs = client.runs.list(thread_id, limit=100)
    print(f"one due time delivered twice: {len(runs)} run(s)")
    assert len(runs) == 1 and runs[0]["metadata"]["cron_id"] == cron["cron_id"]
    client.runs.join(thread_id, runs[0]["run_id"])
    client.crons.delete(cron["cron_id"])


def test_a_cron_whose_thread_expired_is_deleted_when_due(
    server: ApiProcess, store: redis.Redis, redis_server: RedisServer
) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(
        thread_id, "chat", schedule="0 0 1 1 *", input=chat_input("orphan")
    )
    [record] = store.keys(f"sy:session:{{*:{thread_id}}}")
    store.delete(record)  # the thread's record expired (CHECKPOINT_TTL_MINUTES)

    async def due_now() -> None:
        client_redis = aredis.Redis.from_url(redis_server.url)
        job = f"cron:{cron['cron_id']}"
        await Scheduler(client_redis, SchedulerSettings()).reschedule(job, datetime.now(UTC))
        await client_redis.aclose()

    asyncio.run(due_now())
    wait_for(
        lambda: get_cron(server, KEY_A, cron["cron_id"]).status_code == 404,
        what="the orphaned cron to be deleted",
    )
    assert not store.exists(f"{{switchyard:sched}}:job:cron:{cron['cron_id']}")
