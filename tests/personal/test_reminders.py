"""Reminders that fire, against real Redis and Postgres: two API processes share one Redis and
one database, a reminder is created on one and read on the other's notification stream (SSE),
exactly once, with one signed webhook; a process SIGKILLed while firing leaves it to its restart,
which fires it again without a second event; a changed ``remind_at`` fires at the new time only; a
deleted task's reminder never fires; another key's stream shows none of it. A recurring event
(in process, with a controllable clock) reminds before each occurrence, across a DST change.

Every wait is for an event (a frame on the stream, a job gone from Redis), never a duration.
A reminder is set a lead time ahead; when a loaded machine answers the requests that must land
before it is due too slowly (the time has passed, or would be refused as "in the past"), the
scenario is run again with a longer lead instead of failing on the machine's speed.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import httpx
import pytest
import redis
import redis.asyncio as aredis

from tests.agent_server.conftest import KEY_A, KEY_B, Receiver, wait_for
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer, free_port
from tools.notifications import Notifications
from tools.personal.models import EventCreate, EventUpdate, TaskCreate, TaskUpdate
from tools.personal.reminders import Reminders, job_id
from tools.personal.service import PersonalService
from tools.scheduler import Firing, QuotaExceeded, Scheduler, SchedulerSettings

pytestmark = pytest.mark.slow
SECRET = "reminder-secret"
#: Seconds ahead a scenario's first reminder is set, tried in turn (see the module docstring).
LEADS = (3.0, 12.0, 40.0)
T = TypeVar("T")


@pytest.fixture(scope="module")
def hooks() -> Iterator[Receiver]:
    with Receiver() as found:
        yield found


@pytest.fixture(scope="module")
def shared_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(port=free_port(), workdir=tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def apis(
    tmp_path_factory: pytest.TempPathFactory,
    shared_redis: RedisServer,
    postgres_url: str,
    hooks: Receiver,
) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    """Two API processes on one Redis, one Postgres and one DATA_DIR (one owner secret)."""
    folder = tmp_path_factory.mktemp("reminders")
    env = {
        "REDIS_URL": shared_redis.url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder),
        "API_KEYS": f"{KEY_A},{KEY_B}",
        "LLM_PROVIDER": "none",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "SCHEDULER_POLL_SECONDS": "0.2",
        "PERSONAL_WEBHOOK_URLS": hooks.url,
        "PERSONAL_WEBHOOK_SECRET": SECRET,
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "NOTIFY_PING_SECONDS": "1",
        "HF_HUB_OFFLINE": "1",
        "LOG_LEVEL": "INFO",
    }
    first = ApiProcess(env, log_path=folder / "api-1.log").start(timeout=180)
    second = ApiProcess(env, log_path=folder / "api-2.log").start(timeout=180)
    yield first, second
    second.stop()
    first.stop()


@pytest.fixture
def sync_redis(shared_redis: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(shared_redis.url, decode_responses=True)
    yield client
    client.close()


def soon(seconds: float) -> str:
    return at(datetime.now(UTC) + timedelta(seconds=seconds))


def at(moment: datetime) -> str:
    return moment.isoformat()


class TooSlow(Exception):
    """The machine answered too late for the scenario's lead time."""


def before(due: datetime) -> None:
    """The requests so far were answered before ``due`` (the scenario's premise), or TooSlow."""
    if datetime.now(UTC) >= due:
        raise TooSlow


def with_lead(scenario: Callable[[float], T]) -> T:
    """Run ``scenario(lead)`` with each lead of LEADS until one is long enough."""
    for lead in LEADS:
        try:
            return scenario(lead)
        except TooSlow:
            continue
    raise AssertionError(f"requests took longer than the longest lead ({LEADS[-1]} s)")


