"""Each owner's notification stream: a Redis stream per owner (reminders, and any other event a
capability publishes), read as Server-Sent Events by ``GET /notifications/stream``.

- :meth:`Notifications.publish` appends ``(event, data)`` to the owner's stream, trimmed to about
  NOTIFY_MAX_LEN entries (``XADD MAXLEN ~``). With ``once`` (e.g. a scheduler firing id) the
  append and a once-key are one atomic script: the same ``once`` is published at most once
  (within NOTIFY_ONCE_SECONDS), so an at-least-once producer (the scheduler re-delivering a
  firing after a crash) puts one event on the stream.
- :meth:`Notifications.read` reads after an entry id (the SSE ``id:``), so a client that
  reconnects with ``Last-Event-ID`` gets what it missed, as long as it was not trimmed.

Both keys of an owner share a ``{...}`` hash tag: one Redis Cluster slot, one script.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Notification", "Notifications"]

PREFIX = "switchyard:notify"

#: KEYS: stream, once-key ('' = none). ARGV: maxlen, once ttl seconds, event, data.
#: Returns the new entry id, or false when the once-key existed (published before).
PUBLISH = """
if KEYS[2] ~= '' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return false end
end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[3], 'data', ARGV[4])
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Notification:
    """One entry of an owner's stream."""

    id: str
    event: str
    data: dict[str, Any]


@dataclass
class Notifications:
    """Publishing to and reading from owners' notification streams."""

    redis: Any
    """An asyncio Redis (or RedisCluster) client."""
    max_len: int = 1000
    once_seconds: int = 7 * 86_400
    max_data_bytes: int = 65_536
    prefix: str = PREFIX
    _script: Any = field(default=None, repr=False)

    def key(self, owner: str) -> str:
        return f"{self.prefix}:{{{owner}}}:stream"

    def _once_key(self, owner: str, once: str) -> str:
        return f"{self.prefix}:{{{owner}}}:once:{once}"

    async def publish(
        self, owner: str, event: str, data: dict[str, Any], *, once: str | None = None
    ) -> str | None:
        """Append the event; its entry id, or None when ``once`` was published already."""
        if not event or len(event) > 64:
            raise ValueError("an event name is 1-64 characters")
        body = json.dumps(data, separators=(",", ":"), default=str)
        if len(body.encode()) > self.max_data_bytes:
            raise ValueError(
                f"notification data is {len(body.encode())} bytes; at most "
                f"{self.max_data_bytes} (NOTIFY_MAX_DATA_BYTES)"
            )
        if self._script is None:
            self._script = self.redis.register_script(PUBLISH)
        keys = [self.key(owner), self._once_key(owner, once) if once else ""]
        found = await self._script(keys=keys, args=[self.max_len, self.once_seconds, event, body])
        return _text(found) if found else None

    async def mark(self, owner: str, name: str) -> None:
        """Remember ``name`` for NOTIFY_ONCE_SECONDS (e.g. a webhook sent for a firing)."""
        await self.redis.set(self._once_key(owner, name), "1", ex=self.once_seconds)

    async def marked(self, owner: str, name: str) -> bool:
        return bool(await self.redis.exists(self._once_key(owner, name)))

    async def last_id(self, owner: str) -> str:
        """The newest entry id (``0-0`` when the stream is empty): reading after it gets new
        events only."""
        newest = await self.redis.xrevrange(self.key(owner), count=1)
        return _text(newest[0][0]) if newest else "0-0"

    async def read(
        self, owner: str, after: str, *, block_ms: int | None = None, count: int = 100
    ) -> list[Notification]:
        """The events after entry ``after`` (waiting up to ``block_ms`` for one when none)."""
        found = await self.redis.xread({self.key(owner): after}, count=count, block=block_ms)
        out: list[Notification] = []
        pairs = list(found.items()) if isinstance(found, dict) else found or []  # RESP3 | RESP2
        for _stream, entries in pairs:
            for entry_id, fields in entries:
                raw = {_text(k): _text(v) for k, v in fields.items()}
                out.append(
                    Notification(_text(entry_id), raw["event"], json.loads(raw["data"] or "{}"))
                )
        return out
