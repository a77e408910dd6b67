"""Background analyses in Redis: the job record, its state machine, the queue, progress events.

Keys of one analysis share the ``{thread_id}`` hash tag (one Redis Cluster slot):

- ``sy:analysis:{id}`` — the record (hash): owner, status, mode, times, worker, attempts,
  error, progress, and the result once done;
- ``sy:analysis:{id}:request`` — the validated request (JSON) until the run has checkpointed it;
- ``sy:analysis:{id}:cancel`` — the cancel flag the running worker's heartbeat looks for;
- ``sy:analysis:{id}:events`` — a stream of progress events (``/events`` reads it from any
  process).

The queue is one stream, ``sy:analysis:queue``, read by the consumer group
``analysis-workers`` (see :mod:`agents.test_analysis.worker`). Status changes are Lua
scripts, so a cancel and a worker's claim cannot interleave:

    queued --claim--> running --finish--> done | failed | cancelled
    queued --cancel--> cancelled          failed | cancelled --resume--> queued
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any, cast

import redis.asyncio as aredis

from agents.test_analysis.state import AnalysisRequestData

__all__ = ["GROUP", "QUEUE", "TERMINAL", "JobStore", "now_iso", "stream_entries"]

QUEUE = "sy:analysis:queue"
GROUP = "analysis-workers"
STATUSES = ("queued", "running", "done", "failed", "cancelled")
TERMINAL = frozenset({"done", "failed", "cancelled"})
#: Progress events kept per analysis (a stream capped approximately at this length).
MAX_EVENTS = 5000

AnyRedis = aredis.Redis | aredis.RedisCluster

# KEYS: record; ARGV: worker, now. -> "ok" | "missing" | <the terminal status>
_CLAIM = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 'missing' end
if status ~= 'queued' and status ~= 'running' then return status end
redis.call('HSET', KEYS[1], 'status', 'running', 'worker', ARGV[1], 'updated_at', ARGV[2])
if redis.call('HGET', KEYS[1], 'started_at') == false then
  redis.call('HSET', KEYS[1], 'started_at', ARGV[2])
end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return 'ok'
"""

# KEYS: record, cancel flag; ARGV: worker, status, now, ttl, field, value, ... -> 1 | 0
_FINISH = """
if redis.call('HGET', KEYS[1], 'worker') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'finished_at', ARGV[3], 'updated_at', ARGV[3],
           'cancel_requested', '0')
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('DEL', KEYS[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# KEYS: record, cancel flag; ARGV: now, ttl -> "cancelled" | "cancelling" | <other status>
_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'finished_at', ARGV[1],
             'updated_at', ARGV[1])
  return 'cancelled'
end
if status == 'running' then
  redis.call('SET', KEYS[2], '1', 'EX', ARGV[2])
  redis.call('HSET', KEYS[1], 'cancel_requested', '1', 'updated_at', ARGV[1])
  return 'cancelling'
end
return status or 'missing'
"""

# KEYS: record, cancel flag; ARGV: now -> "queued" | <other status>
_RESUME = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'failed' and status ~= 'cancelled' then return status or 'missing' end
redis.call('HSET', KEYS[1], 'status', 'queued', 'updated_at', ARGV[1], 'cancel_requested', '0',
           'error', '')
