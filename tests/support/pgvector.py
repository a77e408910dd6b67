"""A private embedded Postgres 16 with pgvector (the `pgserver` wheel) for tests that need it:
the knowledge base lives in Postgres with pgvector, which the machine's Postgres 15 lacks."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path

import psycopg

from tools.embedded import EmbeddedPostgres


def reachable_dir(prefix: str) -> Path:
    """A new folder under /tmp that pgserver's own system user can reach when the tests run as
    root (pytest's temporary root is private to its user, and other sessions reset it)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o711)
    return path


class PgvectorServer:
    """An embedded Postgres 16 in a folder of its own; `database()` makes empty databases."""

    def __init__(self, prefix: str = "sy-pgvector-") -> None:
        self.root = reachable_dir(prefix)
        self.server = EmbeddedPostgres(self.root)

    @property
    def url(self) -> str:
        return self.server.url

    def database(self) -> str:
        """URL of a new, empty database on this server."""
        name = f"kb_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        base, _, query = self.url.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")

    def stop(self) -> None:
        self.server.release()
        shutil.rmtree(self.root, ignore_errors=True)
