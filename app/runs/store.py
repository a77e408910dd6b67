"""Background runs in Redis: the record, its state machine, the queue, input, events.

Keys of one run share the ``{run_id}`` hash tag (one Redis Cluster slot):

- ``sy:run:{id}`` — the record (hash): owner, thread, agent, status, times, worker, attempts,
  error, the submitter's metadata, and the result once done;
- ``sy:run:{id}:input`` — the run's input and options (JSON), kept while the run may resume;
- ``sy:run:{id}:cancel`` — the cancel flag the running worker's heartbeat looks for;
- ``sy:run:{id}:events`` — the run's event stream (any API process reads it).

Runs on a thread are indexed per thread (``{thread_id}`` hash tag): ``sy:thread-runs:{t}`` (every
run, by creation time) and ``sy:thread-active:{t}`` (the runs not yet finished, in order: a
serial run starts only when it is the first of them, see :mod:`app.runs.threads`). Runs are
indexed per owner too (``sy:owner-active:{owner}``): the runs submitted or resumed, pruned of
finished ones when counted, for the MAX_ACTIVE_RUNS_PER_OWNER quota.

The queue is one stream, ``sy:runs:queue``, read by the consumer group ``run-workers`` (see
:mod:`app.runs.worker`). Status changes are Lua scripts, so a cancel and a worker's claim
cannot interleave:

    queued --claim--> running --finish--> done | failed | cancelled
    queued --cancel--> cancelled          failed | cancelled --resume--> queued

A delayed run (``after_seconds``) is stored queued but put on the queue only when the scheduler
releases it (:meth:`RunStore.release_delayed`).

Over 400 lines because it is one class, `RunStore`: the record, its transition scripts, the
indexes and the event stream of a run change together.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aredis

__all__ = ["GROUP", "QUEUE", "TERMINAL", "RunStore", "now_iso", "stream_entries"]

QUEUE = "sy:runs:queue"
GROUP = "run-workers"
STATUSES = ("queued", "running", "done", "failed", "cancelled")
TERMINAL = frozenset({"done", "failed", "cancelled"})
#: Events kept per run (a stream capped approximately at this length).
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

# KEYS: record, cancel flag; ARGV: now, ttl, action -> "cancelled" | "cancelling" | <status>
_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'finished_at', ARGV[1],
             'updated_at', ARGV[1], 'cancel_action', ARGV[3])
  return 'cancelled'
end
if status == 'running' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
  redis.call('HSET', KEYS[1], 'cancel_requested', '1', 'updated_at', ARGV[1],
             'cancel_action', ARGV[3])
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


class RunStore:
    """Records, transitions, the queue and the event streams of background runs."""

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
    def record_key(run_id: str) -> str:
        return f"sy:run:{{{run_id}}}"

    def _keys(self, run_id: str) -> tuple[str, str, str, str]:
        base = self.record_key(run_id)
        return base, f"{base}:input", f"{base}:cancel", f"{base}:events"

    @staticmethod
    def thread_runs_key(thread_id: str) -> str:
        return f"sy:thread-runs:{{{thread_id}}}"

    @staticmethod
    def thread_active_key(thread_id: str) -> str:
        return f"sy:thread-active:{{{thread_id}}}"

    @staticmethod
    def owner_active_key(owner: str) -> str:
        return f"sy:owner-active:{{{owner}}}"

    # --- lifecycle -------------------------------------------------------------------------
    async def submit(
        self,
        *,
        owner: str,
        thread_id: str,
        run_input: dict[str, Any],
        options: dict[str, Any] | None = None,
        agent: str | None = None,
        meta: dict[str, Any] | None = None,
        run_id: str | None = None,
        spec: dict[str, Any] | None = None,
        kind: str = "turn",
        serial: bool = False,
        delayed: bool = False,
    ) -> str:
        """Store a queued run of ``run_input`` (a JSON-able ``ChatInput``, or None to continue
        from the thread's checkpoint) on ``thread_id`` and put it on the queue; returns the run
        id. ``spec`` says how to run and stream it (:class:`app.runs.spec.RunSpec`); a
        ``serial`` run waits for the thread's earlier runs and holds the thread's lock. A
        ``delayed`` run is stored (pending, one of the thread's active runs) but not queued
        until :meth:`release_delayed` (``after_seconds``: the scheduler calls it when due)."""
        run_id = run_id or uuid.uuid4().hex
        record, input_key, _, events = self._keys(run_id)
        stamp = now_iso()
        pipe = self.redis.pipeline(transaction=self.transactional)
        pipe.hset(
            record,
            mapping={
                "owner": owner,
                "thread_id": thread_id,
                "agent": agent or "",
                "kind": kind,
                "serial": "1" if serial else "0",
                "status": "queued",
                "meta": json.dumps(meta or {}),
                "created_at": stamp,
                "updated_at": stamp,
                "attempts": 0,
                "cancel_requested": "0",
                "delayed": "1" if delayed else "0",
            },
        )
        pipe.expire(record, self.ttl)
        payload = {"input": run_input, "options": options or {}, "spec": spec or {}}
        pipe.set(input_key, json.dumps(payload), ex=self.ttl)
        if kind != "turn":
            score = time.time()
            pipe.zadd(self.thread_runs_key(thread_id), {run_id: score})
            pipe.expire(self.thread_runs_key(thread_id), self.ttl)
            pipe.zadd(self.thread_active_key(thread_id), {run_id: score})
            pipe.expire(self.thread_active_key(thread_id), self.ttl)
        pipe.xadd(
            events,
            {"event": "queued", "data": json.dumps({"status": "queued"})},
            maxlen=MAX_EVENTS,
            approximate=True,
        )
        pipe.expire(events, self.ttl)
        pipe.zadd(self.owner_active_key(owner), {run_id: time.time()})
        pipe.expire(self.owner_active_key(owner), self.ttl)
        if not delayed:
            pipe.xadd(QUEUE, {"run_id": run_id})
        await pipe.execute()
        return run_id

    async def release_delayed(self, run_id: str) -> bool:
        """Queue a delayed run that is still pending (once: the flag and the queue entry are
        written in one transaction, so a repeated call, e.g. a re-delivered firing, queues
        nothing); False when it was released, cancelled or is gone."""
        record = self.record_key(run_id)
        fields = await self.redis.hmget(record, ["delayed", "status"])
        if fields[0] is None or _text(fields[0]) != "1" or _text(fields[1] or b"") != "queued":
            return False
        pipe = self.redis.pipeline(transaction=self.transactional)
        pipe.hset(record, "delayed", "0")
        pipe.xadd(QUEUE, {"run_id": run_id})
        await pipe.execute()
        return True

    async def get(self, run_id: str) -> dict[str, str] | None:
        """The record as text fields, or None."""
        raw = await self.redis.hgetall(self.record_key(run_id))
        return {_text(k): _text(v) for k, v in raw.items()} if raw else None

    async def load_input(self, run_id: str) -> dict[str, Any] | None:
        """``{"input": ..., "options": ...}`` as submitted, or None once expired."""
        raw = await self.redis.get(self._keys(run_id)[1])
        return json.loads(raw) if raw else None

    async def claim(self, run_id: str, worker: str) -> str:
        """queued/running -> running for ``worker``: "ok", "missing" or the terminal status."""
        return _text(await self._claim(keys=[self.record_key(run_id)], args=[worker, now_iso()]))

    async def finish(self, run_id: str, worker: str, status: str, **fields: str) -> bool:
        """running -> ``status``, only if ``worker`` still holds the run (fencing)."""
        record, input_key, cancel, events = self._keys(run_id)
        args: list[str | int] = [worker, status, now_iso(), self.ttl]
        for name, value in fields.items():
            args += [name, value]
        done = bool(await self._finish(keys=[record, cancel], args=args))
        if done:
            pipe = self.redis.pipeline(transaction=False)
            if status == "done":
                pipe.delete(input_key)  # the checkpoints hold everything now
            pipe.expire(input_key, self.ttl)
            pipe.expire(events, self.ttl)
            await pipe.execute()
        return done

    async def cancel(self, run_id: str, action: str = "interrupt") -> str:
        """ "cancelled" (was queued), "cancelling" (a worker will stop it) or the status.
        ``action`` is ``interrupt`` (keep what the run saved) or ``rollback`` (the worker, or
        the caller for a queued run, deletes the run and what it saved)."""
        record, _, cancel, _ = self._keys(run_id)
        return _text(await self._cancel(keys=[record, cancel], args=[now_iso(), self.ttl, action]))

    async def delete(self, run_id: str, thread_id: str | None = None) -> None:
        """Forget a run: its record, input, flags, events and index entries."""
        record, input_key, cancel, events = self._keys(run_id)
        await self.redis.delete(record, input_key, cancel, events)
        if thread_id:
            await self.redis.zrem(self.thread_runs_key(thread_id), run_id)
            await self.redis.zrem(self.thread_active_key(thread_id), run_id)

    async def settle(self, run_id: str, thread_id: str) -> None:
        """The run is over: no longer one of the thread's active runs."""
        await self.redis.zrem(self.thread_active_key(thread_id), run_id)

    async def settle_if_over(self, run_id: str, thread_id: str) -> None:
        """Drop the run from the thread's active runs if it is over (or gone)."""
        record = await self.get(run_id)
        if record is None or record.get("status") in TERMINAL:
            await self.settle(run_id, thread_id)

    async def thread_run_ids(self, thread_id: str, offset: int = 0, limit: int = 10) -> list[str]:
        """Runs of a thread, newest first."""
        ids = await self.redis.zrevrange(
            self.thread_runs_key(thread_id), offset, offset + limit - 1
        )
        return [_text(i) for i in ids]

    async def active_run_ids(self, thread_id: str) -> list[str]:
        """The thread's unfinished runs, oldest first; ids whose run is over or gone are
        dropped from the index on the way (a crash between finishing and settling)."""
        ids = [_text(i) for i in await self.redis.zrange(self.thread_active_key(thread_id), 0, -1)]
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for run_id in ids:
            pipe.hget(self.record_key(run_id), "status")
        statuses = await pipe.execute()
        live, stale = [], []
        for run_id, status in zip(ids, statuses, strict=True):
            if status is None or _text(status) in TERMINAL:
                stale.append(run_id)
            else:
                live.append(run_id)
        if stale:
            await self.redis.zrem(self.thread_active_key(thread_id), *stale)
        return live

    async def active_of_owner(self, owner: str) -> int:
        """How many of ``owner``'s runs are queued or running; finished or expired ones are
        dropped from the owner's index on the way (so it stays as small as the quota)."""
        key = self.owner_active_key(owner)
        ids = [_text(i) for i in await self.redis.zrange(key, 0, -1)]
        if not ids:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        for run_id in ids:
            pipe.hget(self.record_key(run_id), "status")
        statuses = await pipe.execute()
        stale = [
            run_id
            for run_id, status in zip(ids, statuses, strict=True)
            if status is None or _text(status) in TERMINAL
        ]
        if stale:
            await self.redis.zrem(key, *stale)
        return len(ids) - len(stale)

    async def active_counts(self, thread_ids: list[str]) -> list[int]:
        """How many runs each thread has not finished (index size; no clean-up)."""
        if not thread_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for thread_id in thread_ids:
            pipe.zcard(self.thread_active_key(thread_id))
        return [int(n) for n in await pipe.execute()]

    async def get_many(self, run_ids: list[str]) -> list[dict[str, str] | None]:
        """Records of these runs, in order (None where gone)."""
        if not run_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.hgetall(self.record_key(run_id))
        replies = await pipe.execute()
        return [{_text(k): _text(v) for k, v in raw.items()} if raw else None for raw in replies]

    async def resume(self, run_id: str) -> str:
        """failed/cancelled -> queued and back on the queue; else the current status."""
        record, _, cancel, _ = self._keys(run_id)
        verdict = _text(await self._resume(keys=[record, cancel], args=[now_iso()]))
        if verdict == "queued":
            owner = await self.redis.hget(record, "owner")
            if owner is not None:
                key = self.owner_active_key(_text(owner))
                await self.redis.zadd(key, {run_id: time.time()})
                await self.redis.expire(key, self.ttl)
            await self.redis.xadd(QUEUE, {"run_id": run_id})
            await self.emit(run_id, "queued", {"status": "queued", "resumed": True})
        return verdict

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self.redis.exists(self._keys(run_id)[2]))

    async def cancel_action(self, run_id: str) -> str:
        """``interrupt`` or ``rollback``: what a requested cancel asked for."""
        raw = await self.redis.hget(self.record_key(run_id), "cancel_action")
        return _text(raw) if raw else "interrupt"

    async def update(self, run_id: str, **fields: str | int) -> None:
        """Progress fields of a running run."""
        await self.redis.hset(
            self.record_key(run_id), mapping={k: str(v) for k, v in fields.items()}
        )

    # --- events ----------------------------------------------------------------------------
    async def emit(self, run_id: str, event: str, data: dict[str, Any]) -> None:
        """Append an event to the run's stream."""
        await self.emit_raw(run_id, event, json.dumps(data, default=str))

    async def emit_raw(self, run_id: str, event: str, data: str) -> None:
        """Append an event whose data is already JSON text."""
        await self.redis.xadd(
            self._keys(run_id)[3],
            {"event": event, "data": data},
            maxlen=MAX_EVENTS,
            approximate=True,
        )

    async def last_event_id(self, run_id: str) -> str:
        """The id of the run's newest event ("0-0" when there is none)."""
        newest = await self.redis.xrevrange(self._keys(run_id)[3], count=1)
        return _text(newest[0][0]) if newest else "0-0"

    async def read_events(
        self, run_id: str, after: str, *, block_ms: int | None = None
    ) -> list[tuple[str, str, str]]:
        """Events after stream id ``after``: (id, event, data). With ``block_ms``, wait up to
        that long for the first one; without, answer at once."""
        found = await self.redis.xread({self._keys(run_id)[3]: after}, count=100, block=block_ms)
        out: list[tuple[str, str, str]] = []
        for _, entries in stream_entries(found):
            for entry_id, fields in entries:
                values = {_text(k): _text(v) for k, v in fields.items()}
                out.append((_text(entry_id), values.get("event", ""), values.get("data", "{}")))
        return out
