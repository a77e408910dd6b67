"""The API's operational surface: health, config, auth, limits, errors, lifecycle."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from config import Settings
from main import create_app
from tests.support.servers import RedisServer, free_port
from tests.support.stub_openai import StubOpenAI

REPO = Path(__file__).resolve().parents[2]


def test_health_is_ok_with_the_machines_servers(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings())) as client:
        response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    deps = body["dependencies"]
    assert {deps[n]["status"] for n in ("redis", "postgres")} == {"ok"}
    assert deps["redis"]["mode"] == "server" and "qdrant" not in deps
    # the machine's Postgres 15 has no pgvector: the knowledge base says so, not required
    assert deps["knowledge"]["status"] == "error" and "pgvector" in deps["knowledge"]["error"]
    assert all(deps[n]["latency_ms"] >= 0 for n in deps)
    assert body["llm"]["provider"] == "none"


def test_health_reports_a_stopped_redis_as_an_error(
    make_settings: Callable[..., Settings], private_redis: RedisServer
) -> None:
    with TestClient(create_app(make_settings(redis_url=private_redis.url))) as client:
        assert client.get("/health").status_code == 200
        private_redis.stop()
        down = client.get("/health")
        assert down.status_code == 503
        body = down.json()
        assert body["status"] == "degraded"
        redis_dep = body["dependencies"]["redis"]
        assert redis_dep["status"] == "error"
        assert redis_dep["error"] and "Connection" in redis_dep["error"]
        assert body["dependencies"]["postgres"]["status"] == "ok"
        private_redis.start()
        assert client.get("/health").status_code == 200


def test_start_up_fails_fast_on_an_unreachable_url(
    make_settings: Callable[..., Settings], private_redis: RedisServer
) -> None:
    url = private_redis.url
    private_redis.stop()
    app = create_app(make_settings(redis_url=url, connect_timeout_seconds=1))
    with pytest.raises(RuntimeError, match="Redis at .* is unreachable.*fix REDIS_URL"):
        with TestClient(app):
            pass


def test_health_names_the_llm_provider_in_use(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    settings = stub_settings(llm_provider="auto")
    with TestClient(create_app(settings)) as client:
        llm = client.get("/health").json()["llm"]
    assert llm["provider"] == "openai" and llm["model"] == settings.llm.openai_model
    assert "answered" in llm["reason"]


def test_no_secret_appears_in_config_or_logs(
    make_settings: Callable[..., Settings],
    stub_openai: StubOpenAI,
    postgres_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets = ["sk-very-secret-key", "api-key-one", "pg-password-xyz"]
    pg_with_password = postgres_url.replace("postgres@", "postgres:pg-password-xyz@")
    settings = make_settings(
        llm_provider="auto",
        openai_api_key=secrets[0],
        openai_base_url=stub_openai.base_url,
        api_keys=secrets[1],
        database_url=pg_with_password,
    )
    with TestClient(create_app(settings)) as client:
        config = client.get("/config", headers={"X-API-Key": secrets[1]})
        health = client.get("/health")
    assert config.status_code == 200
    for secret in secrets:
        assert secret not in config.text
        assert secret not in health.text
        assert secret not in caplog.text
    assert config.json()["settings"]["llm"]["openai_api_key"] == "**********"


def test_api_keys_are_required_when_configured(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(api_keys="k1,k2"))) as client:
        missing = client.get("/config")
        wrong = client.get("/config", headers={"X-API-Key": "nope"})
        header = client.get("/config", headers={"X-API-Key": "k2"})
        bearer = client.get("/config", headers={"Authorization": "Bearer k1"})
        health = client.get("/health")
    assert missing.status_code == 401 and wrong.status_code == 401
    assert "X-API-Key" in missing.json()["error"]["message"]
    assert header.status_code == 200 and bearer.status_code == 200
    assert health.status_code == 200  # load balancers probe without a key


def test_rate_limit_per_client(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(rate_limit_per_minute=3))) as client:
        codes = [client.get("/config").status_code for _ in range(4)]
        limited = client.get("/config")
    assert codes == [200, 200, 200, 429]
    assert int(limited.headers["Retry-After"]) >= 1
    assert "3 requests per minute" in limited.json()["error"]["message"]


def test_errors_are_json(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings())) as client:
        not_found = client.get("/no-such-route")
        wrong_method = client.post("/health")
    assert not_found.status_code == 404 and not_found.json()["error"]["status"] == 404
    assert wrong_method.status_code == 405 and "error" in wrong_method.json()


def test_oversized_body_is_rejected_before_reading(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(max_request_bytes=2048))) as client:
        response = client.post("/health", content=b"x" * 5000)
    assert response.status_code == 413
    assert "MAX_REQUEST_BYTES" in response.json()["error"]["message"]


def test_shutdown_returns_when_a_queue_read_swallows_the_cancel(
    make_settings: Callable[..., Settings],
) -> None:
    """A cancel that lands as redis-py's socket timeout fires comes back as a TimeoutError that
    redis-py retries, so the worker's read swallows it; the app's shutdown hung on the run
    worker's loop (seen about once in ten starts and stops on a loaded machine)."""
    client = TestClient(create_app(make_settings()))
    client.__enter__()
    worker = client.app.state.services.worker  # type: ignore[attr-defined]
    reading = threading.Event()

    async def swallowing_read(count: int) -> list[tuple[str, str | None]]:
        reading.set()
        try:
            await asyncio.sleep(0.2)  # a blocking XREADGROUP
        except asyncio.CancelledError:
            pass  # what redis-py's retry of its own timeout does to a cancel
        return []

    worker._read_new = swallowing_read
    assert reading.wait(60), "the run worker never read its queue"
    closing = threading.Thread(target=client.__exit__, args=(None, None, None), daemon=True)
    closing.start()
    closing.join(60)
    assert not closing.is_alive(), "the app's shutdown waited for the run worker forever"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_embedded_defaults_start_persist_and_stop(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_provider="none")
    app = create_app(settings)
    with TestClient(app) as client:
        body = client.get("/health").json()
        assert client.get("/health").status_code == 200
        storage = ("redis", "postgres", "knowledge")  # (components add their own, e.g. sandbox)
        assert {body["dependencies"][name]["mode"] for name in storage} == {"embedded"}
        stores = app.state.services.stores
        stores.redis_sync.set("kept", "across restarts")
        redis_pid = stores.embedded[0].pid
        assert _alive(redis_pid)
    # every embedded server stopped with the app ...
    assert not _alive(redis_pid)
    assert not (tmp_path / "data" / "postgres" / "postmaster.pid").exists()
    # ... and the data is still there on the next start
    app = create_app(settings)
    with TestClient(app) as client:
        assert app.state.services.stores.redis_sync.get("kept") == b"across restarts"
        assert client.get("/health").status_code == 200


