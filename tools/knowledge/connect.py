"""Which Postgres holds the knowledge base: DATABASE_URL, or the embedded pgserver one.

The embedded server is pgserver's Postgres 16 (it ships pgvector) under ``DATA_DIR/postgres``,
the same one the app's other Postgres data uses. pgserver reference-counts its server across
processes (and shares one handle inside a process), so the API, the CLI, Studio and a second
API process on one DATA_DIR all attach to ONE server, and the last one out stops it.
"""

from __future__ import annotations

from pathlib import Path

from tools.knowledge.schema import KnowledgeEngineError


def embedded_postgres_url(data_dir: Path) -> str:
    """Start (or attach to) the embedded Postgres for `data_dir`; its connection URL."""
    try:
        import pgserver
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise KnowledgeEngineError(
            "DATABASE_URL is unset and the embedded Postgres (`pgserver`) is not installed: "
            "`pip install pgserver`, or set DATABASE_URL to a Postgres with pgvector"
        ) from exc
    data_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(data_dir.resolve() / "postgres", cleanup_mode="stop")
    return str(server.get_uri())


def database_url(database_url: str | None, data_dir: Path) -> str:
    """`database_url` when set, else the embedded server's URL."""
    return database_url or embedded_postgres_url(data_dir)
