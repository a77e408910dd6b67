"""Issue 22, items 1 and 5: no open door by default, and secrets and internals stay inside.

Played against real servers: `main.py serve` as a subprocess, and the app on the machine's
Redis and Postgres (TestClient runs its lifespan); the only fake is the OpenAI-compatible stub
that plays a failing model provider.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import pytest
import redis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.security import OWNER_SECRET_KEY, owner_of
from app.storage import StartupError
from config import Settings, SettingsError, load_settings, redact_url
from main import create_app
from tests.support.processes import REPO, ApiProcess
from tests.support.servers import free_port
from tests.support.stub_openai import StubOpenAI
from tests.test_analysis.conftest import stub_settings
from tests.test_analysis.graphkit import synthetic_suite
from tools.personal.webhooks import WebhookConfig, WebhookEvent, WebhookSender

KEY = "tenant-key-0123456789"
OTHER = "other-key-0123456789"
OPERATOR = "operator-key-0123456789"
SECRET = "owner-id-secret-for-these-tests"


def serve_env(redis_url: str, postgres_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a `main.py serve` subprocess: this test's stores, no LLM, no keys
    (unless `extra` sets them); the developer's API_KEYS never leaks in."""
    env = {k: v for k, v in os.environ.items() if k not in ("API_KEYS", "ALLOW_ANONYMOUS")}
    env.update(
        {
            "PYTHONPATH": str(REPO),
            "REDIS_URL": redis_url,
            "DATABASE_URL": postgres_url,
            "DATA_DIR": str(data_dir),
            "LLM_PROVIDER": "none",
            "OLLAMA_BASE_URL": f"http://127.0.0.1:{free_port()}",
            **extra,
        }
    )
    return env


# --- 1. No open door by default ---------------------------------------------------------------