def events(api: ApiProcess, key: str, wanted: Any, *, after: str = "0") -> list[dict[str, Any]]:
    """Frames of the caller's notification stream (from ``after``, by Last-Event-ID) until
    ``wanted(frames)`` holds; each frame is ``{"id", "event", "data"}``."""
    frames: list[dict[str, Any]] = []
    headers = {"X-API-Key": key, "Last-Event-ID": after}
    with httpx.stream(
        "GET", f"{api.url}/notifications/stream", headers=headers, timeout=60
    ) as response:
        assert response.status_code == 200, response.read()
        frame: dict[str, Any] = {}
        for line in response.iter_lines():
            if line.startswith("id:"):
                frame["id"] = line[3:].strip()
            elif line.startswith("event:"):
                frame["event"] = line[6:].strip()
            elif line.startswith("data:"):
                frame["data"] = json.loads(line[5:].strip())
            elif not line and "event" in frame:
                frames.append(frame)
                frame = {}
                if wanted(frames):
                    return frames
    raise AssertionError(f"the stream ended before the wanted events: {frames}")


def of_item(frames: list[dict[str, Any]], kind: str, item_id: int) -> list[dict[str, Any]]:
    return [
        f
        for f in frames
        if f["event"] == "reminder"
        and f["data"]["kind"] == kind
        and f["data"]["item_id"] == item_id
    ]


def job_gone(client: redis.Redis, kind: str, item_id: int) -> bool:
    return not client.keys(f"{{switchyard:sched}}:job:reminder:{kind}:*:{item_id}")


def create_task(api: ApiProcess, key: str, **body: Any) -> dict[str, Any]:
    """POST /tasks; TooSlow when the reminder time passed before the request was answered."""
    answer = httpx.post(f"{api.url}/tasks", json=body, headers={"X-API-Key": key}, timeout=60)
    if answer.status_code == 422 and "in the past" in answer.text:
        raise TooSlow
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def remind_soon(api: ApiProcess, key: str, **body: Any) -> dict[str, Any]:
    """A task whose reminder is due a lead time ahead (the shortest lead that was in time)."""
    return with_lead(lambda lead: create_task(api, key, remind_at=soon(lead), **body))


def test_one_reminder_on_two_processes_fires_once_on_the_stream_and_the_webhook(
    apis: tuple[ApiProcess, ApiProcess], hooks: Receiver, sync_redis: redis.Redis
) -> None:
    first, second = apis
    task = remind_soon(first, KEY_A, title="Renew passport", due_at=soon(3600))
    assert task["remind_at"] is not None
    frames = events(second, KEY_A, lambda fs: of_item(fs, "task", task["id"]))
    (fired,) = of_item(frames, "task", task["id"])
    assert fired["data"]["title"] == "Renew passport"
    wait_for(lambda: job_gone(sync_redis, "task", task["id"]), what="the job to complete")
    hook = wait_for(
        lambda: [b for b in hooks.bodies if b["data"].get("item_id") == task["id"]],
        what="the reminder webhook",
    )
    # once: the job is done, and the stream and the webhooks hold one firing each
    again = events(first, KEY_A, lambda fs: of_item(fs, "task", task["id"]))
    assert len(of_item(again, "task", task["id"])) == 1
    assert len(hook) == 1 and hook[0]["type"] == "reminder.due"
    assert hook[0]["id"] == fired["data"]["id"]  # the delivery id receivers deduplicate by


def test_a_changed_remind_at_fires_at_the_new_time_only(
    apis: tuple[ApiProcess, ApiProcess], sync_redis: redis.Redis
) -> None:
    first, second = apis

    def moved_in_time(lead: float) -> tuple[dict[str, Any], str]:
        due = datetime.now(UTC) + timedelta(seconds=lead)
        task = create_task(first, KEY_A, title="Call the bank", remind_at=at(due))
        later = at(due + timedelta(seconds=2))
        moved = httpx.patch(
            f"{second.url}/tasks/{task['id']}",
            json={"remind_at": later},
            headers={"X-API-Key": KEY_A},
            timeout=60,
        )
        assert moved.status_code == 200, moved.text
        before(due)  # moved before the first time came
        return task, later

    task, later = with_lead(moved_in_time)
    frames = events(first, KEY_A, lambda fs: of_item(fs, "task", task["id"]))
    (fired,) = of_item(frames, "task", task["id"])
    # the scheduler keeps due times in milliseconds
    fired_at = datetime.fromisoformat(fired["data"]["remind_at"])
    assert abs(fired_at - datetime.fromisoformat(later)) < timedelta(milliseconds=1)
    wait_for(lambda: job_gone(sync_redis, "task", task["id"]), what="the job to complete")
    # the first time (2 s before the new one) passed without a firing
    assert (
        len(of_item(events(first, KEY_A, lambda fs: fs[-1] == frames[-1]), "task", task["id"])) == 1
    )


