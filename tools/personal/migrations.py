"""Versioned, idempotent migrations of the `personal` schema (tasks, meals, events).

`await migrate(pool)` applies every migration newer than the version recorded in
`personal.schema_migrations`, in one transaction that first takes a transaction-scoped advisory
lock: two processes starting at once (API replicas, the CLI, Studio on one DATA_DIR) queue on the
lock, and the second finds the work done. Even `CREATE SCHEMA IF NOT EXISTS` needs the lock:
run concurrently it can fail with a unique violation on `pg_namespace`.

A migration is never edited once released; a change is a new entry at the end of `MIGRATIONS`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

log = logging.getLogger(__name__)

SCHEMA = "personal"
#: Key of the advisory lock that serialises migrations (any fixed 64-bit number, unique to us).
MIGRATION_LOCK = 0x5357_5950_4552_0001


@dataclass(frozen=True, slots=True)
class Migration:
    """One step: its version (1, 2, ...), a description and the SQL it runs."""

    version: int
    description: str
    sql: str


_PRIORITIES = "'low', 'normal', 'high', 'urgent'"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "tasks, meals and events",
        f"""
        CREATE TABLE personal.tasks (
            id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id      text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
            title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            notes        text NOT NULL DEFAULT '',
            due_at       timestamptz,
            priority     text NOT NULL DEFAULT 'normal' CHECK (priority IN ({_PRIORITIES})),
            status       text NOT NULL DEFAULT 'open'
                         CHECK (status IN ('open', 'done', 'cancelled')),
            tags         text[] NOT NULL DEFAULT '{{}}',
            created_at   timestamptz NOT NULL DEFAULT now(),
            updated_at   timestamptz NOT NULL DEFAULT now(),
            completed_at timestamptz,
            tz           text NOT NULL DEFAULT 'UTC'
        );
        CREATE INDEX tasks_user_due ON personal.tasks (user_id, due_at);
        CREATE INDEX tasks_user_status ON personal.tasks (user_id, status);
        CREATE INDEX tasks_tags ON personal.tasks USING gin (tags);

        CREATE TABLE personal.meals (
            id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id     text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
            eaten_at    timestamptz NOT NULL,
            meal_type   text NOT NULL
                        CHECK (meal_type IN ('breakfast', 'lunch', 'dinner', 'snack')),
            description text NOT NULL CHECK (length(description) BETWEEN 1 AND 200),
            items       text[] NOT NULL DEFAULT '{{}}',
            calories    integer CHECK (calories >= 0),
            protein_g   real CHECK (protein_g >= 0),
            carbs_g     real CHECK (carbs_g >= 0),
            fat_g       real CHECK (fat_g >= 0),
            created_at  timestamptz NOT NULL DEFAULT now(),
            updated_at  timestamptz NOT NULL DEFAULT now(),
            tz          text NOT NULL DEFAULT 'UTC'
        );
        CREATE INDEX meals_user_eaten ON personal.meals (user_id, eaten_at);

        CREATE TABLE personal.events (
            id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id     text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
            title       text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            starts_at   timestamptz NOT NULL,
            ends_at     timestamptz CHECK (ends_at IS NULL OR ends_at > starts_at),
            location    text NOT NULL DEFAULT '',
            attendees   text[] NOT NULL DEFAULT '{{}}',
            notes       text NOT NULL DEFAULT '',
            created_at  timestamptz NOT NULL DEFAULT now(),
            updated_at  timestamptz NOT NULL DEFAULT now(),
            tz          text NOT NULL DEFAULT 'UTC'
        );
        CREATE INDEX events_user_starts ON personal.events (user_id, starts_at);
        """,
    ),
    Migration(
        2,
        "reminders (remind_at) and recurring events (rrule)",
        """
        ALTER TABLE personal.tasks ADD COLUMN remind_at timestamptz;
        ALTER TABLE personal.events ADD COLUMN remind_at timestamptz;
        ALTER TABLE personal.events ADD COLUMN rrule text
            CHECK (rrule IS NULL OR length(rrule) BETWEEN 1 AND 500);
        """,
    ),
)


async def _applied(conn: AsyncConnection) -> int:
    cur = await conn.execute(
        "SELECT coalesce(max(version), 0) FROM personal.schema_migrations"  # noqa: S608
    )
    row = await cur.fetchone()
    if row is None:
        return 0
    value = row["coalesce"] if isinstance(row, dict) else row[0]
    return int(value)


async def migrate_connection(conn: AsyncConnection) -> list[int]:
    """Apply pending migrations on `conn`; returns the versions applied (empty when current)."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS personal.schema_migrations ("
            " version integer PRIMARY KEY, description text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = await _applied(conn)
        newest = MIGRATIONS[-1].version
        if current > newest:
            raise RuntimeError(
                f"The personal schema is at version {current}, newer than this build knows "
                f"({newest}): run a newer Switchyard against this database, or restore a backup"
            )
        done: list[int] = []
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO personal.schema_migrations (version, description) VALUES (%s, %s)",
                (migration.version, migration.description),
            )
            done.append(migration.version)
    if done:
        log.info("personal schema migrated to version %d", done[-1])
    return done


async def migrate(target: AsyncConnectionPool | str) -> list[int]:
    """Bring the `personal` schema up to date on a pool or a connection URL (idempotent)."""
    if isinstance(target, str):
        conn = await AsyncConnection.connect(target, autocommit=True)
        try:
            return await migrate_connection(conn)
        finally:
            await conn.close()
    async with target.connection() as conn:
        return await migrate_connection(conn)
