"""The scheduler on the machine's Redis with a controllable clock (no sleeps): due times,
crons in time zones, missed periods, racing claimers, lease expiry, changes while firing."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis.asyncio as aredis

from tools.scheduler import (
    Firing,
    QuotaExceeded,
    ScheduleError,
    Scheduler,
    SchedulerSettings,
    next_fire,
)

T0 = datetime(2026, 3, 28, 23, 58, 30, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def make(
    client: aredis.Redis, clock: Clock, fired: list[Firing] | None = None, **settings: Any
) -> Scheduler:
    scheduler = Scheduler(client, SchedulerSettings(**settings), clock=clock)
    if fired is not None:

        async def record(firing: Firing) -> datetime | None:
            fired.append(firing)
            return None

        scheduler.register("probe", record)
    return scheduler


async def test_a_job_fires_once_at_its_due_time_and_is_gone(aredis_client: aredis.Redis) -> None:
    clock, fired = Clock(), []  # type: ignore[var-annotated]
    scheduler = make(aredis_client, clock, fired)
    due = T0 + timedelta(minutes=5)
    await scheduler.schedule("j1", kind="probe", owner="a", payload={"x": 1}, due=due)
    assert await scheduler.run_due() == 0
    clock.advance(minutes=5)
    assert await scheduler.run_due() == 1
    assert await scheduler.run_due() == 0
    assert [f.job.payload for f in fired] == [{"x": 1}]
    assert fired[0].firing_id == f"j1@{int(due.timestamp() * 1000)}"
    assert fired[0].attempt == 1
    assert await scheduler.get("j1") is None and await scheduler.job_ids("probe", "a") == []


async def test_due_times_in_any_zone_are_utc_inside(aredis_client: aredis.Redis) -> None:
    scheduler = make(aredis_client, Clock())
    berlin = datetime(2026, 4, 1, 9, 0, tzinfo=__import__("zoneinfo").ZoneInfo("Europe/Berlin"))
    job = await scheduler.schedule("j", kind="probe", owner="a", due=berlin)
    assert job.due == datetime(2026, 4, 1, 7, 0, tzinfo=UTC)
    stored = await scheduler.get("j")
    assert stored is not None and stored.due == job.due and stored.due.tzinfo == UTC
    with pytest.raises(ScheduleError, match="naive"):
        await scheduler.schedule("k", kind="probe", owner="a", due=datetime(2026, 4, 1, 9))
    with pytest.raises(ScheduleError, match="invalid cron"):
        await scheduler.schedule("k", kind="probe", owner="a", cron="every day")
    with pytest.raises(ScheduleError, match="unknown time zone"):
        await scheduler.schedule("k", kind="probe", owner="a", cron="* * * * *", timezone="Mars")


def test_a_cron_is_read_in_its_zone_across_dst() -> None:
    # Europe/Berlin moves to summer time on 2026-03-29: 09:00 local is 08:00 then 07:00 UTC
    before = next_fire("0 9 * * *", "Europe/Berlin", datetime(2026, 3, 28, 0, tzinfo=UTC))
    after = next_fire("0 9 * * *", "Europe/Berlin", before)
    assert before == datetime(2026, 3, 28, 8, tzinfo=UTC)
    assert after == datetime(2026, 3, 29, 7, tzinfo=UTC)


async def test_a_cron_fires_each_period_and_once_after_missed_ones(
    aredis_client: aredis.Redis,
) -> None:
    clock, fired = Clock(), []  # type: ignore[var-annotated]
    scheduler = make(aredis_client, clock, fired)
    job = await scheduler.schedule("c", kind="probe", owner="a", cron="* * * * *")
    assert job.due == datetime(2026, 3, 28, 23, 59, tzinfo=UTC)
    for _ in range(3):  # every minute, on time
        clock.now = (await scheduler.get("c")).due  # type: ignore[union-attr]
        assert await scheduler.run_due() == 1
    assert [f.job.due.minute for f in fired] == [59, 0, 1]
    # everything down for 10 minutes: one firing on recovery, then the next minute after now
    clock.advance(minutes=10, seconds=30)
    assert await scheduler.run_due() == 1
    assert await scheduler.run_due() == 0
    assert fired[-1].late >= timedelta(minutes=9)
    following = await scheduler.get("c")
    assert following is not None and following.due == datetime(2026, 3, 29, 0, 12, tzinfo=UTC)
    assert following.last_fired == clock.now


async def test_a_cron_stops_at_its_end(aredis_client: aredis.Redis) -> None:
    clock, fired = Clock(), []  # type: ignore[var-annotated]
    scheduler = make(aredis_client, clock, fired)
    end = datetime(2026, 3, 29, 0, 0, 30, tzinfo=UTC)
    await scheduler.schedule("c", kind="probe", owner="a", cron="* * * * *", end=end)
    clock.advance(minutes=1)
    await scheduler.run_due()
    clock.advance(minutes=1)
    await scheduler.run_due()
    assert len(fired) == 2 and await scheduler.get("c") is None


async def test_two_claimers_racing_fire_each_job_once(aredis_client: aredis.Redis) -> None:
    clock, fired = Clock(), []  # type: ignore[var-annotated]
    one = make(aredis_client, clock, fired, batch_size=7)
    two = make(aredis_client, clock, fired, batch_size=7)
    for i in range(200):
        await one.schedule(f"j{i}", kind="probe", owner="a", due=T0, quota=0)
    while await one.pending("probe"):
        await asyncio.gather(one.run_due(), two.run_due(), one.run_due(), two.run_due())
    assert sorted(f.job.id for f in fired) == sorted(f"j{i}" for i in range(200))
    print(f"racing claimers in one process: {one.fired} + {two.fired} firings of 200 jobs")
    assert one.fired and two.fired


async def test_a_lost_lease_is_claimed_again_with_the_same_firing_id(
    aredis_client: aredis.Redis,
) -> None:
    clock, fired = Clock(), []  # type: ignore[var-annotated]
    dead = make(aredis_client, clock, lease_seconds=30)
    alive = make(aredis_client, clock, fired, lease_seconds=30)
    await dead.schedule("j", kind="probe", owner="a", due=T0)
    [(job, token)] = await dead.claim("probe")  # then it "dies" before firing
    assert await alive.run_due() == 0  # leased: nobody else takes it
    clock.advance(seconds=31)
    assert await alive.run_due() == 1
    assert fired[0].attempt == 2
    assert fired[0].firing_id == f"j@{int(T0.timestamp() * 1000)}"
    # the dead claimer coming back cannot complete (or re-arm) what it no longer holds
    assert not await dead._finish(job, token, None, fired=True)


async def test_a_change_while_firing_wins_over_the_firing(aredis_client: aredis.Redis) -> None:
    clock = Clock()
    scheduler = make(aredis_client, clock)
    later = T0 + timedelta(hours=1)
    moved = asyncio.Event()

    async def move_itself(firing: Firing) -> datetime | None:
        await scheduler.reschedule("j", later)  # e.g. the task's remind_at changed meanwhile
        moved.set()
        return None

    scheduler.register("probe", move_itself)
    await scheduler.schedule("j", kind="probe", owner="a", due=T0)
    assert await scheduler.run_due() == 1 and moved.is_set()
    job = await scheduler.get("j")
    assert job is not None and job.due == later  # not deleted by the completed firing
    assert await scheduler.cancel("j") and await scheduler.get("j") is None
    assert not await scheduler.cancel("j")
    assert await scheduler.pending("probe") == 0


async def test_a_handler_may_choose_the_next_time(aredis_client: aredis.Redis) -> None:
    clock = Clock()
    scheduler = make(aredis_client, clock)
    times: list[datetime] = []

    async def weekly(firing: Firing) -> datetime | None:
        times.append(firing.job.due)
        return firing.job.due + timedelta(days=7) if len(times) < 2 else None

    scheduler.register("probe", weekly)
    await scheduler.schedule("j", kind="probe", owner="a", due=T0)
    await scheduler.run_due()
    clock.advance(days=7)
    await scheduler.run_due()
    assert times == [T0, T0 + timedelta(days=7)] and await scheduler.get("j") is None


async def test_failures_are_retried_then_given_up(aredis_client: aredis.Redis) -> None:
    clock = Clock()
    scheduler = make(aredis_client, clock, max_attempts=3, retry_seconds=5)
    attempts: list[int] = []

    async def broken(firing: Firing) -> datetime | None:
        attempts.append(firing.attempt)
        raise RuntimeError("webhook down")

    scheduler.register("probe", broken)
    await scheduler.schedule("j", kind="probe", owner="a", due=T0)
    for _ in range(4):
        await scheduler.run_due()
        clock.advance(seconds=5)
    assert attempts == [1, 2, 3] and await scheduler.get("j") is None


async def test_quota_per_owner_and_kind(aredis_client: aredis.Redis) -> None:
    scheduler = make(aredis_client, Clock(), max_jobs_per_owner=2)
    for i in range(2):
        await scheduler.schedule(f"j{i}", kind="probe", owner="a", due=T0)
    await scheduler.schedule("j0", kind="probe", owner="a", due=T0)  # a replacement is no new job
    with pytest.raises(QuotaExceeded, match="SCHEDULER_MAX_JOBS_PER_OWNER"):
        await scheduler.schedule("j2", kind="probe", owner="a", due=T0)
    await scheduler.schedule("j2", kind="probe", owner="b", due=T0)  # another owner's own quota
    with pytest.raises(ScheduleError, match="another kind or owner"):
        await scheduler.schedule("j2", kind="probe", owner="a", due=T0, quota=0)
    assert await scheduler.job_ids("probe", "a") == ["j0", "j1"]


async def test_the_runner_loop_fires_what_is_scheduled_in_its_process(
    aredis_client: aredis.Redis,
) -> None:
    fired: list[Firing] = []
    done = asyncio.Event()
    scheduler = Scheduler(aredis_client, SchedulerSettings(poll_seconds=30))

    async def record(firing: Firing) -> datetime | None:
        fired.append(firing)
        done.set()
        return None

    scheduler.register("probe", record)
    await scheduler.start()
    try:
        await scheduler.schedule("j", kind="probe", owner="a", due=datetime.now(UTC))
        await asyncio.wait_for(done.wait(), 10)  # woken at once, not after the 30 s poll
    finally:
        await scheduler.stop()
    assert len(fired) == 1


@dataclass
class CancelBecomesTimeout(Scheduler):
    """A claim whose Redis call is cancelled as its socket timeout fires: redis-py then raises
    TimeoutError (an OSError), not CancelledError."""

    claiming: asyncio.Event = field(default_factory=asyncio.Event)

    async def claim(self, kind: str) -> list[Any]:
        self.claiming.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise TimeoutError("Timeout reading from socket") from None
        return []


async def test_stop_returns_when_a_cancel_is_turned_into_an_error(
    aredis_client: aredis.Redis,
) -> None:
    """The loop reads an OSError as a Redis outage and polls on; stop() must end anyway (a
    single cancel and an await had hung the app's shutdown until pytest-timeout)."""
    scheduler = CancelBecomesTimeout(aredis_client, SchedulerSettings(poll_seconds=0.05))
    scheduler.register("probe", lambda _: asyncio.sleep(0))
    await scheduler.start()
    await asyncio.wait_for(scheduler.claiming.wait(), 10)
    await asyncio.wait_for(scheduler.stop(), 10)
    assert not scheduler.running
