"""The vector index of personal items, behind one small interface with two backends.

- `QdrantItemIndex`: a Qdrant collection (a server when QDRANT_URL is set; local mode in tests).
- `PgVectorItemIndex` (tools/personal/pgvector.py): a table in the same Postgres, the embedded
  default, because Qdrant local mode lets only one process open its folder while several
  Switchyard processes (API replicas, CLI, Studio) share one DATA_DIR.

Every call names the user, and every read and delete is filtered by it: an item id of another
user is never returned and never removed.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from psycopg import AsyncConnection
from qdrant_client import QdrantClient, models

from tools.personal.models import Kind

#: Namespace of the Qdrant point ids (uuid5 of "kind:item_id"); never change it.
POINT_NAMESPACE = uuid.UUID("6f1c0b5e-3f7e-4b53-9a43-5e1a1c2f0a11")


class VectorIndexError(RuntimeError):
    """The vector index cannot be used as configured; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """One item's vector and who owns it."""

    kind: Kind
    item_id: int
    user_id: str
    vector: list[float]


class ItemVectorIndex(Protocol):
    """What the personal engine needs from a vector index."""

    backend: str

    async def ensure(self, dimension: int) -> None:
        """Create the collection / table for vectors of `dimension` (idempotent)."""

    async def upsert(
        self, points: Sequence[VectorPoint], conn: AsyncConnection | None = None
    ) -> None:
        """Insert or replace the vectors of these items. `conn`: a Postgres connection in a
        transaction the write joins when the index lives in that database (pgvector)."""

    async def delete(
        self,
        user_id: str,
        kind: Kind,
        item_ids: Sequence[int],
        conn: AsyncConnection | None = None,
    ) -> None:
        """Remove these items' vectors (only the user's own); `conn` as for `upsert`."""

    async def search(
        self,
        user_id: str,
        kind: Kind,
        vector: Sequence[float],
        limit: int,
        ids: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """`(item_id, cosine similarity)` of the user's nearest items, best first; `ids`
        restricts the search to those items (the hybrid path's candidates)."""

    async def item_ids(self, user_id: str, kind: Kind) -> set[int]:
        """Every item id of the user's kind that has a vector (for checks and resync)."""

    async def close(self) -> None:
        """Release what the index holds."""


def point_id(kind: Kind, item_id: int) -> str:
    """The Qdrant point id of an item (stable, unique across kinds)."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{kind}:{item_id}"))


class QdrantItemIndex:
    """Personal items' vectors in one Qdrant collection, payload `{user_id, kind, item_id}`.

    The client is synchronous (as elsewhere in Switchyard); calls run in worker threads.
    """

    backend = "qdrant"

    def __init__(self, client: QdrantClient, collection: str = "personal_items") -> None:
        self.client = client
        self.collection = collection
        self._ready: int | None = None
        self._lock = asyncio.Lock()

    async def ensure(self, dimension: int) -> None:
        async with self._lock:
            if self._ready == dimension:
                return
            await asyncio.to_thread(self._ensure, dimension)
            self._ready = dimension

    def _ensure(self, dimension: int) -> None:
        if not self.client.collection_exists(self.collection):
            try:
                self.client.create_collection(
                    self.collection,
                    vectors_config=models.VectorParams(
                        size=dimension, distance=models.Distance.COSINE
                    ),
                )
            except Exception:
                # Another process created it between our check and our create.
                if not self.client.collection_exists(self.collection):
                    raise
            if not _is_local(self.client):
                for field in ("user_id", "kind"):
                    self.client.create_payload_index(
                        self.collection, field, models.PayloadSchemaType.KEYWORD
                    )
                self.client.create_payload_index(
                    self.collection, "item_id", models.PayloadSchemaType.INTEGER
                )
        params = self.client.get_collection(self.collection).config.params.vectors
        size = params.size if isinstance(params, models.VectorParams) else None
        if size != dimension:
            raise VectorIndexError(
                f"Qdrant collection {self.collection!r} holds vectors of size {size}, the "
                f"embedding model makes {dimension}: set PERSONAL_QDRANT_COLLECTION to a new "
                "name (then reindex), or delete the collection"
            )

    async def upsert(
        self, points: Sequence[VectorPoint], conn: AsyncConnection | None = None
    ) -> None:
        if not points:
            return
        structs = [
            models.PointStruct(
                id=point_id(p.kind, p.item_id),
                vector=list(p.vector),
                payload={"user_id": p.user_id, "kind": p.kind, "item_id": p.item_id},
            )
            for p in points
        ]
        await asyncio.to_thread(self.client.upsert, self.collection, structs, wait=True)

    async def delete(
        self,
        user_id: str,
        kind: Kind,
        item_ids: Sequence[int],
        conn: AsyncConnection | None = None,
    ) -> None:
        if not item_ids:
            return
        selector = models.FilterSelector(filter=_filter(user_id, kind, item_ids))
        await asyncio.to_thread(self.client.delete, self.collection, selector, wait=True)

    async def search(
        self,
        user_id: str,
        kind: Kind,
        vector: Sequence[float],
        limit: int,
        ids: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        if limit <= 0 or (ids is not None and not ids):
            return []
        response = await asyncio.to_thread(
            self.client.query_points,
            self.collection,
            query=list(vector),
            query_filter=_filter(user_id, kind, ids),
            limit=limit,
            with_payload=["item_id", "user_id"],
        )
        out: list[tuple[int, float]] = []
        for point in response.points:
            payload = point.payload or {}
            if payload.get("user_id") == user_id:  # the filter did this; belt and braces
                out.append((int(payload["item_id"]), float(point.score)))
        return out

    async def item_ids(self, user_id: str, kind: Kind) -> set[int]:
        found: set[int] = set()
        offset = None
        while True:
            points, offset = await asyncio.to_thread(
                self.client.scroll,
                self.collection,
                scroll_filter=_filter(user_id, kind, None),
                limit=512,
                offset=offset,
                with_payload=["item_id"],
            )
            found.update(int((p.payload or {})["item_id"]) for p in points)
            if offset is None:
                return found

    async def close(self) -> None:
        """The client belongs to the caller (it may be shared); nothing to release here."""


def _filter(user_id: str, kind: Kind, ids: Sequence[int] | None) -> models.Filter:
    must: list[models.Condition] = [
        models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id)),
        models.FieldCondition(key="kind", match=models.MatchValue(value=kind)),
    ]
    if ids is not None:
        must.append(
            models.FieldCondition(key="item_id", match=models.MatchAny(any=[int(i) for i in ids]))
        )
    return models.Filter(must=must)


def _is_local(client: QdrantClient) -> bool:
    return type(getattr(client, "_client", None)).__name__.startswith("QdrantLocal")
