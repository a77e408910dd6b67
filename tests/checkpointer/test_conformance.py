"""LangGraph's own conformance suite (langgraph-checkpoint-conformance) against the shared Redis:
every base and extended capability is detected and passes, so the level is FULL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
import redis.asyncio as aredis
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.report import CapabilityReport

from checkpointer import AsyncRedisSaver, RedisSaver

VARIANTS = {
    "default": {},
    "ttl": {"ttl": {"default_ttl": 60, "refresh_on_read": True}},
}


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def assert_full(report: CapabilityReport) -> None:
    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert not failures, failures
    assert report.passed_all_base()
    for capability in ALL_CAPABILITIES:
        result = report.results[capability.value]
        assert result.detected, f"{capability.value} not implemented"
        assert result.passed is True, f"{capability.value}: {result.failures}"
    assert report.conformance_level() == "FULL"


@pytest.mark.parametrize("options", list(VARIANTS.values()), ids=list(VARIANTS))
async def test_async_saver_is_fully_conformant(
    shared_url: str, key_prefix: str, options: dict[str, Any]
) -> None:
    @checkpointer_test(name="AsyncRedisSaver")
    async def factory() -> AsyncIterator[AsyncRedisSaver]:
        # A fresh, empty saver per capability suite: a prefix of its own.
        client = aredis.Redis.from_url(shared_url)
        try:
            yield AsyncRedisSaver(client, **{"key_prefix": fresh(key_prefix), **options})
        finally:
            await client.aclose()

    assert_full(await validate(factory))


@pytest.mark.parametrize("options", list(VARIANTS.values()), ids=list(VARIANTS))
async def test_sync_saver_is_fully_conformant(
    shared_url: str, key_prefix: str, options: dict[str, Any]
) -> None:
    # The suite drives the async API; RedisSaver's runs its sync methods in a worker thread.
    @checkpointer_test(name="RedisSaver")
    async def factory() -> AsyncIterator[RedisSaver]:
        client = redis.Redis.from_url(shared_url)
        try:
            yield RedisSaver(client, **{"key_prefix": fresh(key_prefix), **options})
        finally:
            client.close()

    assert_full(await validate(factory))
