"""Quotas per owner: one API key cannot fill the shared stores or queues for everyone else.

Counts are per owner (the caller's key; one anonymous owner without API_KEYS) and checked
before anything is stored:

- threads (``/chat`` sessions, ``POST /threads``, thread copies, stateless runs' temporary
  threads, background analyses): MAX_THREADS_PER_OWNER, from the owner's thread index (ids
  whose record expired are pruned when the count reaches the quota);
- queued + running background runs (Agent Server runs, ``/analyses``): MAX_ACTIVE_RUNS_PER_OWNER,
  from the owner's run index (finished runs are pruned as they are counted);
- the JSON size of a request's metadata, run input / command / state values, config and
  context: MAX_METADATA_BYTES, MAX_RUN_INPUT_BYTES, MAX_RUN_CONFIG_BYTES.

A quota refusal is 429 naming the setting (waiting, or deleting, frees room); a size refusal is
413 naming the setting. The counts are read, then the thing is created: concurrent requests of
one owner can pass a quota by at most their number, never without bound.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException, status

from app.services import Services
from config import Settings

__all__ = [
    "check_json_size",
    "check_run_quota",
    "check_thread_quota",
    "json_size",
    "quota_exceeded",
]


def quota_exceeded(message: str) -> HTTPException:
    """429 for a per-owner quota (``message`` names the setting and how to free room)."""
    return HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, message)


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (what Redis would store)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return len(text.encode())


def check_json_size(value: Any, *, what: str, limit: int, setting: str) -> None:
    """413 when ``value`` (None passes) is larger than ``limit`` bytes as JSON."""
    if value is None:
        return
    size = json_size(value)
    if size > limit:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"{what} is {size:,} bytes as JSON; the limit is {limit:,} ({setting}). Send less, "
            f"or raise {setting}.",
        )


def check_metadata(settings: Settings, value: Any, what: str = "metadata") -> None:
    """413 when metadata is above MAX_METADATA_BYTES."""
    check_json_size(
        value, what=what, limit=settings.quotas.max_metadata_bytes, setting="MAX_METADATA_BYTES"
    )


def check_run_input(settings: Settings, value: Any, what: str = "input") -> None:
    """413 when a run's input (or command, or state values) is above MAX_RUN_INPUT_BYTES."""
    check_json_size(
        value, what=what, limit=settings.quotas.max_run_input_bytes, setting="MAX_RUN_INPUT_BYTES"
    )


def check_run_config(settings: Settings, value: Any, what: str) -> None:
    """413 when a run's config or context is above MAX_RUN_CONFIG_BYTES."""
    check_json_size(
        value, what=what, limit=settings.quotas.max_run_config_bytes, setting="MAX_RUN_CONFIG_BYTES"
    )


async def check_thread_quota(services: Services, owner: str, adding: int = 1) -> None:
    """429 when ``owner`` cannot create ``adding`` more threads (MAX_THREADS_PER_OWNER)."""
    limit = services.settings.quotas.max_threads_per_owner
    sessions = services.sessions
    held = await sessions.owned_count(owner)
    if held + adding <= limit:
        return
    # The index keeps ids whose record expired until a read prunes them: prune, then recount.
    ids = await sessions.owned_ids(owner)
    records = await sessions.get_many(ids)
    gone = [i for i, record in zip(ids, records, strict=True) if record is None]
    await sessions.forget(owner, gone)
    held = len(ids) - len(gone)
    if held + adding > limit:
        raise quota_exceeded(
            f"This API key holds {held:,} threads; the quota is {limit:,} per key "
            "(MAX_THREADS_PER_OWNER). Delete threads you no longer need (DELETE /threads/{id}, "
            "POST /threads/prune) or let them expire."
        )


async def check_run_quota(services: Services, owner: str, adding: int = 1) -> None:
    """429 when ``owner`` cannot queue ``adding`` more runs (MAX_ACTIVE_RUNS_PER_OWNER)."""
    limit = services.settings.quotas.max_active_runs_per_owner
    active = await services.runs.active_of_owner(owner)
    if active + adding > limit:
        raise quota_exceeded(
            f"This API key has {active:,} queued or running background runs; the quota is "
            f"{limit:,} per key (MAX_ACTIVE_RUNS_PER_OWNER). Retry when some have finished, "
            "or cancel some."
        )
