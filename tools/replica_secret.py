"""One random secret that every replica on a Redis agrees on, kept on disk as well.

Used where a server-side HMAC key may be left unset (owner ids, chart links): the first process
stores a random secret with SET NX and every other one reads it; it is also written (0600) to a
file under DATA_DIR, so the secret outlives an emptied Redis.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from pathlib import Path

import redis.asyncio as aredis

log = logging.getLogger(__name__)


async def replica_secret(
    redis: aredis.Redis | aredis.RedisCluster, key: str, path: Path, *, what: str, setting: str
) -> bytes:
    """The secret under Redis ``key`` (created from the file at ``path``, else at random), also
    kept at ``path``; a file that disagrees with Redis is overwritten with a warning naming
    ``setting`` (``what`` says whose secret it is in that warning)."""
    kept = await asyncio.to_thread(_read, path)  # file I/O off the event loop
    await redis.set(key, kept or secrets.token_hex(32), nx=True)
    stored = await redis.get(key)
    shared = stored.decode() if isinstance(stored, bytes) else str(stored)
    if shared != kept:
        await asyncio.to_thread(_write, path, shared)
        if kept is not None:
            log.warning(
                "%s: the secret in Redis differs from %s; using Redis's (set %s to keep it "
                "stable whatever happens to Redis)",
                what, path, setting,
            )  # fmt: skip
    return shared.encode()


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def _write(path: Path, secret: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # 0600 from the start: the secret is never readable by other users, even briefly
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secret + "\n")
