"""The user's own database as the analytics source: connect, check the role, build the catalogue.

`open_source(url, schemas, path, ...)` (blocking; call it in a thread) checks that the URL is
PostgreSQL, asks the server what the login may do (`source.check_role`), reads the schema,
derives the catalogue, writes it beside the user's catalogue file (`<name>.derived.yaml`, and the
edits template when the file is new), lays the user's edits over it and returns an
`ExternalSource`: the catalogue the answers use (what is hidden taken out, with every reference
to it: `Catalogue.available`), the `Scope` the guard allows (the catalogue's
visible tables only: a hidden table is refused to hand-written SQL too) and the role report
start-up logs and /health shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tools.analytics.catalogue_file import Catalogue, load, write_derived
from tools.analytics.introspect import derive, read_schema
from tools.analytics.source import RoleReport, Scope, SourceError, check_role, check_url

APPLICATION_NAME = "switchyard-analytics"


@dataclass(frozen=True)
class ExternalSource:
    """An external database ready for questions."""

    conninfo: str
    label: str  # user@host/db, no password
    catalogue: Catalogue
    scope: Scope
    role: RoleReport
    catalogue_path: Path


def conninfo_of(url: str) -> str:
    """ANALYTICS_DATABASE_URL as a conninfo with this application's name."""
    params = dict(conninfo_to_dict(check_url(url)))
    params.setdefault("application_name", APPLICATION_NAME)
    return make_conninfo("", **params)


def label_of(conninfo: str) -> str:
    params = conninfo_to_dict(conninfo)
    host = params.get("host") or "localhost"
    return f"{params.get('user') or '?'}@{host}/{params.get('dbname') or '?'}"


def scope_for(catalogue: Catalogue, label: str = "external") -> Scope:
    """The tables a query may read: the catalogue's visible ones, in its schemas."""
    tables = frozenset((t.schema_, t.name) for t in catalogue.visible_tables())
    return Scope(tuple(catalogue.schemas), tables, label=label)


def open_source(
    url: str,
    schemas: tuple[str, ...],
    catalogue_path: Path,
    *,
    max_values: int = 25,
    timeout_ms: int = 5000,
) -> ExternalSource:
    """Connect, check the role, derive and load the catalogue (see the module docstring)."""
    conninfo = conninfo_of(url)
    role = check_role(conninfo, schemas)
    raw = read_schema(conninfo, schemas, max_values=max_values, timeout_ms=timeout_ms)
    if not raw:
        raise SourceError(
            f"ANALYTICS_DATABASE_URL's role sees no tables in schema {', '.join(schemas)}: set "
            "ANALYTICS_SCHEMAS to your schemas and GRANT USAGE ON SCHEMA / GRANT SELECT ON ALL "
            "TABLES IN SCHEMA to the role (README: 'Connecting your database')"
        )
    label = label_of(conninfo)
    derived = derive(raw, source=label, schemas=schemas)
    write_derived(catalogue_path, derived)
    catalogue = load(catalogue_path, derived).available()  # hidden = absent from answers
    return ExternalSource(
        conninfo, label, catalogue, scope_for(catalogue, label), role, catalogue_path
    )
