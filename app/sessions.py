"""Threads (chat sessions): a registry record per thread, a per-owner index and a run lock.

One registry serves `/chat` and the Agent Server API: a chat session IS a thread. The
conversation itself is the thread's checkpoints; the record says who owns the thread, its
metadata, times, the agents it used and how its last run ended. The per-owner index (a sorted
set by creation time) answers thread search and count for one API key without scanning Redis.

A record is created in one Lua script (claimed and filled atomically, with its TTL), so two
creators of the same id cannot both win and no half-made record is ever visible. Its TTL is the
checkpoints' (CHECKPOINT_TTL_MINUTES) and is re-armed with them: on every write, on every read
when CHECKPOINT_REFRESH_ON_READ, and with each heartbeat of a run holding the thread, so a
thread's checkpoints never outlive the record that says whose they are. Deleting a record
deletes the thread's run indexes with it.

Every thread is stored under its owner's key (:mod:`app.thread_ids`): a record is created for
an owner and a client id (or a fresh UUID) and lives at ``<owner>:<id>``; every other method
takes that stored key (:attr:`SessionInfo.key`), which is also the thread's checkpoint thread
id, its run indexes' and its lock's.

The lock makes a thread single-writer: a second message while a turn runs gets 409, never
interleaved state. `/chat` takes it with redis-py's `Lock` (a random token in a key with a
timeout); a background run takes the same key with its run id as the token
(:meth:`SessionStore.hold`), re-entrant, so a worker that takes over a run of a dead process
gets the lock back at once. Either way it holds across replicas.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aredis
from redis.asyncio.lock import Lock

from app.runs.store import RunStore
from app.thread_ids import client_thread_id, thread_key

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{7,63}$"
_SESSION_ID = re.compile(SESSION_ID_PATTERN)
#: What a thread's last run left it as (``busy`` is live: the lock or active runs).
THREAD_STATUSES = ("idle", "busy", "interrupted", "error")

# KEYS: record; ARGV: record ttl ms (0: none), field, value, ... -> 1 (created now) | the
# existing record's fields (HGETALL). Claim and fill in one step: never a half-made record.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
"""
# KEYS: lock, record; ARGV: token, ttl ms, record ttl ms (0: none) -> 1 (held by token now) |
# 0 (held by another). Holding the thread re-arms the record's TTL: a run writing checkpoints
# for longer than the TTL keeps its thread's record alive with them.
_HOLD = """
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
if v then redis.call('PEXPIRE', KEYS[1], ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
"""
# KEYS: lock; ARGV: token -> 1 | 0
_UNHOLD = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def valid_session_id(value: str) -> bool:
    """Session ids are 8-64 characters of letters, digits, `_` and `-` (UUIDs fit)."""
    return bool(_SESSION_ID.match(value))


