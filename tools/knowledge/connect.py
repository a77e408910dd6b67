"""Which Postgres holds the knowledge base: DATABASE_URL, or the embedded pgserver one.

The embedded server is pgserver's Postgres 16 (it ships pgvector) under ``DATA_DIR/postgres``,
the same one the app's other Postgres data uses. Every process on one DATA_DIR (the API, the
CLI, Studio, a second API) uses ONE server, and the last one using it stops it (the owner rule
of `tools.embedded`); a use of it is released when its holder closes.
"""

from __future__ import annotations

from pathlib import Path

from tools.embedded import EmbeddedPostgres
from tools.knowledge.schema import KnowledgeEngineError


def embedded_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start (or attach to) the embedded Postgres for `data_dir`: a use of it, to release."""
    try:
        import pgserver  # noqa: F401
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise KnowledgeEngineError(
            "DATABASE_URL is unset and the embedded Postgres (`pgserver`) is not installed: "
            "`pip install pgserver`, or set DATABASE_URL to a Postgres with pgvector"
        ) from exc
    return EmbeddedPostgres(data_dir)


def open_database(database_url: str | None, data_dir: Path) -> tuple[str, EmbeddedPostgres | None]:
    """`database_url` when set, else the embedded server's URL with the use of it (release it
    when done)."""
    if database_url:
        return database_url, None
    server = embedded_postgres(data_dir)
    return server.url, server
