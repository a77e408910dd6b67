"""Facts kept before namespaces were owner-first move under their owner at start-up, so an
existing deployment's memory stays visible to the agents and through the store API."""

from __future__ import annotations

import uuid

import psycopg
from langgraph.store.postgres import AsyncPostgresStore

from app.components.personal import MOVE_LEGACY_FACTS
from tools.personal import memory


async def test_legacy_facts_move_under_their_owner_once(postgres_url: str) -> None:
    owner = f"key-{uuid.uuid4().hex[:24]}"
    async with AsyncPostgresStore.from_conn_string(postgres_url) as store:
        await store.setup()
        fact = {"fact": "is vegetarian", "at": "2026-01-01T00:00:00+00:00"}
        await store.aput(("personal", owner, "facts"), "k1", fact, index=False)
        await store.aput(("personal", "other", "notes"), "k2", {"x": 1}, index=False)
        assert await memory.recall(store, owner) == []
        for _ in range(2):  # idempotent: a second start changes nothing
            with psycopg.connect(postgres_url, autocommit=True) as conn:
                conn.execute(MOVE_LEGACY_FACTS)
        assert await memory.recall(store, owner) == ["is vegetarian"]
        assert await store.aget(("personal", owner, "facts"), "k1") is None
        assert await store.aget(("personal", "other", "notes"), "k2") is not None
