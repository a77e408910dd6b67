"""Where analytics SQL reads from: the bundled demo schema, or the user's own PostgreSQL database.

`Scope` is what the guard and the executor need to know about a source: the schemas a query may
read (the first resolves unqualified names), the tables in them, and the search_path to set.
`DEMO_SCOPE` is schema `analytics` of the bundled dataset; `scope_for(catalogue)` is an external
database's, from its catalogue (hidden tables stay readable to hand-written SQL only if they are
in the schemas: hiding is about what the model-free answers and the model's context offer).

`check_role(conninfo)` asks the server what the agent's login can do, so start-up can warn
(and /health show) when ANALYTICS_DATABASE_URL's role is a superuser or may write: the guard
and the READ ONLY transaction stop writes either way, but the role is the one layer that does
not depend on this code being right, so a writable role is reported loudly, not trusted.

Only PostgreSQL is supported: the guard parses the postgres dialect and the executor relies on
READ ONLY transactions, statement_timeout and EXPLAIN; SQLite has none of the first two
server-side, so it is refused with a message rather than served half-guarded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import conninfo_to_dict

from tools.analytics.schema import MARKER_TABLE, SCHEMA, TABLE_NAMES

#: Schemas no analytics source may expose, whatever ANALYTICS_SCHEMAS says.
SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})


class SourceError(ValueError):
    """An analytics source that cannot be used; the message names the fix."""


@dataclass(frozen=True)
class Scope:
    """The schemas and tables a query may read."""

    schemas: tuple[str, ...]
    tables: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    label: str = "demo"

    @property
    def default_schema(self) -> str:
        return self.schemas[0]

    def resolve(self, name: str) -> str | None:
        """The schema of an unqualified table name (first schema that has it), or None."""
        for schema in self.schemas:
            if (schema, name) in self.tables:
                return schema
        return None

    def names(self) -> str:
        """The readable tables for messages (schema-qualified, sorted)."""
        return ", ".join(sorted(f"{s}.{t}" for s, t in self.tables))

    @property
    def search_path(self) -> tuple[str, ...]:
        """The search_path a query runs with: pg_catalog, the exposed schemas, pg_temp.

        The guard qualifies every table a query reads (a name is a CTE only where that CTE is
        visible), so the path never decides which relation is read; it decides which function,
        operator or type an unqualified name means. pg_catalog stays first, written out, so a
        function or operator in a user's schema cannot shadow a built-in (the trojan-horse
        ordering Postgres documents for CVE-2018-1058), and pg_temp is named last so it is not
        searched first, as it is when left implicit.
        """
        return ("pg_catalog", *self.schemas, "pg_temp")


DEMO_SCOPE = Scope(
    (SCHEMA,), frozenset((SCHEMA, t) for t in (*TABLE_NAMES, MARKER_TABLE)), label="demo"
)


def parse_schemas(text: str) -> tuple[str, ...]:
    """ANALYTICS_SCHEMAS as a tuple; system schemas refused."""
    schemas = tuple(s.strip() for s in text.split(",") if s.strip())
    if not schemas:
        raise SourceError("ANALYTICS_SCHEMAS is empty: name at least one schema, e.g. public")
    bad = [s for s in schemas if s in SYSTEM_SCHEMAS or s.startswith("pg_")]
    if bad:
        raise SourceError(
            f"ANALYTICS_SCHEMAS may not name system schemas ({', '.join(bad)}): list the "
            "schemas of your own tables"
        )
    return schemas


def check_url(url: str) -> str:
    """A PostgreSQL connection string, or SourceError saying which dialects work."""
    lowered = url.strip().lower()
    if lowered.startswith(("sqlite:", "file:")) or lowered.endswith((".db", ".sqlite")):
        raise SourceError(
            "ANALYTICS_DATABASE_URL points at SQLite, which is not supported: only PostgreSQL "
            "can enforce read-only transactions and statement timeouts server-side. Load the "
            "data into PostgreSQL (e.g. with pgloader) and point the URL there."
        )
    try:
        conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise SourceError(
            f"ANALYTICS_DATABASE_URL is not a PostgreSQL connection string ({exc}); use "
            "postgresql://role:password@host:5432/database"
        ) from None
    return url


@dataclass(frozen=True)
class RoleReport:
    """What the analytics login may do; `warnings` is empty for a proper read-only role."""

    user: str
    superuser: bool
    writable: tuple[str, ...]
    warnings: tuple[str, ...]


def check_role(conninfo: str, schemas: tuple[str, ...]) -> RoleReport:
    """Ask the server whether the login is a superuser or may write in `schemas` (blocking)."""
    with psycopg.connect(conninfo, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
            "WHERE rolname = current_user"
        ).fetchone()
        user, superuser, createrole, createdb = row if row else ("?", False, False, False)
        writable = [
            f"{r[0]}.{r[1]}"
            for r in conn.execute(
                "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = ANY(%s) AND c.relkind IN "
                "('r', 'p', 'v', 'm', 'f') AND (has_table_privilege(c.oid, 'INSERT') OR "
                "has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE') "
                "OR has_table_privilege(c.oid, 'TRUNCATE')) ORDER BY 1, 2",
                [list(schemas)],
            ).fetchall()
        ]
        creatable = [
            r[0]
            for r in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s) AND "
                "has_schema_privilege(oid, 'CREATE')",
                [list(schemas)],
            ).fetchall()
        ]
    warnings: list[str] = []
    fix = "connect as a read-only role (README: 'Connecting your database')"
    if superuser:
        warnings.append(f"role {user} is a SUPERUSER: it can write anything; {fix}")
    if writable:
        shown = ", ".join(writable[:5]) + (" ..." if len(writable) > 5 else "")
        warnings.append(f"role {user} can write {len(writable)} tables ({shown}); {fix}")
    if creatable:
        warnings.append(f"role {user} can CREATE in schema {', '.join(creatable)}; {fix}")
    if createrole or createdb:
        warnings.append(f"role {user} has CREATEROLE/CREATEDB; {fix}")
    return RoleReport(str(user), bool(superuser), tuple(writable), tuple(warnings))
