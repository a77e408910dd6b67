"""Personal items' vectors in Postgres with pgvector: `personal.item_vectors`, owner-scoped SQL.

pgvector is the one vector store of personal items, as it is the knowledge base's: the rows and
their vectors live in one database (a row and its vector commit or roll back together), every
Switchyard process on one DATA_DIR shares them (the embedded Postgres 16 ships pgvector), and
no second server is needed. Every statement names the owner: an item id of another user is never
returned and never removed.

Searches are exact (a sequential scan of one user's rows through the `(user_id, kind)` index):
an approximate HNSW/IVFFlat index would filter *after* its candidate list on pgvector < 0.8,
silently losing a user's items when other users own most vectors, and a user's own items are
few enough to scan.

A Postgres without the extension does not stop the personal engine (the knowledge store's rule):
`ensure` records why in `missing`, writes keep no vectors, and the engine's searches refuse with
that reason (`tools.personal.service.SemanticSearchOff`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from tools.personal.models import Kind

#: Advisory lock serialising the creation of the extension and the table across processes.
PGVECTOR_LOCK = 0x5357_5950_4552_0002

#: Why semantic search is off on a Postgres without pgvector, and the fix.
NO_PGVECTOR = (
    "Semantic search of tasks, meals and events is off: this Postgres has no pgvector "
    "extension. Use a Postgres with pgvector (leave DATABASE_URL unset for the embedded one, "
    "which ships it) or install it on the server (Debian/Ubuntu: postgresql-<version>-pgvector; "
    "Docker: the pgvector/pgvector:pg16 image), then restart"
)


class VectorIndexError(RuntimeError):
    """The vector table cannot be used as configured; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """One item's vector and who owns it."""

    kind: Kind
    item_id: int
    user_id: str
    vector: list[float]


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, e.g. `[0.1,0.2]`."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


class PgVectorItemIndex:
    """Personal items' vectors in a pgvector table of the given pool's database."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self._ready: int | None = None
        #: Why there are no vectors (no pgvector in this Postgres), or None when there are.
        self.missing: str | None = None

    async def ensure(self, dimension: int) -> None:
        """Create the extension and the table for vectors of `dimension` (idempotent). Without
        pgvector, record the reason in `missing` instead; a table of another size raises
        `VectorIndexError`."""
        if self._ready == dimension:
            return
        if not 1 <= dimension <= 16_000:
            raise VectorIndexError(f"embedding dimension {dimension} is out of range 1..16000")
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (PGVECTOR_LOCK,))
            cur = await conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if await cur.fetchone() is None:
                self.missing = NO_PGVECTOR
                return
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            await conn.execute("CREATE SCHEMA IF NOT EXISTS personal")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS personal.item_vectors ("
                f" kind text NOT NULL, item_id bigint NOT NULL, user_id text NOT NULL,"
                f" embedding vector({int(dimension)}) NOT NULL,"
                f" PRIMARY KEY (kind, item_id))"
            )
            await conn.execute(
                "CREATE INDEX IF NOT EXISTS item_vectors_user ON personal.item_vectors "
                "(user_id, kind)"
            )
            cur = await conn.execute(
                "SELECT atttypmod FROM pg_attribute WHERE attrelid = "
                "'personal.item_vectors'::regclass AND attname = 'embedding'"
            )
            row = await cur.fetchone()
            found = int(row[0] if not isinstance(row, dict) else row["atttypmod"]) if row else -1
        if found != dimension:
            raise VectorIndexError(
                f"personal.item_vectors holds vectors of size {found}, the embedding model "
                f"makes {dimension}: drop that table (DROP TABLE personal.item_vectors) and "
                "reindex, or go back to the previous EMBEDDING_MODEL"
            )
        self.missing = None
        self._ready = dimension

    async def upsert(
        self, points: Sequence[VectorPoint], conn: AsyncConnection | None = None
    ) -> None:
        """Insert or replace the vectors of these items (nothing without pgvector). `conn`: a
        connection of this pool in a transaction the write joins."""
        if not points or self.missing:
            return
        async with self._connection(conn) as active, active.cursor() as cur:
            await cur.executemany(
                "INSERT INTO personal.item_vectors (kind, item_id, user_id, embedding)"
                " VALUES (%s, %s, %s, %s::vector)"
                " ON CONFLICT (kind, item_id) DO UPDATE"
                " SET embedding = EXCLUDED.embedding, user_id = EXCLUDED.user_id",
                [(p.kind, p.item_id, p.user_id, vector_literal(p.vector)) for p in points],
            )

    async def delete(
        self,
        user_id: str,
        kind: Kind,
        item_ids: Sequence[int],
        conn: AsyncConnection | None = None,
    ) -> None:
        """Remove these items' vectors (only the user's own); `conn` as for `upsert`."""
        if not item_ids or self.missing:
            return
        async with self._connection(conn) as active:
            await active.execute(
                "DELETE FROM personal.item_vectors"
                " WHERE user_id = %s AND kind = %s AND item_id = ANY(%s)",
                (user_id, kind, [int(i) for i in item_ids]),
            )

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
        if self.missing:
            raise VectorIndexError(self.missing)
        if limit <= 0 or (ids is not None and not ids):
            return []
        scope = " AND item_id = ANY(%s)" if ids is not None else ""
        params: list[object] = [vector_literal(vector), user_id, kind]
        if ids is not None:
            params.append([int(i) for i in ids])
        params.append(limit)
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT item_id, 1 - (embedding <=> q) AS score"
                " FROM personal.item_vectors, (SELECT %s::vector AS q) query"
                f" WHERE user_id = %s AND kind = %s{scope}"
                " ORDER BY embedding <=> q, item_id LIMIT %s",
                params,
            )
            return [(int(r["item_id"]), float(r["score"])) for r in await cur.fetchall()]

    async def item_ids(self, user_id: str, kind: Kind) -> set[int]:
        """Every item id of the user's kind that has a vector (for checks and resync)."""
        if self.missing:
            return set()
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT item_id FROM personal.item_vectors WHERE user_id = %s AND kind = %s",
                (user_id, kind),
            )
            return {int(r["item_id"]) for r in await cur.fetchall()}

    @asynccontextmanager
    async def _connection(self, conn: AsyncConnection | None) -> AsyncIterator[AsyncConnection]:
        # Joining the caller's transaction makes a row and its vector commit (or roll back)
        # together.
        if conn is not None:
            yield conn
            return
        async with self.pool.connection() as own:
            yield own
