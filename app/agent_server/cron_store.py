"""Crons in Redis, per owner, and their scheduler jobs.

Keys (hash tags keep each group in one Redis Cluster slot):

- ``sy:cron:{<cron_id>}`` — the cron (hash): owner, thread (its stored key; '' for a stateless
  cron), assistant, schedule, time zone, end time, enabled, on_run_completed, the run payload
  and metadata (JSON), times;
- ``sy:crons:{<owner>}`` — the owner's cron ids by creation time (listing, MAX_CRONS_PER_OWNER);
- ``sy:thread-crons:{<thread key>}`` — a thread's crons (deleted with the thread).

A cron id is the server's uuid; a cron another key owns is answered like one that does not
exist. An enabled cron has one scheduler job (``cron:<cron_id>``, kind ``cron``) due at its next
time; a disabled one, or one past its end time, has none (``next_run_date`` null).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.agent_server.jobs import CRON, cron_job_id, scheduler_of
from app.services import Services
from app.thread_ids import client_thread_id
from tools.operations import EngineNotOpen
from tools.scheduler import Scheduler, next_fire

__all__ = ["CronRecord", "CronStore", "arm", "cron_view", "delete_cron", "delete_thread_crons"]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class CronRecord:
    cron_id: str
    owner: str
    assistant_id: str
    schedule: str
    thread_key: str = ""
    timezone: str = "UTC"
    end_time: str = ""
    enabled: bool = True
    on_run_completed: str = "delete"
    payload: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def as_hash(self) -> dict[str, str]:
        out = {k: v for k, v in asdict(self).items() if isinstance(v, str)}
        out["enabled"] = "1" if self.enabled else "0"
        out["payload"] = json.dumps(self.payload)
        out["metadata"] = json.dumps(self.metadata)
        return out

    @classmethod
    def from_hash(cls, raw: dict[Any, Any]) -> CronRecord:
        values = {_text(k): _text(v) for k, v in raw.items()}
        return cls(
            **{k: v for k, v in values.items() if k not in ("enabled", "payload", "metadata")},
            enabled=values.get("enabled") == "1",
            payload=json.loads(values.get("payload") or "{}"),
            metadata=json.loads(values.get("metadata") or "{}"),
        )

    @property
    def end(self) -> datetime | None:
        return datetime.fromisoformat(self.end_time) if self.end_time else None


class CronStore:
    """The crons of every owner (one per process's Redis client; cheap to make)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    @staticmethod
    def _key(cron_id: str) -> str:
        return f"sy:cron:{{{cron_id}}}"

    @staticmethod
    def _owner_key(owner: str) -> str:
        return f"sy:crons:{{{owner}}}"

    @staticmethod
    def _thread_key(thread_key: str) -> str:
        return f"sy:thread-crons:{{{thread_key}}}"

    async def save(self, record: CronRecord) -> None:
        await self.redis.hset(self._key(record.cron_id), mapping=record.as_hash())
        await self.redis.zadd(
            self._owner_key(record.owner),
            {record.cron_id: datetime.fromisoformat(record.created_at).timestamp()},
        )
        if record.thread_key:
            await self.redis.sadd(self._thread_key(record.thread_key), record.cron_id)

    async def get(self, cron_id: str) -> CronRecord | None:
        raw = await self.redis.hgetall(self._key(cron_id))
        return CronRecord.from_hash(raw) if raw else None

    async def get_owned(self, owner: str, cron_id: str) -> CronRecord | None:
        found = await self.get(cron_id)
        return found if found is not None and found.owner == owner else None

    async def count(self, owner: str) -> int:
        return int(await self.redis.zcard(self._owner_key(owner)))

    async def owned(self, owner: str) -> list[CronRecord]:
        """The owner's crons, oldest first."""
        ids = [_text(i) for i in await self.redis.zrange(self._owner_key(owner), 0, -1)]
        out = []
        for start in range(0, len(ids), 500):
            pipe = self.redis.pipeline(transaction=False)
            for cron_id in ids[start : start + 500]:
                pipe.hgetall(self._key(cron_id))
            out += [CronRecord.from_hash(raw) for raw in await pipe.execute() if raw]
        return out

    async def thread_cron_ids(self, thread_key: str) -> list[str]:
        return sorted(_text(i) for i in await self.redis.smembers(self._thread_key(thread_key)))

    async def delete(self, record: CronRecord) -> None:
        await self.redis.delete(self._key(record.cron_id))
        await self.redis.zrem(self._owner_key(record.owner), record.cron_id)
        if record.thread_key:
            await self.redis.srem(self._thread_key(record.thread_key), record.cron_id)


def next_time(record: CronRecord, now: datetime | None = None) -> datetime | None:
    """The cron's next firing after ``now``; None when disabled or past its end time."""
    if not record.enabled:
        return None
    following = next_fire(record.schedule, record.timezone, now or datetime.now(UTC))
    end = record.end
    return None if end is not None and following > end else following


async def arm(services: Services, record: CronRecord) -> datetime | None:
    """Make the cron's scheduler job match the record: due at its next time, or none."""
    scheduler = scheduler_of(services)
    due = next_time(record)
    if due is None:
        await scheduler.cancel(cron_job_id(record.cron_id))
        return None
    await scheduler.schedule(
        cron_job_id(record.cron_id), kind=CRON, owner=record.owner,
        payload={"cron_id": record.cron_id}, due=due, cron=record.schedule,
        timezone=record.timezone, end=record.end, quota=0,  # MAX_CRONS_PER_OWNER bounds them
    )  # fmt: skip
    return due


async def delete_cron(services: Services, record: CronRecord) -> None:
    await scheduler_of(services).cancel(cron_job_id(record.cron_id))
    await CronStore(services.stores.redis).delete(record)


async def delete_thread_crons(services: Services, thread_key: str) -> None:
    """Delete the crons of a thread being deleted (their runs would have no thread)."""
    store = CronStore(services.stores.redis)
    try:
        scheduler: Scheduler | None = services.agents.engine(Scheduler)
    except EngineNotOpen:
        scheduler = None
    for cron_id in await store.thread_cron_ids(thread_key):
        record = await store.get(cron_id)
        if scheduler is not None:
            await scheduler.cancel(cron_job_id(cron_id))
        if record is not None:
            await store.delete(record)
    await store.redis.delete(store._thread_key(thread_key))


async def cron_view(services: Services, record: CronRecord) -> dict[str, Any]:
    """The ``Cron`` object of the Agent Server API."""
    job = None
    if record.enabled:
        job = await scheduler_of(services).get(cron_job_id(record.cron_id))
    return {
        "cron_id": record.cron_id,
        "assistant_id": record.assistant_id,
        "thread_id": client_thread_id(record.thread_key) if record.thread_key else None,
        "on_run_completed": None if record.thread_key else record.on_run_completed,
        "end_time": record.end_time or None,
        "schedule": record.schedule,
        "timezone": record.timezone,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "user_id": None,
        "payload": record.payload,
        "next_run_date": job.due.isoformat() if job is not None else None,
        "metadata": record.metadata,
        "enabled": record.enabled,
    }