redis.call('HDEL', KEYS[1], 'finished_at')
redis.call('DEL', KEYS[2])
return 'queued'
"""


def now_iso() -> str:
    """The current time, ISO 8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def stream_entries(reply: Any) -> list[tuple[Any, list[Any]]]:
    """(stream, entries) pairs of an XREAD/XREADGROUP reply (RESP2 list or RESP3 map)."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return list(reply.items())
    return [(item[0], item[1]) for item in reply]


class JobStore:
    """Records, transitions, the queue and the event streams of background analyses."""

    def __init__(self, redis: AnyRedis, *, ttl_seconds: int, cluster: bool = False) -> None:
        self.redis = redis
        self.ttl = ttl_seconds
        # One MULTI cannot span cluster slots; on a cluster the queue write goes alone.
        self.transactional = not cluster
        self._claim = redis.register_script(_CLAIM)
        self._finish = redis.register_script(_FINISH)
        self._cancel = redis.register_script(_CANCEL)
        self._resume = redis.register_script(_RESUME)

    # --- keys ------------------------------------------------------------------------------
    @staticmethod
    def record_key(thread_id: str) -> str:
        return f"sy:analysis:{{{thread_id}}}"

    def _keys(self, thread_id: str) -> tuple[str, str, str, str]:
        base = self.record_key(thread_id)
        return base, f"{base}:request", f"{base}:cancel", f"{base}:events"

    # --- lifecycle -------------------------------------------------------------------------
    async def create(self, owner: str, request: AnalysisRequestData, mode: str) -> str:
        """Store a queued analysis and put it on the queue; returns its thread id."""
        thread_id = uuid.uuid4().hex
        record, req_key, _, events = self._keys(thread_id)
        stamp = now_iso()
        pipe = self.redis.pipeline(transaction=self.transactional)
        pipe.hset(
            record,
            mapping={
                "owner": owner,
                "status": "queued",
                "mode": mode,
                "files": len(request.get("files") or []),
                "created_at": stamp,
                "updated_at": stamp,
                "attempts": 0,
                "cancel_requested": "0",
            },
        )
        pipe.expire(record, self.ttl)
        pipe.set(req_key, json.dumps(request), ex=self.ttl)
        pipe.xadd(
            events,
            {"event": "queued", "data": json.dumps({"status": "queued"})},
            maxlen=MAX_EVENTS,
            approximate=True,
        )
        pipe.expire(events, self.ttl)
        pipe.xadd(QUEUE, {"thread_id": thread_id})
        await pipe.execute()
        return thread_id

    async def get(self, thread_id: str) -> dict[str, str] | None:
        """The record as text fields, or None."""
        raw = await self.redis.hgetall(self.record_key(thread_id))
        return {_text(k): _text(v) for k, v in raw.items()} if raw else None

    async def load_request(self, thread_id: str) -> AnalysisRequestData | None:
        raw = await self.redis.get(self._keys(thread_id)[1])
        return cast(AnalysisRequestData, json.loads(raw)) if raw else None

    async def claim(self, thread_id: str, worker: str) -> str:
        """queued/running -> running for ``worker``: "ok", "missing" or the terminal status."""
        record = self.record_key(thread_id)
        return _text(await self._claim(keys=[record], args=[worker, now_iso()]))

    async def finish(self, thread_id: str, worker: str, status: str, **fields: str) -> bool:
        """running -> ``status``, only if ``worker`` still holds the run (fencing)."""
        record, req_key, cancel, events = self._keys(thread_id)
        args: list[str | int] = [worker, status, now_iso(), self.ttl]
        for name, value in fields.items():
            args += [name, value]
        done = bool(await self._finish(keys=[record, cancel], args=args))
        if done:
            pipe = self.redis.pipeline(transaction=False)
            if status == "done":
                pipe.delete(req_key)  # the checkpoints hold the files now
            pipe.expire(req_key, self.ttl)
            pipe.expire(events, self.ttl)
            await pipe.execute()
        return done

    async def cancel(self, thread_id: str) -> str:
        """ "cancelled" (was queued), "cancelling" (a worker will stop it) or the status."""
        record, _, cancel, _ = self._keys(thread_id)
        return _text(await self._cancel(keys=[record, cancel], args=[now_iso(), self.ttl]))

    async def resume(self, thread_id: str) -> str:
        """failed/cancelled -> queued and back on the queue; else the current status."""
        record, _, cancel, _ = self._keys(thread_id)
        verdict = _text(await self._resume(keys=[record, cancel], args=[now_iso()]))
        if verdict == "queued":
            await self.redis.xadd(QUEUE, {"thread_id": thread_id})
            await self.emit(thread_id, "queued", {"status": "queued", "resumed": True})
        return verdict

    async def cancel_requested(self, thread_id: str) -> bool:
        return bool(await self.redis.exists(self._keys(thread_id)[2]))

    async def update(self, thread_id: str, **fields: str | int) -> None:
        """Progress fields of a running analysis."""
        await self.redis.hset(
            self.record_key(thread_id), mapping={k: str(v) for k, v in fields.items()}
        )

    # --- events ----------------------------------------------------------------------------
    async def emit(self, thread_id: str, event: str, data: dict[str, Any]) -> None:
        key = self._keys(thread_id)[3]
        await self.redis.xadd(
            key,
            {"event": event, "data": json.dumps(data, default=str)},
            maxlen=MAX_EVENTS,
            approximate=True,
        )

    async def read_events(
        self, thread_id: str, after: str, *, block_ms: int | None = None
    ) -> list[tuple[str, str, str]]:
        """Events after stream id ``after``: (id, event, data). With ``block_ms``, wait up to
        that long for the first one; without, answer at once."""
        key = self._keys(thread_id)[3]
        found = await self.redis.xread({key: after}, count=100, block=block_ms)
        out: list[tuple[str, str, str]] = []
        for _, entries in stream_entries(found):
            for entry_id, fields in entries:
                values = {_text(k): _text(v) for k, v in fields.items()}
                out.append((_text(entry_id), values.get("event", ""), values.get("data", "{}")))
        return out