def test_deleting_a_task_cancels_its_reminder_and_resume_by_last_event_id(
    apis: tuple[ApiProcess, ApiProcess], sync_redis: redis.Redis
) -> None:
    first, second = apis

    def deleted_in_time(lead: float) -> tuple[dict[str, Any], ...]:
        due = datetime.now(UTC) + timedelta(seconds=lead)
        doomed = create_task(first, KEY_A, title="Doomed", remind_at=at(due))
        assert not job_gone(sync_redis, "task", doomed["id"])
        gone = httpx.delete(
            f"{second.url}/tasks/{doomed['id']}", headers={"X-API-Key": KEY_A}, timeout=60
        )
        assert gone.status_code == 204
        assert job_gone(sync_redis, "task", doomed["id"])  # cancelled at once
        before(due)  # deleted before it was due
        # the sentinels come due after the doomed task would have
        one = create_task(
            first, KEY_A, title="Sentinel one", remind_at=at(due + timedelta(seconds=1))
        )
        two = create_task(
            first, KEY_A, title="Sentinel two", remind_at=at(due + timedelta(seconds=2))
        )
        return doomed, one, two

    doomed, one, two = with_lead(deleted_in_time)
    frames = events(second, KEY_A, lambda fs: of_item(fs, "task", two["id"]))
    assert of_item(frames, "task", one["id"]) and not of_item(frames, "task", doomed["id"])
    # resumable: after the first sentinel's id, the stream replays from the second one
    (first_frame,) = of_item(frames, "task", one["id"])
    resumed = events(first, KEY_A, lambda fs: True, after=first_frame["id"])
    assert resumed[0]["data"]["item_id"] == two["id"]


def test_another_key_sees_none_of_it(apis: tuple[ApiProcess, ApiProcess]) -> None:
    first, second = apis
    mine = remind_soon(first, KEY_B, title="B's own")
    frames = events(second, KEY_B, lambda fs: of_item(fs, "task", mine["id"]))
    assert {f["data"]["item_id"] for f in frames} == {mine["id"]}


