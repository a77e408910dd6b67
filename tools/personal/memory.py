"""Long-term facts about a user ("vegetarian", "works 9-5 in Berlin"), shared by every session
of that user and by the three personal agents, in a LangGraph `BaseStore` (in production
`AsyncPostgresStore` from langgraph-checkpoint-postgres), namespaced per user: the user's
namespace ``("personal", "facts")`` under the owner label of :mod:`tools.store_scope`, so the
store API (``/store/items``) shows a user the facts the agents keep about them.

Facts are indexed on their ``fact`` field (when the store has an embedding index), so a
semantic store search finds them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from langgraph.store.base import BaseStore

from tools.store_scope import owned

MAX_FACT_CHARS = 300
MAX_FACTS = 50
_KEYS = uuid.UUID("0b7a3f8e-2c1d-4f5e-9a6b-7c8d9e0f1a2b")


def namespace(user_id: str) -> tuple[str, ...]:
    """The stored namespace of a user's facts (``["personal", "facts"]`` through the API)."""
    return owned(user_id, ("personal", "facts"))


def _normalise(fact: str) -> str:
    return " ".join(fact.strip().split())


async def remember(store: BaseStore, user_id: str, fact: str) -> str:
    """Keep `fact` about the user (the same fact twice is kept once); returns its key."""
    text = _normalise(fact)
    if not text or len(text) > MAX_FACT_CHARS:
        raise ValueError(f"a fact is 1-{MAX_FACT_CHARS} characters")
    key = str(uuid.uuid5(_KEYS, text.lower()))
    await store.aput(
        namespace(user_id), key, {"fact": text, "at": datetime.now(UTC).isoformat()}, index=["fact"]
    )
    return key


async def recall(store: BaseStore, user_id: str, limit: int = MAX_FACTS) -> list[str]:
    """The user's facts, oldest first (at most `limit`)."""
    items = await store.asearch(namespace(user_id), limit=max(1, min(limit, MAX_FACTS)))
    items.sort(key=lambda item: str(item.value.get("at", "")))
    return [str(item.value["fact"]) for item in items]


async def forget(store: BaseStore, user_id: str, fact: str) -> None:
    """Remove a fact (no error when it was not kept)."""
    await store.adelete(namespace(user_id), str(uuid.uuid5(_KEYS, _normalise(fact).lower())))
