"""Create and seed the `analytics` schema, and the read-only role that queries it.

`ensure_seeded` is synchronous (psycopg sync connection, CPU-bound generation); from async code
call it with `asyncio.to_thread`. It is

- idempotent: `analytics.dataset_info` records the seeded DATASET_VERSION; when it matches, the
  call only checks the reader role and returns (`seeded=False`). Another version (or a schema
  left half-made by hand) is dropped and seeded again.
- safe when processes start at once: seeding holds an advisory lock and runs in one
  transaction; the second process waits, then finds the marker and does nothing. A crash
  mid-seed rolls back the whole schema (and closing the connection frees the lock).
- fast: rows go in with COPY into bare tables; keys, checks and indexes follow.

The reader role (ANALYTICS_READER_USER) is a separate LOGIN role: NOSUPERUSER, NOINHERIT, no
CREATE rights, SELECT on schema `analytics` only, and role defaults of read-only transactions and
a statement timeout. The app runs generated SQL on its own connections as that role (see
`tools.analytics.executor`), so no SQL text can raise its privileges back: `SET ROLE` /
`RESET ROLE` / `set_config('role', ...)` only switch among roles the *session user* belongs to,
and the session user is the reader itself.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from tools.analytics.dataset import DATASET_VERSION, SEED, generate
from tools.analytics.schema import (
    MARKER_TABLE,
    SCHEMA,
    TABLES,
    constraint_statements,
    create_statements,
)

log = logging.getLogger(__name__)

#: pg_advisory_lock key of seeding ("analytics" in ASCII, as an int8).
SEED_LOCK_KEY = 0x616E616C79746963

#: Role defaults: a second line of defence behind the executor's per-transaction settings.
READER_DEFAULTS: dict[str, str] = {
    "default_transaction_read_only": "on",
    "statement_timeout": "30s",
    "idle_in_transaction_session_timeout": "60s",
    "search_path": SCHEMA,
}
#: The reader's resource limits (ANALYTICS_READER_WORK_MEM, ANALYTICS_READER_TEMP_FILE_LIMIT):
#: a query's sorts and hashes, and its spill to disk, are bounded per role, so one tenant's
#: analytics question cannot take the database server's memory or disk.
READER_LIMITS: dict[str, str] = {"work_mem": "8MB", "temp_file_limit": "256MB"}


class SeedError(RuntimeError):
    """Seeding or the reader role could not be set up; the message names the fix."""


@dataclass
class SeedReport:
    """What `ensure_seeded` did."""

    seeded: bool
    version: str
    row_counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    reader_role: str = ""


def ensure_seeded(
    conninfo: str,
    *,
    reader_user: str = "switchyard_analytics_reader",
    reader_password: str | None = None,
    reader_limits: dict[str, str] | None = None,
    force: bool = False,
) -> SeedReport:
    """Make sure schema `analytics` holds this version's dataset and the reader role can read it.

    `conninfo` connects as the schema's owner (DATABASE_URL). `force=True` re-seeds even when the
    marker matches. `reader_limits` (default `READER_LIMITS`) are set on the reader role with
    `READER_DEFAULTS`. Blocking: seeding takes a few seconds the first time, milliseconds after.
    """
    started = time.perf_counter()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        _check_reader_name(conn, reader_user)
        _ensure_role(
            conn,
            reader_user,
            reader_password,
            {**READER_DEFAULTS, **(reader_limits or READER_LIMITS)},
        )
        if not force and _marker(conn) == DATASET_VERSION and _reader_can_read(conn, reader_user):
            return SeedReport(False, DATASET_VERSION, _counts(conn), _elapsed(started), reader_user)
        # A session-level lock taken in its own (autocommit) statement: the marker check after
        # it runs in a new transaction, which sees the catalog changes of a process that seeded
        # while this one waited (a lock taken inside one transaction would leave this
        # transaction's catalog cache stale, and it would seed a second time).
        conn.execute("SELECT pg_advisory_lock(%s)", [SEED_LOCK_KEY])
        try:
            if not force and _marker(conn) == DATASET_VERSION:
                with conn.transaction():
                    _grant(conn, reader_user)  # the role may have been re-created since
                counts = _counts(conn)
                seeded = False
            else:
                with conn.transaction():  # all or nothing: a crash leaves no half schema
                    counts = _seed(conn)
                    _grant(conn, reader_user)
                seeded = True
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [SEED_LOCK_KEY])
    report = SeedReport(seeded, DATASET_VERSION, counts, _elapsed(started), reader_user)
    if seeded:
        log.info(
            "analytics dataset %s seeded in %.1f s: %s", DATASET_VERSION, report.seconds, counts
        )
    return report


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 3)


def _marker(conn: psycopg.Connection) -> str | None:
    exists = conn.execute("SELECT to_regclass(%s)", [f"{SCHEMA}.{MARKER_TABLE}"]).fetchone()
    if not exists or exists[0] is None:
        return None
    row = conn.execute(
        sql.SQL("SELECT version FROM {}.{} ORDER BY seeded_at DESC LIMIT 1").format(
            sql.Identifier(SCHEMA), sql.Identifier(MARKER_TABLE)
        )
    ).fetchone()
    return str(row[0]) if row else None


def _counts(conn: psycopg.Connection) -> dict[str, int]:
    row = conn.execute(
        sql.SQL("SELECT row_counts FROM {}.{} WHERE version = %s").format(
            sql.Identifier(SCHEMA), sql.Identifier(MARKER_TABLE)
        ),
        [DATASET_VERSION],
    ).fetchone()
    return dict(row[0]) if row else {}


def _seed(conn: psycopg.Connection) -> dict[str, int]:
    data = generate(SEED)
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(SCHEMA)))
    for statement in create_statements():
        conn.execute(statement.encode())
    counts: dict[str, int] = {}
    with conn.cursor() as cur:
        for t in TABLES:
            rows = data.tables()[t.name]
            copy = sql.SQL("COPY {}.{} ({}) FROM STDIN").format(
                sql.Identifier(SCHEMA),
                sql.Identifier(t.name),
                sql.SQL(", ").join(sql.Identifier(c) for c in t.column_names),
            )
            with cur.copy(copy) as copier:
                for row in rows:
                    copier.write_row(row)
            counts[t.name] = len(rows)
    for statement in constraint_statements():
        conn.execute(statement.encode())
    conn.execute(
        sql.SQL("INSERT INTO {}.{} (version, seed, row_counts) VALUES (%s, %s, %s)").format(
            sql.Identifier(SCHEMA), sql.Identifier(MARKER_TABLE)
        ),
        [DATASET_VERSION, SEED, json.dumps(counts)],
    )
    for t in TABLES:  # fresh statistics, so the first queries get good plans
        conn.execute(
            sql.SQL("ANALYZE {}.{}").format(sql.Identifier(SCHEMA), sql.Identifier(t.name))
        )
    return counts


# --- the reader role ------------------------------------------------------------------------


def _check_reader_name(conn: psycopg.Connection, reader_user: str) -> None:
    owner = conn.execute("SELECT current_user").fetchone()
    if owner and owner[0] == reader_user:
        raise SeedError(
            f"ANALYTICS_READER_USER ({reader_user}) is the DATABASE_URL user; it must be a "
            "separate role that can only read schema analytics. Choose another name."
        )


def _check_memberships(conn: psycopg.Connection, reader_user: str) -> None:
    """The reader may belong to no role: NOINHERIT stops inherited rights, but a member can
    still SET ROLE to a role it belongs to and use every right of that role."""
    rows = conn.execute(
        "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
        "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = %s ORDER BY 1",
        [reader_user],
    ).fetchall()
    if rows:
        groups = ", ".join(row[0] for row in rows)
        raise SeedError(
            f"role {reader_user!r} is a member of {groups}; analytics SQL must run as a role "
            f"that belongs to no role (it could SET ROLE to one). REVOKE {groups} FROM "
            f"{reader_user}, or set ANALYTICS_READER_USER to another name (it is created for "
            "you)."
        )


def _ensure_role(
    conn: psycopg.Connection, reader_user: str, password: str | None, settings: dict[str, str]
) -> None:
    """Create the reader role if missing (tolerating a concurrent creator) and check it."""
    role = sql.Identifier(reader_user)
    row = conn.execute(
        "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles "
        "WHERE rolname = %s",
        [reader_user],
    ).fetchone()
    if row is None:
        try:
            conn.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                    "NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 50"
                ).format(role)
            )
        except (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
            pass  # another process created it a moment ago
        except psycopg.errors.InsufficientPrivilege as exc:
            raise SeedError(
                f"cannot create the analytics reader role {reader_user!r} ({exc}). Grant the "
                "DATABASE_URL user CREATEROLE, or create it yourself: CREATE ROLE "
                f"{reader_user} LOGIN NOINHERIT; then start again."
            ) from exc
    elif any(row):
        raise SeedError(
            f"role {reader_user!r} is a superuser or may create roles/databases or bypass row "
            "security; analytics SQL must run as a role that can only read. Set "
            "ANALYTICS_READER_USER to another name (it is created for you)."
        )
    _check_memberships(conn, reader_user)
    wanted = [f"{name}={value}" for name, value in settings.items()]
    current = conn.execute("SELECT rolconfig FROM pg_roles WHERE rolname = %s", [reader_user])
    config_row = current.fetchone()
    statements = (
        [sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(password))]
        if (password)
        else []
    )
    if not config_row or sorted(config_row[0] or []) != sorted(wanted):
        statements += [
            sql.SQL("ALTER ROLE {} SET {} = {}").format(
                role, sql.Identifier(name), sql.Literal(value)
            )
            for name, value in settings.items()
        ]
    for statement in statements:
        try:
            conn.execute(statement)
        except psycopg.errors.InsufficientPrivilege as exc:
            # temp_file_limit is a superuser setting: a CREATEROLE owner still sets the rest
            log.warning(
                "cannot alter role %s (%s; needs CREATEROLE, and a superuser or GRANT SET ON "
                "PARAMETER temp_file_limit for temp_file_limit); the executor's "
                "per-transaction read-only settings still apply",
                reader_user,
                exc,
            )
        except (psycopg.errors.InternalError_, psycopg.errors.UniqueViolation):
            # "tuple concurrently updated", or the role's first setting inserted by two
            # processes at once: another process set the same value
            pass


def _reader_can_read(conn: psycopg.Connection, reader_user: str) -> bool:
    row = conn.execute(
        "SELECT has_schema_privilege(%s, %s, 'USAGE') AND has_table_privilege(%s, %s, 'SELECT')",
        [reader_user, SCHEMA, reader_user, f"{SCHEMA}.sales"],
    ).fetchone()
    return bool(row and row[0])


def _grant(conn: psycopg.Connection, reader_user: str) -> None:
    role = sql.Identifier(reader_user)
    schema = sql.Identifier(SCHEMA)
    dbname = conn.info.dbname
    conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(dbname), role))
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, role))
    conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(schema, role))
