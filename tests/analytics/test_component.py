"""The analytics component: seeding at start-up or by `python main.py seed-analytics`, the
reader pool's health check, and the CLI's answers when seeding cannot work."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.support.servers import free_port
from tools.analytics.dataset import DATASET_VERSION

REPO = Path(__file__).resolve().parents[2]


def seed_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run `python main.py seed-analytics` with ``env`` over this process's environment."""
    full = {**os.environ, "PYTHONPATH": str(REPO), "LOG_LEVEL": "WARNING", **env}
    return subprocess.run(
        [sys.executable, "main.py", "seed-analytics", *args],
        cwd=REPO,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_an_unseeded_database_shows_in_health_until_the_cli_seeds_it(
    make_settings: Callable[..., Settings], scratch_db: str, tmp_path: Path
) -> None:
    # an app on the session database first: it seeds there and creates the reader role
    with TestClient(create_app(make_settings())) as api:
        assert api.get("/health").json()["dependencies"]["analytics"]["status"] == "ok"
    unseeded = make_settings(database_url=scratch_db, analytics_seed_on_start=False)
    with TestClient(create_app(unseeded)) as api:
        health = api.get("/health")
        assert health.status_code == 200  # analytics is not required: the rest still serves
        analytics = health.json()["dependencies"]["analytics"]
        assert analytics["status"] == "error" and not analytics["required"]
        assert "python main.py seed-analytics" in analytics["error"]

    done = seed_cli({"DATABASE_URL": scratch_db, "DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    name = scratch_db.rsplit("/", 1)[1]
    assert f"Seeded the analytics dataset {DATASET_VERSION} into schema analytics of" in done.stdout
    assert name in done.stdout and "sales 49,110" in done.stdout
    assert f"Reader role {os.environ['ANALYTICS_READER_USER']}: SELECT on schema" in done.stdout

    again = seed_cli({"DATABASE_URL": scratch_db, "DATA_DIR": str(tmp_path)}, "--json")
    assert again.returncode == 0, again.stderr
    assert '"seeded": false' in again.stdout and '"sales": 49110' in again.stdout

    with TestClient(create_app(unseeded)) as api:
        assert api.get("/health").json()["dependencies"]["analytics"]["status"] == "ok"
        body = api.post("/analytics/query", json={"question": "Units sold in 2024"}).json()
        assert body["columns"] == ["units_sold"] and body["rows"] == [[23_647]]


def test_the_cli_names_what_went_wrong(postgres_url: str, tmp_path: Path) -> None:
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    down = seed_cli({"DATABASE_URL": closed, "DATA_DIR": str(tmp_path)})
    assert down.returncode == 3
    assert down.stderr.startswith("seed-analytics failed: connection") and "refused" in down.stderr
    assert "Traceback" not in down.stderr
    same_user = seed_cli(
        {
            "DATABASE_URL": postgres_url,
            "DATA_DIR": str(tmp_path),
            "ANALYTICS_READER_USER": "postgres",
        }
    )
    assert same_user.returncode == 3
    assert "is the DATABASE_URL user; it must be a separate role" in same_user.stderr


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not under pytest's temporary root (0700, reset whenever a test run starts): the embedded
    # Postgres runs as another user, which must reach its data directory.
    folder = Path(tempfile.mkdtemp(prefix="switchyard-seed-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_the_cli_seeds_the_embedded_postgres_when_database_url_is_unset(data_dir: Path) -> None:
    env = {"DATABASE_URL": "", "DATA_DIR": str(data_dir)}
    first = seed_cli(env)
    assert first.returncode == 0, first.stderr
    assert "into schema analytics of the embedded Postgres" in first.stdout
    assert "vehicles 50,410" in first.stdout
    second = seed_cli(env)
    assert second.returncode == 0, second.stderr
    assert "is already in schema analytics of the embedded Postgres" in second.stdout
    assert "nothing to do" in second.stdout
    assert not (data_dir / "postgres" / "postmaster.pid").exists()  # stopped after seeding
