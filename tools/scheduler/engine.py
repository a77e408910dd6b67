"""The scheduler: jobs due at a time (or on a cron), fired by exactly one process among replicas.

Use::

    scheduler = Scheduler(redis, SchedulerSettings())
    scheduler.register("cron", on_cron)            # async (Firing) -> datetime | None
    await scheduler.start()                        # the runner loop (an app component does it)
    await scheduler.schedule("cron:1", kind="cron", owner="key-a", payload={...},
                             cron="*/5 * * * *", timezone="Europe/Berlin")
    await scheduler.schedule("rem:7", kind="reminder", owner="key-a", payload={...},
                             due=datetime(2026, 12, 4, 8, tzinfo=UTC))
    await scheduler.cancel("rem:7")

Guarantees (README "Scheduling guarantees"):

- **One claimer.** A due job is moved from the kind's ``due`` set to its ``leased`` set by one
  atomic Lua script, so of any number of processes polling, exactly one claims it.
- **At-least-once firing, deduplicated by (job, due time).** The claimer holds a lease (renewed
  while its handler runs). If it dies (SIGKILL) before completing, the lease expires and the
  next claim by any process (the restarted one or another replica) fires the job again, with
  the same :attr:`Firing.firing_id` and ``attempt`` + 1. A handler makes its effect idempotent
  on ``firing_id`` (the crons derive their run id from it), which turns at-least-once delivery
  into one effect.
- **Missed firings.** A job whose time passed while no process ran fires once when one is back
  (however late); a cron then moves to its first time after *now*, so a cron missed N periods
  fires once on recovery, not N times. :attr:`Firing.late` says how late.
- **Failures.** A handler that raises is retried after SCHEDULER_RETRY_SECONDS, up to
  SCHEDULER_MAX_ATTEMPTS claims of that due time; then a cron moves on, a one-shot job is
  dropped (logged).
- **UTC inside.** Due times are aware datetimes stored as UTC epoch ms; a cron is read in its
  job's IANA zone (time zones at the edges).

A process only claims the kinds it has a handler for, so a process without the cron handler
(Studio, the CLI) never takes crons away from the API processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from redis.exceptions import RedisError

from tools.background import stop_task
from tools.scheduler.cron import ScheduleError, check_cron, from_ms, next_fire, to_ms, utc, zone
from tools.scheduler.scripts import CANCEL, CLAIM, FINISH, RENEW, SCHEDULE
from tools.scheduler.settings import SchedulerSettings

log = logging.getLogger(__name__)

#: Key prefix; the ``{...}`` hash tag keeps every key of the scheduler in one Cluster slot.
PREFIX = "{switchyard:sched}"
#: Longest job id (ids are chosen by callers: prefix them with their kind, e.g. ``cron:<uuid>``).
MAX_ID_CHARS = 200


class QuotaExceeded(ScheduleError):
    """The owner holds SCHEDULER_MAX_JOBS_PER_OWNER jobs of this kind already."""


@dataclass(frozen=True)
class Job:
    """A scheduled job as stored."""

    id: str
    kind: str
    owner: str
    payload: dict[str, Any]
    due: datetime
    cron: str | None = None
    timezone: str = "UTC"
    end: datetime | None = None
    attempts: int = 0
    last_fired: datetime | None = None


@dataclass(frozen=True)
class Firing:
    """One firing of a job, handed to its kind's handler."""

    job: Job
    attempt: int
    """1 for the first claim of this due time; more after a crash or a failure."""
    now: datetime

    @property
    def firing_id(self) -> str:
        """Stable across re-deliveries of this due time: the key to make the effect once."""
        return f"{self.job.id}@{to_ms(self.job.due)}"

    @property
    def late(self) -> timedelta:
        return self.now - self.job.due


#: A kind's handler. It may return the job's next due time (a recurrence of its own rule);
#: None lets a cron move to its next time and ends a one-shot job.
Handler = Callable[[Firing], Awaitable[datetime | None]]
Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _job(flat: list[Any] | dict[Any, Any]) -> Job:
    if isinstance(flat, dict):
        raw = {_text(k): _text(v) for k, v in flat.items()}
    else:
        raw = {_text(flat[i]): _text(flat[i + 1]) for i in range(0, len(flat), 2)}
    return Job(
        id=raw["id"],
        kind=raw["kind"],
        owner=raw["owner"],
        payload=json.loads(raw.get("payload") or "{}"),
        due=from_ms(raw["due"]),
        cron=raw.get("cron") or None,
        timezone=raw.get("tz") or "UTC",
        end=from_ms(raw["end"]) if raw.get("end") else None,
        attempts=int(raw.get("attempts") or 0),
        last_fired=from_ms(raw["last"]) if raw.get("last") else None,
    )


