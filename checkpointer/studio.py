"""The saver for `langgraph dev` / LangGraph Studio (langgraph-api's custom checkpointer).

`langgraph.json`::

    {"checkpointer": {"path": "./checkpointer/studio.py:make_saver"}}

langgraph-api imports `make_saver`, calls it and enters the async context manager it returns
for the server's lifetime; Studio's runs then persist to Redis like the app's. Settings come
from the environment / `.env` (see `config.py`): REDIS_URL, REDIS_CLUSTER,
CHECKPOINT_TTL_MINUTES, CHECKPOINT_REFRESH_ON_READ. With REDIS_URL unset, Studio uses the same
embedded Redis as the API (under DATA_DIR), attaching to it when the API already runs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from checkpointer.aio import AsyncRedisSaver
from config import load_settings


@asynccontextmanager
async def make_saver() -> AsyncIterator[AsyncRedisSaver]:
    """An `AsyncRedisSaver` on REDIS_URL, with the configured checkpoint TTL."""
    settings = load_settings()
    ttl = None
    if settings.checkpoint_ttl_minutes:
        ttl = {
            "default_ttl": settings.checkpoint_ttl_minutes,
            "refresh_on_read": settings.checkpoint_refresh_on_read,
        }
    embedded = None
    url = settings.redis_url
    if not url:
        from tools.storage import EmbeddedRedis

        embedded = EmbeddedRedis(settings.data_dir)
        url = embedded.url
    try:
        async with AsyncRedisSaver.from_conn_string(
            url, ttl=ttl, cluster=True if settings.redis_cluster else None
        ) as saver:
            yield saver
    finally:
        if embedded is not None:
            embedded.stop()
