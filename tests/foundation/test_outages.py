"""Dependency outages: Redis stopped and restarted under a running API.

- With Redis down, endpoints that need it answer 503 naming Redis (one log line, no
  traceback), and endpoints that do not need it keep working; the rate limiter falls back to
  a per-process window.
- After Redis restarts, stale pooled connections are retried: the first turn succeeds, and a
  turn that was saved is never answered with a failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.support.servers import RedisServer

GOOD = "def test_ok():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def api(
    make_settings: Callable[..., Settings], private_redis: RedisServer, pgvector_db: str
) -> Iterator[TestClient]:
    settings = make_settings(
        redis_url=private_redis.url, database_url=pgvector_db, rate_limit_per_minute=1000
    )
    with TestClient(create_app(settings)) as client:
        yield client


def test_redis_down_is_503_for_what_needs_it_and_others_keep_working(
    api: TestClient, private_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    session = api.post("/chat", json={"message": "hello"}).json()["session_id"]
    private_redis.stop()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        chat = api.post("/chat", json={"message": "hello again", "session_id": session})
    assert chat.status_code == 503, chat.text
    error = chat.json()["error"]
    assert error["dependency"] == "redis" and "Redis" in error["message"]
    assert not any(r.exc_info for r in caplog.records)  # one line, no traceback
    # the request's line and the rate limiter's fallback; the background pollers (the scheduler,
    # the run worker) say it once per outage on their own schedule, whenever they next poll
    pollers = {"tools.scheduler.engine", "app.runs.worker"}
    said = [r for r in caplog.records if r.name not in pollers]
    assert len([r for r in said if "redis" in r.getMessage().lower()]) <= 2
    assert len([r for r in caplog.records if r.name == "tools.scheduler.engine"]) <= 1
    # endpoints that do not need Redis keep working
    assert api.get("/config").status_code == 200
    assert api.get("/documents").status_code == 200
    analyzed = api.post(
        "/api/v1/analyze",
        json={"files": [{"path": "tests/test_a.py", "content": GOOD}], "mode": "rules-only"},
    )
    assert analyzed.status_code == 200, analyzed.text
    assert api.get("/health").status_code == 503


def test_after_a_redis_restart_the_first_turn_succeeds(
    api: TestClient, private_redis: RedisServer
) -> None:
    first = api.post("/chat", json={"message": "hello"}).json()
    private_redis.restart()  # the pool still holds connections to the old server
    second = api.post("/chat", json={"message": "hello again", "session_id": first["session_id"]})
    assert second.status_code == 200, second.text
    assert second.json()["turn"] == 2
    assert api.get("/documents").status_code == 200
    third = api.post("/chat", json={"message": "thanks", "session_id": first["session_id"]})
    assert third.status_code == 200 and third.json()["turn"] == 3  # no duplicated turn