def test_remind_at_is_validated_like_other_datetimes(apis: tuple[ApiProcess, ApiProcess]) -> None:
    first, _ = apis
    headers = {"X-API-Key": KEY_A}

    def post(path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{first.url}{path}", json=body, headers=headers, timeout=60)

    naive = post("/tasks", {"title": "x", "remind_at": "2030-01-01T09:00:00"})
    assert naive.status_code == 422 and "offset" in naive.text
    past = post("/tasks", {"title": "x", "remind_at": "2020-01-01T09:00:00+00:00"})
    assert past.status_code == 422 and "in the past" in past.text
    start = datetime.now(UTC) + timedelta(days=2)
    after_start = post(
        "/events",
        {"title": "x", "starts_at": start.isoformat(),
         "remind_at": (start + timedelta(hours=1)).isoformat()},
    )  # fmt: skip
    assert after_start.status_code == 422 and "before starts_at" in after_start.text
    bad_rule = post(
        "/events", {"title": "x", "starts_at": start.isoformat(), "rrule": "FREQ=MINUTELY"}
    )
    assert bad_rule.status_code == 422 and "DAILY" in bad_rule.text
    ok = post(
        "/events",
        {"title": "Standup", "starts_at": start.isoformat(), "rrule": "FREQ=WEEKLY;COUNT=3",
         "remind_at": (start - timedelta(minutes=15)).isoformat()},
    )  # fmt: skip
    assert ok.status_code == 201 and ok.json()["rrule"] == "FREQ=WEEKLY;COUNT=3"


def test_chat_remind_me_an_hour_before(apis: tuple[ApiProcess, ApiProcess]) -> None:
    """The task agent without a model: 'remind me an hour before' sets remind_at."""
    first, _ = apis
    answer = httpx.post(
        f"{first.url}/chat",
        json={"message": "remind me to return the library books next Friday at 9am, and "
              "remind me an hour before", "agent": "task"},
        headers={"X-API-Key": KEY_A},
        timeout=60,
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    found = httpx.get(
        f"{first.url}/tasks", params={"q": "library"}, headers={"X-API-Key": KEY_A}, timeout=60
    )
    (task,) = found.json()["items"]
    due, remind = (datetime.fromisoformat(task[k]) for k in ("due_at", "remind_at"))
    assert due - remind == timedelta(hours=1)


# --- a recurring event, in process with a controllable clock --------------------------------


async def test_a_recurring_event_reminds_before_each_occurrence_once(
    service_without_pgvector: PersonalService, redis_url: str, user: str
) -> None:
    service = service_without_pgvector
    client = aredis.Redis.from_url(redis_url)
    now = [datetime(2026, 3, 20, 12, tzinfo=UTC)]
    tag = uuid.uuid4().hex[:8]
    scheduler = Scheduler(client, SchedulerSettings(), clock=lambda: now[0], prefix=f"{{t{tag}}}")
    notes = Notifications(client, prefix=f"test-{tag}")
    Reminders(service, scheduler, notes).attach()
    berlin = ZoneInfo("Europe/Berlin")
    start = datetime(2026, 3, 23, 9, tzinfo=berlin)  # Mondays at 9:00; DST begins on the 29th
    lead = timedelta(hours=1)
    event = await service.create_event(
        user,
        EventCreate(title="Standup", starts_at=start, remind_at=start - lead,
                    rrule="FREQ=WEEKLY;COUNT=3"),
        tz="Europe/Berlin",
    )  # fmt: skip
    job = job_id("event", user, event.id)
    for week in range(3):
        due = start + timedelta(weeks=week) - lead  # 8:00 Berlin wall time, each week
        found = await scheduler.get(job)
        assert found is not None and found.due == due
        now[0] = due.astimezone(UTC)
        assert await scheduler.run_due() == 1
        assert await scheduler.run_due() == 0  # claimed once
        if week == 0:  # a re-delivery of the same firing publishes nothing more
            await Reminders(service, scheduler, notes).fire(Firing(found, 2, now[0]))
    assert await scheduler.get(job) is None  # COUNT=3: done
    stream = await notes.read(user, "0-0")
    starts = [datetime.fromisoformat(n.data["starts_at"]) for n in stream]
    assert starts == [start + timedelta(weeks=w) for w in range(3)]
    assert [s.astimezone(berlin).hour for s in starts] == [9, 9, 9]
    # moving the event moves its reminders; deleting it cancels them
    again = await service.create_event(
        user, EventCreate(title="Retro", starts_at=start + timedelta(weeks=5),
                          remind_at=start + timedelta(weeks=5) - lead, rrule="FREQ=DAILY"),
    )  # fmt: skip
    retro = job_id("event", user, again.id)
    moved_start = again.starts_at + timedelta(days=1)
    await service.update_event(user, again.id, EventUpdate(starts_at=moved_start))
    moved = await scheduler.get(retro)
    assert moved is not None and moved.due == moved_start - lead
    await service.delete_event(user, again.id)
    assert await scheduler.get(retro) is None
    await client.aclose()


async def test_a_reminder_refused_by_the_quota_stores_nothing(
    service_without_pgvector: PersonalService, redis_url: str, user: str
) -> None:
    """An owner at SCHEDULER_MAX_JOBS_PER_OWNER gets the refusal and no task: a 4xx never leaves
    an item behind whose reminder would not fire."""
    service = service_without_pgvector
    client = aredis.Redis.from_url(redis_url)
    tag = uuid.uuid4().hex[:8]
    scheduler = Scheduler(client, SchedulerSettings(max_jobs_per_owner=1), prefix=f"{{q{tag}}}")
    Reminders(service, scheduler, Notifications(client, prefix=f"test-{tag}")).attach()
    soon = datetime.now(UTC) + timedelta(days=1)
    kept = await service.create_task(user, TaskCreate(title="Passport", remind_at=soon))
    with pytest.raises(QuotaExceeded, match="SCHEDULER_MAX_JOBS_PER_OWNER"):
        await service.create_task(user, TaskCreate(title="Visa", remind_at=soon))
    with pytest.raises(QuotaExceeded):  # an update that adds a reminder is refused alike
        plain = await service.create_task(user, TaskCreate(title="Plain"))
        await service.update_task(user, plain.id, TaskUpdate(remind_at=soon))
    titles = {t.title: t.remind_at for t in (await service.list_tasks(user)).items}
    assert "Visa" not in titles and titles["Passport"] is not None
    assert titles["Plain"] is None  # the refused update was rolled back
    assert await scheduler.get(job_id("task", user, kept.id)) is not None
    await client.aclose()


# --- SIGKILL of the process firing a reminder -------------------------------------------------


class HoldingReceiver:
    """A webhook receiver that holds the first POST unanswered (the firing process is then
    killed mid-firing) and answers the rest at once; records each delivery id."""

    def __init__(self) -> None:
        self.deliveries: list[str] = []
        self.first = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.deliveries.append(self.headers.get("X-Switchyard-Delivery", ""))
                if len(outer.deliveries) == 1:
                    outer.first.set()
                    outer.release.wait(60)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_sigkill_while_firing_fires_once_after_restart(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str
) -> None:
    """The process firing a reminder is SIGKILLed after publishing, while its webhook POST is
    in flight: the restarted process takes the job over when the lease expires and fires it
    again with the same firing id: still one event on the stream, and the webhook re-sent with
    the same delivery id (receivers deduplicate by it)."""
    folder = tmp_path_factory.mktemp("sigkill")
    redis_server = RedisServer(port=free_port(), workdir=folder / "redis")
    redis_server.start()
    hooks = HoldingReceiver()
    env = {
        "REDIS_URL": redis_server.url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder),
        "API_KEYS": KEY_A,
        "LLM_PROVIDER": "none",
        "SCHEDULER_POLL_SECONDS": "0.2",
        "SCHEDULER_LEASE_SECONDS": "2",
        "PERSONAL_WEBHOOK_URLS": hooks.url,
        "PERSONAL_WEBHOOK_TIMEOUT_SECONDS": "30",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
    }
    api = ApiProcess(env, log_path=folder / "api.log").start(timeout=180)
    try:
        task = remind_soon(api, KEY_A, title="Killed mid-firing")
        assert hooks.first.wait(60), "the reminder's webhook was never POSTed"
        api.kill()  # SIGKILL: the job stays leased, its webhook not marked sent
        api = ApiProcess(env, log_path=folder / "api-restarted.log").start(timeout=180)
        client = redis.Redis.from_url(redis_server.url, decode_responses=True)
        wait_for(lambda: len(hooks.deliveries) >= 2, what="the webhook re-sent after restart")
        wait_for(lambda: job_gone(client, "task", task["id"]), what="the job to complete")
        frames = events(api, KEY_A, lambda fs: of_item(fs, "task", task["id"]))
        assert len(of_item(frames, "task", task["id"])) == 1
        (stream,) = client.keys("switchyard:notify:*:stream")
        assert client.xlen(stream) == 1
        assert hooks.deliveries == [hooks.deliveries[0]] * 2  # one delivery id, sent twice
        client.close()
    finally:
        hooks.close()
        api.stop()
        redis_server.stop()