@pytest.mark.slow
def test_embedded_redis_stops_after_authenticated_requests(tmp_path: Path) -> None:
    """The rate limiter shares the app's Redis pool, so nothing keeps the server alive."""
    settings = Settings(
        _env_file=None, data_dir=tmp_path / "data", llm_provider="none", api_keys="k"
    )
    app = create_app(settings)
    with TestClient(app) as client:
        assert client.get("/config", headers={"X-API-Key": "k"}).status_code == 200
        assert client.get("/metrics", headers={"X-API-Key": "k"}).status_code == 200
        redis_pid = app.state.services.stores.embedded[0].pid
    assert not _alive(redis_pid)


def test_serve_reports_an_unreachable_server_in_one_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    env = {
        **os.environ,
        "REDIS_URL": f"redis://:hunter2@127.0.0.1:{port}/0",
        "DATA_DIR": str(tmp_path),
        "CONNECT_TIMEOUT_SECONDS": "1",
        "PYTHONPATH": str(REPO),
    }
    result = subprocess.run(
        [sys.executable, "main.py", "serve"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 3
    assert f"Redis at redis://:***@127.0.0.1:{port}/0 is unreachable" in result.stderr
    assert "fix REDIS_URL" in result.stderr
    assert "Traceback" not in result.stderr and "hunter2" not in result.stderr


@pytest.mark.slow
def test_a_clean_run_logs_nothing_alarming(tmp_path: Path) -> None:
    """`main.py serve` on embedded defaults, a request, a clean stop: no warning, error or
    traceback, no embedded-server chatter (initdb, pg_ctl, a failed Redis shutdown)."""
    from tests.support.processes import ApiProcess

    log = tmp_path / "api.log"
    api = ApiProcess({"DATA_DIR": str(tmp_path / "data"), "LLM_PROVIDER": "none"}, log_path=log)
    api.start()
    try:
        assert httpx.get(f"{api.url}/health", timeout=30).status_code == 200
    finally:
        api.stop()
    text = log.read_text()
    for alarming in ("WARNING", "ERROR", "Traceback", "shutdown failed", "initdb", "pg_ctl"):
        assert alarming not in text, f"{alarming!r} in the log:\n{text}"


def test_only_health_and_the_docs_are_open_with_api_keys(
    make_settings: Callable[..., Settings],
) -> None:
    with TestClient(create_app(make_settings(api_keys="k1"))) as client:
        for open_path in ("/health", "/docs", "/redoc", "/openapi.json"):
            assert client.get(open_path).status_code == 200, open_path
        for path in ("/config", "/metrics", "/documents", "/session/abcdefgh12345678"):
            assert client.get(path).status_code == 401, path
        assert client.post("/chat", json={"message": "hi"}).status_code == 401
