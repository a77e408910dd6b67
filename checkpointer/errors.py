"""Errors the saver raises, with messages that name the server and the fix."""

from __future__ import annotations

from typing import Any

import redis.exceptions

#: Exceptions meaning "the server could not be reached", wrapped into `RedisUnavailableError`.
UNREACHABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
)


class RedisUnavailableError(redis.exceptions.ConnectionError):
    """Redis could not be reached; no checkpoint saved before this error is lost."""


def describe_client(client: Any) -> str:
    """Where `client` points, for error messages (never includes a password)."""
    get_nodes = getattr(client, "get_nodes", None)
    if callable(get_nodes):
        try:
            nodes = [f"{n.host}:{n.port}" for n in get_nodes()]
        except Exception:  # only words an error message: never fail here
            nodes = []
        return "Redis Cluster (" + ", ".join(sorted(nodes)[:3] or ["?"]) + ")"
    pool = getattr(client, "connection_pool", None)
    kwargs: dict[str, Any] = getattr(pool, "connection_kwargs", {}) or {}
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}?db={kwargs.get('db', 0)}"
    host, port = kwargs.get("host", "localhost"), kwargs.get("port", 6379)
    return f"redis://{host}:{port}/{kwargs.get('db', 0)}"


def unavailable(exc: BaseException, where: str) -> RedisUnavailableError:
    return RedisUnavailableError(
        f"Redis checkpoint store at {where} is unavailable ({type(exc).__name__}: {exc}). "
        "Checkpoints saved before this error are intact. Fix: start Redis at that address, or "
        "set REDIS_URL to a reachable server; then resume the thread by invoking the graph "
        "again with the same thread_id and input None: it continues from its last checkpoint."
    )


def check_client(client: Any) -> None:
    """Refuse clients that decode replies: the saver stores and reads binary data."""
    get_encoder = getattr(client, "get_encoder", None)
    encoder = get_encoder() if callable(get_encoder) else None
    if encoder is not None and getattr(encoder, "decode_responses", False):
        raise ValueError(
            "the Redis client decodes responses (decode_responses=True), but checkpoints are "
            "binary; create the client with decode_responses=False (the default)"
        )


def check_version(info: Any) -> None:
    """Raise if an `INFO server` reply (or a cluster's per-node replies) shows Redis < 6.2."""
    replies = [info] if isinstance(info, dict) and "redis_version" in info else []
    if not replies and isinstance(info, dict):
        replies = [v for v in info.values() if isinstance(v, dict)]
    for reply in replies:
        version = str(reply.get("redis_version", "0"))
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts < (6, 2):
            raise RuntimeError(
                f"Redis {version} is too old for the checkpoint saver (it needs ZRANGE BYLEX REV "
                "from Redis 6.2); upgrade the server to Redis >= 6.2 or Valkey"
            )
