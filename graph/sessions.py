"""Chat sessions: a registry record per thread (owner, times, agents used) and a run lock.

The conversation itself is the thread's checkpoints; this record says who owns the thread and
lets the API answer "which agents has this session used" without reading history. The lock
makes a session single-writer: a second message while a turn runs gets 409, never interleaved
state. It is redis-py's `Lock` (a token in a key with a timeout), so it holds across replicas.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aredis
from redis.asyncio.lock import Lock

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{7,63}$"
_SESSION_ID = re.compile(SESSION_ID_PATTERN)


def valid_session_id(value: str) -> bool:
    """Session ids are 8-64 characters of letters, digits, `_` and `-` (UUIDs fit)."""
    return bool(_SESSION_ID.match(value))


@dataclass
class SessionInfo:
    """The registry record of one session."""

    session_id: str
    owner: str
    user_id: str
    created_at: str
    agents: list[str] = field(default_factory=list)

    def as_hash(self) -> dict[Any, Any]:
        return {
            "owner": self.owner,
            "user_id": self.user_id,
            "created_at": self.created_at,
            "agents": json.dumps(self.agents),
        }

    @classmethod
    def from_hash(cls, session_id: str, raw: dict[Any, Any]) -> SessionInfo:
        data = {_text(k): _text(v) for k, v in raw.items()}
        return cls(
            session_id=session_id,
            owner=data.get("owner", ""),
            user_id=data.get("user_id", ""),
            created_at=data.get("created_at", ""),
            agents=json.loads(data.get("agents") or "[]"),
        )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SessionStore:
    """Session records and run locks in Redis."""

    def __init__(
        self,
        redis: aredis.Redis | aredis.RedisCluster,
        *,
        ttl_seconds: int | None = None,
        lock_seconds: float = 600.0,
        prefix: str = "sy:session:",
    ) -> None:
        self.redis = redis
        self.ttl_seconds = ttl_seconds
        self.lock_seconds = lock_seconds
        self.prefix = prefix

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}{{{session_id}}}"

    def _lock_key(self, session_id: str) -> str:
        return f"{self.prefix}{{{session_id}}}:lock"

    async def create(self, owner: str, user_id: str, created_at: str) -> SessionInfo:
        info = SessionInfo(uuid.uuid4().hex, owner, user_id, created_at)
        key = self._key(info.session_id)
        await self.redis.hset(key, mapping=info.as_hash())
        if self.ttl_seconds:
            await self.redis.expire(key, self.ttl_seconds)
        return info

    async def get(self, session_id: str) -> SessionInfo | None:
        raw = await self.redis.hgetall(self._key(session_id))
        return SessionInfo.from_hash(session_id, raw) if raw else None

    async def record_agents(self, info: SessionInfo, agents: list[str]) -> None:
        """Remember the agents a turn used (called under the session's lock)."""
        merged = list(dict.fromkeys([*info.agents, *agents]))
        info.agents = merged
        key = self._key(info.session_id)
        await self.redis.hset(key, "agents", json.dumps(merged))
        if self.ttl_seconds:
            await self.redis.expire(key, self.ttl_seconds)

    async def delete(self, session_id: str) -> None:
        await self.redis.delete(self._key(session_id))

    async def is_running(self, session_id: str) -> bool:
        """Whether a turn holds the session's lock right now."""
        return bool(await self.redis.exists(self._lock_key(session_id)))

    def lock(self, session_id: str) -> Lock:
        """The session's run lock (not yet acquired; acquire without blocking)."""
        return self.redis.lock(
            self._lock_key(session_id), timeout=self.lock_seconds, blocking=False
        )
