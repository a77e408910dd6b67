"""Analytics under trouble: Postgres down (503, then back), and an SSE client that disconnects
in the middle of a running query (a real API process, a real disconnect, pg_stat_activity)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.analytics.test_executor import SLOW_SQL
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer
from tests.support.stub_openai import StubOpenAI, StubReply
from tools.embedded import EmbeddedPostgres

pytestmark = pytest.mark.slow


def wait_for(
    predicate: Callable[[], bool], what: str, timeout: float = 90.0, every: float = 0.05
) -> None:
    """Poll ``predicate`` (a condition on a server) until it holds, failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


# --- Postgres down ----------------------------------------------------------------------------


class StoppablePostgres:
    """A private embedded Postgres (pgserver) that a test may stop and start again."""

    def __init__(self, folder: Path) -> None:
        self.embedded = EmbeddedPostgres(folder)
        self.url = self.embedded.url

    def _pg_ctl(self, *args: str) -> None:
        self.embedded.pg_ctl(*args, timeout=60)

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        socket_dir = parse_qs(urlparse(self.url).query)["host"][0]
        log = str(self.embedded.log_file)
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", log, "start")

    def close(self) -> None:
        self.embedded.release()


@pytest.fixture
def private_postgres() -> Iterator[StoppablePostgres]:
    # Not under pytest's temporary root: that folder is 0700 (pytest resets it whenever a test
    # run starts), and the server runs as another user, which must reach its data directory.
    folder = Path(tempfile.mkdtemp(prefix="switchyard-pg-"))
    folder.chmod(0o755)
    server = StoppablePostgres(folder)
    yield server
    server.close()
    shutil.rmtree(folder, ignore_errors=True)


def test_postgres_down_is_503_naming_it_and_answers_resume_when_it_is_back(
    make_settings: Callable[..., Settings], private_postgres: StoppablePostgres
) -> None:
    settings = make_settings(database_url=private_postgres.url, connect_timeout_seconds=2)
    question = {"question": "Revenue by region in 2025"}
    with TestClient(create_app(settings)) as api:
        assert api.post("/analytics/query", json=question).status_code == 200
        private_postgres.stop()
        down = api.post("/analytics/query", json=question)
        assert down.status_code == 503, down.text
        error = down.json()["error"]
        assert error["dependency"] == "postgres" and "Postgres" in error["message"]
        assert down.headers["Retry-After"]
        health = api.get("/health").json()
        assert health["dependencies"]["analytics"]["status"] == "error"
        # a chat turn still answers, saying the data cannot be reached
        chat = api.post("/chat", json={"message": "Revenue by region in 2025"})
        assert chat.status_code == 200, chat.text
        data = chat.json()["data"]["analytics"]
        assert data["unavailable"] and "the analytics database is unavailable" in data["text"]
        for _ in range(3):  # a longer outage: the pool's reconnect backoff grows past the wait
            assert api.post("/analytics/query", json=question).status_code == 503
        private_postgres.start()
        back = api.post("/analytics/query", json=question)
        assert back.status_code == 200, back.text
        assert back.json()["row_count"] == 5
        assert api.get("/health").json()["dependencies"]["analytics"]["status"] == "ok"


def test_with_redis_down_a_query_still_answers_without_a_chart_link(
    make_settings: Callable[..., Settings], private_redis: RedisServer
) -> None:
    settings = make_settings(redis_url=private_redis.url, rate_limit_per_minute=1000)
    with TestClient(create_app(settings)) as api:
        private_redis.stop()
        response = api.post("/analytics/query", json={"question": "Revenue by region in 2025"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["row_count"] == 5 and body["chart"]["vega_lite"]  # the spec is inline
        assert body["chart"]["url"] is None
        chart = api.get(f"/analytics/chart/{body['chart']['chart_id']}.png")
        assert chart.status_code == 503 and chart.json()["error"]["dependency"] == "redis"
        private_redis.start()
        again = api.post("/analytics/query", json={"question": "Revenue by region in 2025"})
        assert api.get(again.json()["chart"]["url"]).status_code == 200


# --- a client gone mid-stream -----------------------------------------------------------------


def slow_then_apologise(request: dict[str, Any]) -> StubReply:
    """The model runs a query that takes minutes, then answers with the timeout it got."""
    if not any(m["role"] == "tool" for m in request["messages"]):
        return StubReply(tool_calls=[("sql_execution_tool", {"sql": SLOW_SQL})])
    return StubReply(content="That query took too long; try a shorter period.")


def reader_backends(postgres_url: str, role: str) -> list[tuple[str, str]]:
    """(state, query) of the reader role's backends on the session database."""
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT coalesce(state, ''), coalesce(query, '') FROM pg_stat_activity "
            "WHERE usename = %s AND datname = %s",
            [role, database],
        ).fetchall()
    return [(str(state), str(query)) for state, query in rows]


def test_a_client_gone_mid_stream_leaves_no_transaction_or_connection_behind(
    tmp_path: Path, redis_url: str, postgres_url: str, stub_openai: StubOpenAI
) -> None:
    import os

    role = os.environ["ANALYTICS_READER_USER"]
    stub_openai.responder = slow_then_apologise
    env = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(tmp_path / "data"),
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": stub_openai.base_url,
        "LLM_MAX_RETRIES": "0",
        "ANALYTICS_STATEMENT_TIMEOUT_MS": "4000",
        "HF_HUB_OFFLINE": "1",
    }
    api = ApiProcess(env, log_path=tmp_path / "api.log").start()
    try:
        body = {"message": "How many pairs of sales are there?", "agent": "analytics"}
        seen: list[str] = []
        session = ""
        with httpx.Client(base_url=api.url, timeout=60) as client:
            with client.stream("POST", "/chat/stream", json=body) as response:
                assert response.status_code == 200
                kind = ""
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        kind = line.split(":", 1)[1].strip()
                    elif line.startswith("data:"):
                        data = json.loads(line.split(":", 1)[1])
                        seen.append(kind)
                        if kind == "session":
                            session = data["session_id"]
                        if kind == "progress" and data["data"]["tool"] == "sql_execution_tool":
                            break
                wait_for(  # the join runs in the cursor's FETCH
                    lambda: any(s == "active" for s, _ in reader_backends(postgres_url, role)),
                    "the slow query to run on the server",
                )
            # leaving both blocks closes the connection mid-stream: a real disconnect
        assert seen[-1] == "progress" and "answer" not in seen

        def turn_over() -> bool:
            info = httpx.get(f"{api.url}/session/{session}", timeout=10).json()
            return not info["running"] and info["turns"] == 1

        wait_for(turn_over, "the turn to finish after the client left", every=0.2)
        backends = reader_backends(postgres_url, role)
        assert backends and all(state == "idle" for state, _ in backends), backends
        pool = httpx.get(f"{api.url}/metrics", timeout=10).json()["analytics"]["pool"]
        assert pool["pool_size"] == pool["pool_available"]  # nothing checked out
        assert pool["requests_waiting"] == 0
        last = httpx.get(f"{api.url}/session/{session}", timeout=10).json()["last_messages"][-1]
        assert last["agent"] == "analytics" and "took too long" in last["content"]
    finally:
        api.stop()
    log = (tmp_path / "api.log").read_text()
    assert "Traceback" not in log, log
    assert reader_backends(postgres_url, role) == []  # the pool closed with the process