@dataclass
class Scheduler:
    """Jobs on Redis and this process's runner loop (see the module docstring)."""

    redis: Any
    """An asyncio Redis (or RedisCluster) client."""
    settings: SchedulerSettings = field(default_factory=SchedulerSettings)
    clock: Clock = _utcnow
    """Where "now" comes from (tests pass a controllable clock)."""
    prefix: str = PREFIX
    handlers: dict[str, Handler] = field(default_factory=dict)
    fired: int = 0
    failed: int = 0
    fired_by_kind: dict[str, int] = field(default_factory=dict)
    """Handler calls that succeeded in this process, per kind (metrics; tests count them)."""
    _task: asyncio.Task[None] | None = None
    _stopping: bool = False
    """Set by :meth:`stop`: the loop ends on it even when a cancel was turned into an error."""
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _scripts: dict[str, Any] = field(default_factory=dict)

    # --- keys and scripts ---------------------------------------------------------------
    def _keys(self, kind: str, job_id: str, owner: str) -> list[str]:
        p = self.prefix
        return [f"{p}:due:{kind}", f"{p}:leased:{kind}", f"{p}:job:{job_id}",
                f"{p}:owner:{kind}:{owner}"]  # fmt: skip

    def _script(self, source: str) -> Any:
        if source not in self._scripts:
            self._scripts[source] = self.redis.register_script(source)
        return self._scripts[source]

    # --- jobs ---------------------------------------------------------------------------
    def register(self, kind: str, handler: Handler) -> None:
        """Fire ``kind``'s jobs with ``handler`` in this process (claims start at the next poll)."""
        self.handlers[kind] = handler
        self._wake.set()

    async def schedule(
        self,
        job_id: str,
        *,
        kind: str,
        owner: str,
        payload: dict[str, Any] | None = None,
        due: datetime | None = None,
        cron: str | None = None,
        timezone: str = "UTC",
        end: datetime | None = None,
        quota: int | None = None,
    ) -> Job:
        """Create or replace the job ``job_id``: due at ``due`` (aware; any zone), or at the next
        time of ``cron`` (read in ``timezone``) when ``due`` is None, and then every time after
        until ``end``. Replacing drops a claim in progress (that firing completes as a no-op) and
        keeps kind and owner (another kind's or owner's id is a ScheduleError). ``quota``
        (default SCHEDULER_MAX_JOBS_PER_OWNER; 0 = none) bounds the owner's jobs of ``kind``."""
        if not job_id or len(job_id) > MAX_ID_CHARS:
            raise ScheduleError(f"job id must be 1 to {MAX_ID_CHARS} characters")
        zone(timezone)
        now = utc(self.clock())
        if cron is not None:
            cron = check_cron(cron)
        if due is None:
            if cron is None:
                raise ScheduleError("give the job a due time or a cron expression")
            due = next_fire(cron, timezone, now)
        due = utc(due)
        if end is not None:
            end = utc(end)
            if end < due:
                raise ScheduleError("the end time is before the first firing: nothing would fire")
        fields = ["payload", json.dumps(payload or {}), "due", str(to_ms(due)), "tz", timezone]
        if cron is not None:
            fields += ["cron", cron]
        if end is not None:
            fields += ["end", str(to_ms(end))]
        limit = self.settings.max_jobs_per_owner if quota is None else quota
        done = await self._script(SCHEDULE)(
            keys=self._keys(kind, job_id, owner),
            args=[job_id, kind, owner, limit, *fields],
        )
        if done == -1:
            raise QuotaExceeded(
                f"{owner!r} holds {limit} {kind} jobs already (SCHEDULER_MAX_JOBS_PER_OWNER); "
                "cancel one first"
            )
        if done == -2:
            raise ScheduleError(f"job id {job_id!r} belongs to another kind or owner")
        if due <= now + timedelta(seconds=self.settings.poll_seconds):
            self._wake.set()
        return Job(job_id, kind, owner, payload or {}, due, cron, timezone, end)

    async def reschedule(self, job_id: str, due: datetime) -> Job | None:
        """Move the job to ``due`` (keeping everything else); None when there is no such job."""
        job = await self.get(job_id)
        if job is None:
            return None
        return await self.schedule(
            job_id, kind=job.kind, owner=job.owner, payload=job.payload, due=due, cron=job.cron,
            timezone=job.timezone, end=job.end, quota=0,
        )  # fmt: skip

    async def cancel(self, job_id: str) -> bool:
        """Delete the job (a firing in progress completes as a no-op); False when absent."""
        job = await self.get(job_id)
        if job is None:
            return False
        keys = self._keys(job.kind, job_id, job.owner)
        return bool(await self._script(CANCEL)(keys=keys, args=[job_id, job.kind]))

    async def get(self, job_id: str) -> Job | None:
        raw = await self.redis.hgetall(f"{self.prefix}:job:{job_id}")
        return _job(raw) if raw else None

    async def job_ids(self, kind: str, owner: str) -> list[str]:
        """The owner's job ids of ``kind`` (unordered)."""
        members = await self.redis.smembers(f"{self.prefix}:owner:{kind}:{owner}")
        return sorted(_text(m) for m in members)

    async def pending(self, kind: str) -> int:
        """Jobs of ``kind`` waiting or being fired (all owners)."""
        p = self.prefix
        return int(await self.redis.zcard(f"{p}:due:{kind}")) + int(
            await self.redis.zcard(f"{p}:leased:{kind}")
        )

    # --- firing -------------------------------------------------------------------------
    async def claim(self, kind: str) -> list[tuple[Job, str]]:
        """Lease up to SCHEDULER_BATCH_SIZE due jobs of ``kind``: (job, claim token) pairs."""
        now = to_ms(self.clock())
        token = uuid.uuid4().hex
        p = self.prefix
        rows = await self._script(CLAIM)(
            keys=[f"{p}:due:{kind}", f"{p}:leased:{kind}"],
            args=[now, int(self.settings.lease_seconds * 1000), self.settings.batch_size,
                  token, f"{p}:job:"],
        )  # fmt: skip
        return [(_job(row), token) for row in rows]

    async def _finish(
        self, job: Job, token: str, next_due: datetime | None, fired: bool, retry: bool = False
    ) -> bool:
        args = [job.id, token, str(to_ms(next_due)) if next_due else "",
                str(to_ms(self.clock())) if fired else "", "1" if retry else ""]  # fmt: skip
        keys = self._keys(job.kind, job.id, job.owner)
        return bool(await self._script(FINISH)(keys=keys, args=args))

    async def _renew(self, job: Job, token: str) -> None:
        p = self.prefix
        every = self.settings.lease_seconds / 3
        while True:
            await asyncio.sleep(every)
            expiry = to_ms(self.clock()) + int(self.settings.lease_seconds * 1000)
            keys = [f"{p}:leased:{job.kind}", f"{p}:job:{job.id}"]
            if not await self._script(RENEW)(keys=keys, args=[job.id, token, expiry]):
                return

    def _after(self, job: Job, now: datetime) -> datetime | None:
        """A cron's next time after both its due time and now (missed periods collapse)."""
        if job.cron is None:
            return None
        following = next_fire(job.cron, job.timezone, max(now, job.due))
        return None if job.end is not None and following > job.end else following

    async def fire(self, job: Job, token: str) -> bool:
        """Run the handler of a claimed job and complete, retry or give up its claim."""
        handler = self.handlers[job.kind]
        now = utc(self.clock())
        renew = asyncio.create_task(self._renew(job, token))
        try:
            chosen = await handler(Firing(job, job.attempts, now))
        except asyncio.CancelledError:
            raise
        except Exception:
            self.failed += 1
            if job.attempts < self.settings.max_attempts:
                log.exception("scheduler: %s (%s) failed; retrying", job.id, job.kind)
                retry_at = utc(self.clock()) + timedelta(seconds=self.settings.retry_seconds)
                return await self._finish(job, token, retry_at, fired=False, retry=True)
            log.exception("scheduler: %s (%s) failed %d times; giving up this due time",
                          job.id, job.kind, job.attempts)  # fmt: skip
            return await self._finish(job, token, self._after(job, now), fired=False)
        finally:
            await stop_task(renew, what=f"the lease renewal of {job.id}")
        self.fired += 1
        self.fired_by_kind[job.kind] = self.fired_by_kind.get(job.kind, 0) + 1
        next_due = utc(chosen) if chosen is not None else self._after(job, now)
        return await self._finish(job, token, next_due, fired=True)

    async def run_due(self) -> int:
        """Claim and fire every due job of the registered kinds once; how many were fired."""
        total = 0
        for kind in list(self.handlers):
            claimed = await self.claim(kind)
            if claimed:
                await asyncio.gather(*(self.fire(job, token) for job, token in claimed))
                total += len(claimed)
        return total

    # --- the runner loop ----------------------------------------------------------------
    async def start(self) -> None:
        """Start this process's runner loop (idempotent)."""
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.create_task(self._run(), name="scheduler")

    async def stop(self) -> None:
        """Stop the loop; a job it was firing keeps its lease and is fired again after it."""
        self._stopping = True
        self._wake.set()
        await stop_task(self._task, what="the scheduler's runner loop")
        self._task = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        unreachable = False  # one warning per Redis outage, not one per poll
        while not self._stopping:
            self._wake.clear()
            try:
                fired = await self.run_due()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:  # Redis down: the jobs wait in Redis
                if not unreachable:
                    log.warning("scheduler: Redis unreachable (%s); retrying", exc)
                unreachable = True
                fired = 0
            except Exception:  # a bug in a handler's bookkeeping: keep polling
                log.exception("scheduler: polling failed; retrying")
                fired = 0
            else:
                if unreachable:
                    log.info("scheduler: Redis is back; polling again")
                unreachable = False
            if fired >= self.settings.batch_size:
                continue  # more may be due already
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.poll_seconds)