def test_serve_refuses_a_public_address_without_api_keys(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    done = subprocess.run(
        [sys.executable, "main.py", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        cwd=REPO,
        env=serve_env(redis_url, postgres_url, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "API_KEYS" in lines[0] and "ALLOW_ANONYMOUS=true" in lines[0]


def test_serve_on_a_public_address_starts_with_the_explicit_opt_in(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    env = serve_env(redis_url, postgres_url, tmp_path, HOST="0.0.0.0", ALLOW_ANONYMOUS="true")
    api = ApiProcess(env=env, log_path=tmp_path / "api.log").start()
    try:
        assert httpx.get(f"{api.url}/health", timeout=10).status_code == 200
    finally:
        api.stop()


def test_the_app_refuses_a_public_host_setting_without_keys(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(host="0.0.0.0"))
    with pytest.raises(StartupError, match="ALLOW_ANONYMOUS=true"), TestClient(app):
        pass


def test_an_app_reached_on_a_public_address_without_keys_answers_403(
    make_settings: Callable[..., Settings],
) -> None:
    """Another launcher (e.g. `uvicorn --host 0.0.0.0`) bypasses `serve`: the request's own
    server address decides, so only loopback callers are served anonymously."""
    app = create_app(make_settings())
    with TestClient(app, base_url="http://127.0.0.1") as local:
        assert local.get("/config").status_code == 200
        public = TestClient(app, base_url="http://10.20.30.40")
        refused = public.get("/config")
        assert refused.status_code == 403
        message = refused.json()["error"]["message"]
        assert "API_KEYS" in message and "ALLOW_ANONYMOUS=true" in message


def test_the_compose_file_requires_api_keys() -> None:
    compose = (REPO / "docker-compose.yml").read_text()
    assert "API_KEYS: ${API_KEYS:?" in compose and "HOST=0.0.0.0" in compose


# --- 5. /health shows details only to a key ----------------------------------------------------


def test_health_without_a_key_is_liveness_only(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(api_keys=KEY))) as client:
        anonymous = client.get("/health")
        assert anonymous.status_code == 200
        body = anonymous.json()
        assert body["status"] == "ok" and "llm" not in body
        for name, dependency in body["dependencies"].items():
            assert set(dependency) == {"status", "required"}, name
        for leak in ("redis://", "postgresql://", "127.0.0.1", "target", "bwrap", "latency"):
            assert leak not in anonymous.text
        keyed = client.get("/health", headers={"X-API-Key": KEY}).json()
        assert keyed["dependencies"]["redis"]["target"].startswith("redis://")
        assert "llm" in keyed


# --- 5. DSNs are redacted in every form --------------------------------------------------------

PASSWORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40
)


def _dsn_quoted(password: str) -> str:
    return "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"


#: Each form a DSN may carry a password in, built around a password.
FORMS: dict[str, Callable[[str], str]] = {
    "url user-info": lambda pw: f"postgresql://app:{quote(pw, safe='')}@db:5432/app",
    "redis user-info": lambda pw: f"redis://:{quote(pw, safe='')}@cache:6379/0",
    "query password": lambda pw: f"postgresql://app@db/app?password={quote(pw, safe='')}",
    "query after another": lambda pw: (
        f"postgresql://app@db/app?sslmode=require&sslpassword={quote(pw, safe='')}&x=1"
    ),
    "multi-host url": lambda pw: f"postgresql://app:{quote(pw, safe='')}@h1:5432,h2:5433/app",
    "key=value": lambda pw: f"host=db port=5432 user=app password={_dsn_quoted(pw)} dbname=x",
    "key = value last": lambda pw: f"host=db user=app password = {_dsn_quoted(pw)}",
}


@pytest.mark.parametrize("form", sorted(FORMS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(password=PASSWORDS, other=PASSWORDS)
def test_redact_url_hides_the_password_of_every_form(form: str, password: str, other: str) -> None:
    """What is shown does not depend on the password at all, so nothing of it can leak."""
    build = FORMS[form]
    shown = redact_url(build(password))
    assert shown == redact_url(build(other))
    assert "***" in shown


def test_redact_url_leaves_what_is_not_secret() -> None:
    assert redact_url("redis://localhost:6379/0") == "redis://localhost:6379/0"
    assert redact_url("postgresql://app@db/app?sslmode=require") == (
        "postgresql://app@db/app?sslmode=require"
    )
    assert redact_url("host=db user=app dbname=x") == "host=db user=app dbname=x"
    assert redact_url("plain words") == "plain words"


def test_a_key_value_dsn_with_a_password_never_shows_it(
    make_settings: Callable[..., Settings], postgres_url: str
) -> None:
    """A key=value DATABASE_URL with a password (the machine's Postgres trusts local
    connections, so the server ignores it) is redacted in /config, /health and repr."""
    conninfo = psycopg.conninfo.conninfo_to_dict(postgres_url)
    dsn = psycopg.conninfo.make_conninfo(**conninfo, password="hunter2-dsn-secret")  # type: ignore[arg-type]
    assert "password=" in dsn and "://" not in dsn
    app_settings = make_settings(database_url=dsn, api_keys=KEY)
    assert "hunter2" not in repr(app_settings) and "hunter2" not in str(app_settings)
    assert "hunter2" not in json.dumps(app_settings.redacted(), default=str)
    with TestClient(create_app(app_settings), headers={"X-API-Key": KEY}) as client:
        health = client.get("/health")
        config = client.get("/config")
        assert health.status_code == 200 and config.status_code == 200
        assert "hunter2" not in health.text and "hunter2" not in config.text
        assert "password=***" in config.text


def test_an_invalid_secret_setting_is_named_but_not_printed() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None, owner_id_secret="short-secret-x")
    assert "OWNER_ID_SECRET" in str(refused.value) and "short-secret-x" not in str(refused.value)


# --- 5. Personal webhook URLs are secrets -------------------------------------------------------

WEBHOOK = "https://hooks.example.com/webhook/n8n-path-token-0123?sig=query-token-4567"


def test_config_shows_a_webhook_url_as_its_index_and_host(
    make_settings: Callable[..., Settings],
) -> None:
    with TestClient(create_app(make_settings(personal_webhook_urls=WEBHOOK))) as client:
        shown = client.get("/config").json()["settings"]["personal"]["personal_webhook_urls"]
    assert shown == ["#1 https://hooks.example.com/…"]


async def test_a_webhook_delivery_report_names_no_path_or_query(redis_url: str) -> None:
    """What the personal agents answer in chat comes from these deliveries."""
    closed = free_port()
    url = f"http://127.0.0.1:{closed}/webhook/n8n-path-token-0123?sig=query-token-4567"
    sender = WebhookSender(WebhookConfig(urls=(url,), max_attempts=1, timeout_seconds=2.0))
    try:
        [delivery] = await sender.send(WebhookEvent(type="reminder.due", user_id="u"))
    finally:
        await sender.close()
    assert not delivery.delivered
    text = delivery.model_dump_json()
    assert "n8n-path-token" not in text and "query-token" not in text
    assert delivery.url == f"#1 http://127.0.0.1:{closed}/…"


def test_a_chat_answer_about_a_failed_webhook_names_its_index_and_host_only(
    make_settings: Callable[..., Settings],
) -> None:
    closed = free_port()
    url = f"http://127.0.0.1:{closed}/webhook/n8n-path-token-0123?sig=query-token-4567"
    app_settings = make_settings(
        personal_webhook_urls=url, personal_webhook_max_attempts=1, api_keys=KEY
    )
    with TestClient(create_app(app_settings), headers={"X-API-Key": KEY}) as client:
        answer = client.post("/chat", json={"message": "send my daily summary", "agent": "task"})
    assert answer.status_code == 200, answer.text
    assert f"#1 http://127.0.0.1:{closed}/…" in answer.json()["answer"]
    assert "n8n-path-token" not in answer.text and "query-token" not in answer.text


# --- 5. Failures do not echo raw exception text -------------------------------------------------


def _finished(client: TestClient, thread_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(f"/analyses/{thread_id}").json()
        if body["status"] in ("done", "failed", "cancelled"):
            return body
        assert time.monotonic() < deadline, f"gave up waiting; last status {body}"
        time.sleep(0.05)


def test_a_failed_background_run_says_the_class_of_failure_not_its_text(
    make_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    stub_openai.fail_next(500, 500)  # the provider's error body is "stub error 500"
    settings_ = make_settings(**stub_settings(stub_openai, llm_max_retries=0))
    with TestClient(create_app(settings_)) as client:
        files = synthetic_suite(10, per_file=10)
        submitted = client.post("/analyses", json={"files": files, "mode": "hybrid"})
        thread_id = submitted.json()["thread_id"]
        failed = _finished(client, thread_id)
        events = client.get(f"/analyses/{thread_id}/events").text
    assert failed["status"] == "failed"
    assert (
        failed["error"] == "The language model provider failed (OpenAIAPIError); try again later."
    )
    for shown in (json.dumps(failed), events):
        assert "stub error" not in shown and "127.0.0.1" not in shown


def test_a_failed_chat_turn_says_the_class_of_failure_not_its_text(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    with TestClient(create_app(stub_settings(llm_max_retries=0))) as client:
        stub_openai.fail_next(500, 500)
        failed = client.post("/chat", json={"message": "hello"})
    assert failed.status_code == 502
    assert "language model provider failed" in failed.json()["error"]["message"]
    assert "stub error" not in failed.text and "127.0.0.1" not in failed.text


# --- 5. /metrics: a key's own counters; the global view needs an operator key ----------------


def test_metrics_show_a_key_its_own_counters_and_an_operator_everything(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(
        make_settings(api_keys=f"{KEY},{OTHER}", operator_api_keys=OPERATOR, owner_id_secret=SECRET)
    )
    mine, theirs = {"X-API-Key": KEY}, {"X-API-Key": OTHER}
    with TestClient(app) as client:
        for _ in range(3):
            assert client.get("/config", headers=mine).status_code == 200
        assert client.get("/config", headers=theirs).status_code == 200
        own = client.get("/metrics", headers=mine).json()
        other = client.get("/metrics", headers=theirs).json()
        operator = client.get("/metrics", headers={"X-API-Key": OPERATOR}).json()
    me, them = owner_of(KEY, SECRET.encode()), owner_of(OTHER, SECRET.encode())
    assert set(own) == {"owner", "requests"} and own["owner"] == me
    assert own["requests"]["by_route"] == {"/config": 3}
    assert own["requests"]["by_status"] == {"2xx": 3}
    assert other["requests"]["by_route"] == {"/config": 1}  # this /metrics counts once answered
    assert {"stages", "llm", "owners"} <= set(operator)
    assert operator["owners"][me]["by_route"]["/config"] == 3
    assert operator["owners"][them]["by_route"]["/config"] == 1


# --- 5. Owner ids are an HMAC of the key with a server secret ----------------------------------


def _owner(client: TestClient, key: str) -> str:
    owner: str = client.get("/metrics", headers={"X-API-Key": key}).json()["owner"]
    return owner


def test_owner_ids_are_an_hmac_with_the_configured_secret(
    make_settings: Callable[..., Settings],
) -> None:
    with TestClient(create_app(make_settings(api_keys=KEY, owner_id_secret=SECRET))) as client:
        owner = _owner(client, KEY)
    assert owner == owner_of(KEY, SECRET.encode())
    assert owner != "key-" + hashlib.sha256(KEY.encode()).hexdigest()[:24]  # the old, unsalted


def test_a_generated_secret_is_shared_by_replicas_and_survives_restarts_and_an_empty_redis(
    make_settings: Callable[..., Settings], tmp_path: Path, redis_url: str
) -> None:
    first = make_settings(api_keys=KEY, data_dir=tmp_path / "one")
    with TestClient(create_app(first)) as client:
        owner = _owner(client, KEY)
    replica = make_settings(api_keys=KEY, data_dir=tmp_path / "two")
    with TestClient(create_app(replica)) as client:  # another DATA_DIR: agrees through Redis
        assert _owner(client, KEY) == owner
    secret_file = tmp_path / "one" / "owner-id-secret"
    assert oct(secret_file.stat().st_mode & 0o777) == "0o600"
    redis.Redis.from_url(redis_url).delete(OWNER_SECRET_KEY)  # Redis emptied
    with TestClient(create_app(first)) as client:  # the DATA_DIR copy seeds it again
        assert _owner(client, KEY) == owner
    assert owner == owner_of(KEY, secret_file.read_text().strip().encode())
