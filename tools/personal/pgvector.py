"""Personal items' vectors in Postgres with pgvector: `personal.item_vectors`.

The embedded default (DATABASE_URL unset runs pgserver's Postgres 16, which ships pgvector), so
every Switchyard process on one DATA_DIR shares one index. Searches are exact (a sequential scan
of one user's rows through the `(user_id, kind)` index): an approximate HNSW/IVFFlat index would
filter *after* its candidate list on pgvector < 0.8, silently losing a user's items when other
users own most vectors, and a user's own items are few enough to scan.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from tools.personal.models import Kind
from tools.personal.vectors import VectorIndexError, VectorPoint

#: Advisory lock serialising the creation of the extension and the table across processes.
PGVECTOR_LOCK = 0x5357_5950_4552_0002


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, e.g. `[0.1,0.2]`."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


class PgVectorItemIndex:
    """`ItemVectorIndex` on a pgvector table in the given pool's database."""

    backend = "pgvector"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self._ready: int | None = None

    async def ensure(self, dimension: int) -> None:
        if self._ready == dimension:
            return
        if not 1 <= dimension <= 16_000:
            raise VectorIndexError(f"embedding dimension {dimension} is out of range 1..16000")
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (PGVECTOR_LOCK,))
            cur = await conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if await cur.fetchone() is None:
                raise VectorIndexError(
                    "This Postgres has no pgvector extension: install it (Debian: "
                    "postgresql-<version>-pgvector), unset DATABASE_URL to use the embedded "
                    "Postgres (which has it), or set QDRANT_URL to keep vectors in Qdrant"
                )
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
        self._ready = dimension

    async def upsert(
        self, points: Sequence[VectorPoint], conn: AsyncConnection | None = None
    ) -> None:
        if not points:
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
        if not item_ids:
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
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                "SELECT item_id FROM personal.item_vectors WHERE user_id = %s AND kind = %s",
                (user_id, kind),
            )
            return {int(r["item_id"]) for r in await cur.fetchall()}

    @asynccontextmanager
    async def _connection(self, conn: AsyncConnection | None) -> AsyncIterator[AsyncConnection]:
        # Joining the caller's transaction makes a row and its vector commit (or roll back)
        # together; the caller passes `conn` only when it comes from this index's own pool.
        if conn is not None:
            yield conn
            return
        async with self.pool.connection() as own:
            yield own

    async def close(self) -> None:
        """The pool belongs to the caller; nothing to release here."""