@dataclass
class SessionInfo:
    """The registry record of one thread (session)."""

    key: str
    """The stored key (``<owner>:<id>``): what checkpoints, runs and the lock use."""
    owner: str
    user_id: str
    created_at: str
    agents: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    updated_at: str = ""
    status: str = "idle"
    error: str = ""

    @property
    def session_id(self) -> str:
        """The id its owner knows the thread by (what every answer shows)."""
        return client_thread_id(self.key)

    @property
    def thread_id(self) -> str:
        return self.session_id

    def as_hash(self) -> dict[Any, Any]:
        return {
            "owner": self.owner,
            "user_id": self.user_id,
            "created_at": self.created_at,
            "agents": json.dumps(self.agents),
            "metadata": json.dumps(self.metadata),
            "updated_at": self.updated_at or self.created_at,
            "status": self.status,
            "error": self.error,
        }

    @classmethod
    def from_hash(cls, key: str, raw: dict[Any, Any]) -> SessionInfo:
        data = {_text(k): _text(v) for k, v in raw.items()}
        return cls(
            key=key,
            owner=data.get("owner", ""),
            user_id=data.get("user_id", ""),
            created_at=data.get("created_at", ""),
            agents=json.loads(data.get("agents") or "[]"),
            metadata=json.loads(data.get("metadata") or "{}"),
            updated_at=data.get("updated_at") or data.get("created_at", ""),
            status=data.get("status") or "idle",
            error=data.get("error") or "",
        )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _score(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


class SessionStore:
    """Thread records, the per-owner index and run locks in Redis."""

    def __init__(
        self,
        redis: aredis.Redis | aredis.RedisCluster,
        *,
        ttl_seconds: int | None = None,
        refresh_on_read: bool = True,
        lock_seconds: float = 600.0,
        prefix: str = "sy:session:",
    ) -> None:
        self.redis = redis
        self.ttl_seconds = ttl_seconds
        self.refresh_on_read = refresh_on_read
        self.lock_seconds = lock_seconds
        self.prefix = prefix
        self._create = redis.register_script(_CREATE)
        self._hold = redis.register_script(_HOLD)
        self._unhold = redis.register_script(_UNHOLD)

    def _key(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}"

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}:lock"

    def _index_key(self, owner: str) -> str:
        return f"sy:sessions-of:{{{owner}}}"

    # --- records ---------------------------------------------------------------------------
    async def create(
        self,
        owner: str,
        user_id: str,
        created_at: str,
        *,
        thread_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionInfo:
        """A new thread record of ``owner`` (a fresh id unless ``thread_id`` is given)."""
        info, _ = await self.create_if_absent(
            owner, user_id, created_at, thread_id=thread_id, metadata=metadata
        )
        return info

    async def create_if_absent(
        self,
        owner: str,
        user_id: str,
        created_at: str,
        *,
        thread_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> tuple[SessionInfo, bool]:
        """(the record, True) if it was created now; (the existing record, False) if
        ``owner`` has a thread ``thread_id`` already (a client id; another owner's thread of
        the same id is another key, never seen here)."""
        info = SessionInfo(
            thread_key(owner, thread_id or uuid.uuid4().hex),
            owner,
            user_id,
            created_at,
            metadata=dict(metadata or {}),
            updated_at=created_at,
        )
        fields: list[Any] = [self._ttl_ms]
        for name, value in info.as_hash().items():
            fields += [name, value]
        reply = await self._create(keys=[self._key(info.key)], args=fields)
        if isinstance(reply, list):
            pairs = dict(zip(reply[::2], reply[1::2], strict=True))
            return SessionInfo.from_hash(info.key, pairs), False
        # The owner's index is in another hash slot (cluster): added once the record is ours,
        # so an index never lists another owner's thread.
        await self.redis.zadd(self._index_key(owner), {info.key: _score(created_at)})
        return info, True

    @property
    def _ttl_ms(self) -> int:
        return self.ttl_seconds * 1000 if self.ttl_seconds else 0

    async def get(self, key: str) -> SessionInfo | None:
        """The record stored at ``key`` (its TTL re-armed when reads refresh checkpoints too)."""
        record = self._key(key)
        if self.ttl_seconds and self.refresh_on_read:
            pipe = self.redis.pipeline(transaction=False)
            pipe.hgetall(record)
            pipe.expire(record, self.ttl_seconds)
            raw, _ = await pipe.execute()
        else:
            raw = await self.redis.hgetall(record)
        if not raw or b"created_at" not in raw and "created_at" not in raw:
            return None
        return SessionInfo.from_hash(key, raw)

    async def get_owned(self, owner: str, thread_id: str) -> SessionInfo | None:
        """``owner``'s thread ``thread_id`` (a client id), or None."""
        info = await self.get(thread_key(owner, thread_id))
        return info if info is not None and info.owner == owner else None

    async def get_many(self, keys: Iterable[str]) -> list[SessionInfo | None]:
        """Records of these keys, in order (None where missing)."""
        ids = list(keys)
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for key in ids:
            pipe.hgetall(self._key(key))
        replies = await pipe.execute()
        return [
            SessionInfo.from_hash(i, raw) if raw else None
            for i, raw in zip(ids, replies, strict=True)
        ]

    async def owned_ids(self, owner: str) -> list[str]:
        """The keys of ``owner``'s threads, oldest first (expired records are pruned on read).

        A bare id (a thread of a version before per-owner keys) is dropped from the index
        here: no request reaches it any more, and it must not count toward the quota."""
        members = [_text(m) for m in await self.redis.zrange(self._index_key(owner), 0, -1)]
        mine = thread_key(owner, "")
        legacy = [m for m in members if not m.startswith(mine)]
        if legacy:
            await self.redis.zrem(self._index_key(owner), *legacy)
        return [m for m in members if m.startswith(mine)]

    async def owned_count(self, owner: str) -> int:
        """How many threads ``owner``'s index holds (expired ones too, until pruned)."""
        return int(await self.redis.zcard(self._index_key(owner)))

    async def forget(self, owner: str, keys: Iterable[str]) -> None:
        """Drop keys from the owner's index (their records expired)."""
        ids = list(keys)
        if ids:
            await self.redis.zrem(self._index_key(owner), *ids)

    async def update(self, info: SessionInfo, **fields: Any) -> None:
        """Set fields of a record (``metadata`` is stored whole: merge before calling)."""
        mapping: dict[Any, Any] = {}
        for name, value in fields.items():
            setattr(info, name, value)
            mapping[name] = json.dumps(value) if name in ("metadata", "agents") else str(value)
        key = self._key(info.key)
        await self.redis.hset(key, mapping=mapping)
        if self.ttl_seconds:
            await self.redis.expire(key, self.ttl_seconds)

    async def set_status(self, key: str, status: str, updated_at: str, error: str = "") -> None:
        """How the thread's last run ended (no-op for a thread without a record)."""
        key = self._key(key)
        if not await self.redis.exists(key):
            return
        await self.redis.hset(
            key, mapping={"status": status, "updated_at": updated_at, "error": error}
        )
        if self.ttl_seconds:  # the run that ended wrote checkpoints: the record lives as long
            await self.redis.expire(key, self.ttl_seconds)

    async def record_agents(self, info: SessionInfo, agents: list[str]) -> None:
        """Remember the agents a turn used (called under the session's lock)."""
        merged = list(dict.fromkeys([*info.agents, *agents]))
        info.agents = merged
        key = self._key(info.key)
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        await self.redis.hset(
            key,
            mapping={
                "agents": json.dumps(merged),
                "updated_at": stamp,
                "status": "idle",
                "error": "",
            },
        )
        if self.ttl_seconds:
            await self.redis.expire(key, self.ttl_seconds)

    async def delete(self, key: str) -> None:
        """Delete the record and the thread's run indexes (same hash slot: one DEL), so an id
        created again later starts with no runs of the deleted thread."""
        raw = await self.redis.hget(self._key(key), "owner")
        await self.redis.delete(
            self._key(key), RunStore.thread_runs_key(key), RunStore.thread_active_key(key)
        )
        if raw is not None:
            await self.redis.zrem(self._index_key(_text(raw)), key)

    # --- locks -----------------------------------------------------------------------------
    async def is_running(self, key: str) -> bool:
        """Whether a turn or a run holds the session's lock right now."""
        return bool(await self.redis.exists(self._lock_key(key)))

    async def running(self, keys: Iterable[str]) -> list[bool]:
        """:meth:`is_running` of many threads in one round trip."""
        ids = list(keys)
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for key in ids:
            pipe.exists(self._lock_key(key))
        return [bool(n) for n in await pipe.execute()]

    def lock(self, key: str) -> Lock:
        """The session's run lock (not yet acquired; acquire without blocking)."""
        return self.redis.lock(self._lock_key(key), timeout=self.lock_seconds, blocking=False)

    async def hold(self, key: str, token: str, ttl_seconds: float) -> bool:
        """Take (or keep, extending it) the thread's lock for ``token`` (a run id)."""
        ttl = max(1, int(ttl_seconds * 1000))
        return bool(
            await self._hold(
                keys=[self._lock_key(key), self._key(key)],
                args=[token, ttl, self._ttl_ms],
            )
        )

    async def holds(self, key: str, token: str) -> bool:
        """Whether ``token`` (a run id) holds the thread's lock right now."""
        held = await self.redis.get(self._lock_key(key))
        return held is not None and _text(held) == token

    async def unhold(self, key: str, token: str) -> None:
        """Release the lock if ``token`` holds it."""
        await self._unhold(keys=[self._lock_key(key)], args=[token])
