"""Webhooks against hostile receivers and hostile DNS (issue 22, items 2 and 3).

Real components: real HTTP servers on loopback (dripping, endless, ordinary), real httpx
clients, a real API process with real Redis and Postgres. DNS is the one thing simulated: the
resolver is a constructor parameter of the address guard, and the rebinding tests pass one that
answers a public address first and 127.0.0.1 afterwards. Every wait is for an event, with a
generous bound.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from app.runs.webhooks import WebhookDispatcher, check_webhook_url, guard_of, send_webhook
from config import Settings
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer, free_port
from tests.support.stub_openai import StubOpenAI
from tests.support.webhooks import HostileReceiver, tls_pair
from tools.personal.webhooks import WebhookConfig, WebhookEvent, WebhookSender
from tools.webhooks import WebhookGuard, WebhookRejected, address_problem, post_capped

PUBLIC = "93.184.215.14"  # a global address (never connected to: the tests refuse or rebind)
KEY = "key-webhooks-0123456789"
#: Generous bound for anything that should take seconds (the machine is shared and slow).
BOUND = 90.0
#: How long a rules-only analysis of one tiny file may take while webhooks drip: seconds on a
#: quiet machine; before the fix it stayed queued for over a minute.
ANALYSIS_BOUND = 45.0


def webhook_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "webhook_attempts": 1,
        "webhook_timeout_seconds": 3.0,
        "webhook_allowed_hosts": "127.0.0.1",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


class RebindingResolver:
    """DNS that answers ``first`` to the first question and ``then`` to every later one."""

    def __init__(self, first: list[str], then: list[str]) -> None:
        self.first, self.then, self.calls = first, then, 0

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.first if self.calls == 1 else self.then


@pytest.fixture
def receiver() -> Iterator[HostileReceiver]:
    server = HostileReceiver(mode="status").start()
    yield server
    server.stop()


@pytest.fixture
def dripper() -> Iterator[HostileReceiver]:
    server = HostileReceiver(mode="drip").start()
    yield server
    server.stop()


# --- item 3: the address is checked where the connection is made -----------------------------
async def test_rebinding_to_loopback_never_reaches_it(receiver: HostileReceiver) -> None:
    settings = Settings(_env_file=None, webhook_attempts=3)  # no allowed hosts: the default
    resolver = RebindingResolver([PUBLIC], ["127.0.0.1"])
    guard = guard_of(settings, resolver)
    url = receiver.url("hooks.example.com")
    await check_webhook_url(url, settings, guard)  # at submission: public, accepted
    assert not await send_webhook(url, {"run_id": "r"}, settings, guard)
    assert resolver.calls == 2  # resolved again where it connects, and refused there
    assert receiver.connections == 0


async def test_rebinding_refused_for_personal_webhooks(receiver: HostileReceiver) -> None:
    resolver = RebindingResolver([PUBLIC], ["127.0.0.1"])
    url = receiver.url("n8n.example.com")
    await WebhookGuard(resolver=resolver).check_url(url)
    hooks = WebhookSender(
        WebhookConfig(urls=(url,), max_attempts=3, backoff_seconds=0.01), resolver=resolver
    )
    [delivery] = await hooks.send(WebhookEvent(type="reminder.due", user_id="alice"))
    await hooks.close()
    assert not delivery.delivered and delivery.attempts == 1  # refused: final, not retried
    error = delivery.error or ""
    assert "non-public" in error and "WEBHOOK_ALLOWED_HOSTS" in error
    assert receiver.connections == 0


async def test_one_private_address_among_public_ones_is_refused(
    receiver: HostileReceiver,
) -> None:
    settings = Settings(_env_file=None)
    resolver = RebindingResolver([PUBLIC, "169.254.169.254"], [PUBLIC, "127.0.0.1"])
    guard = guard_of(settings, resolver)
    with pytest.raises(WebhookRejected, match=r"non-public address \(169\.254\.169\.254\)"):
        await check_webhook_url(receiver.url("meta.example.com"), settings, guard)
    assert not await send_webhook(receiver.url("meta.example.com"), {}, settings, guard)
    assert receiver.connections == 0


def test_the_peer_must_be_the_vetted_address() -> None:
    guard = WebhookGuard()
    vetted = ipaddress.ip_address(PUBLIC)
    guard.check_peer("hooks.example.com", vetted, (PUBLIC, 443))
    with pytest.raises(WebhookRejected, match="connected to 127.0.0.1"):
        guard.check_peer("hooks.example.com", vetted, ("127.0.0.1", 443))
    with pytest.raises(WebhookRejected, match="non-public"):  # even if it was "vetted"
        guard.check_peer("hooks.example.com", ipaddress.ip_address("10.0.0.1"), ("10.0.0.1", 80))


async def test_every_retry_resolves_and_connects_again() -> None:
    failing = HostileReceiver(mode="status", status=503).start()
    try:
        resolver = RebindingResolver(["127.0.0.1"], ["127.0.0.1"])
        settings = webhook_settings(webhook_attempts=3, webhook_allowed_hosts="hooks.test")
        ok = await send_webhook(
            failing.url("hooks.test"), {}, settings, guard_of(settings, resolver)
        )
        assert not ok
        assert (resolver.calls, failing.connections, failing.requests) == (3, 3, 3)
    finally:
        failing.stop()


async def test_the_pinned_connection_keeps_the_host_header_and_tls_name(tmp_path: Path) -> None:
    server_tls, client_tls = tls_pair("hooks.test", tmp_path)
    secure = HostileReceiver(mode="status", tls=server_tls).start()
    try:
        resolver = RebindingResolver(["127.0.0.1"], ["127.0.0.1"])
        guard = WebhookGuard(["hooks.test", "other.test"], resolver, ssl_context=client_tls)
        async with guard.client(timeout_seconds=BOUND) as client:
            url = f"https://hooks.test:{secure.port}/x"
            status = await post_capped(
                client, url, b"{}", {}, deadline_seconds=BOUND, max_response_bytes=1024
            )
            assert status == 200
            assert secure.sni == ["hooks.test"] and secure.hosts == [f"hooks.test:{secure.port}"]
            # the certificate is checked against the URL's name, not the pinned address
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED|match"):
                await post_capped(
                    client,
                    f"https://other.test:{secure.port}/x",
                    b"{}",
                    {},
                    deadline_seconds=BOUND,
                    max_response_bytes=1024,
                )
        assert secure.requests == 1
    finally:
        secure.stop()


IPV4 = st.integers(min_value=0, max_value=2**32 - 1)


def _refused(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is not None, address


@hypothesis_settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(IPV4)
def test_ipv4_embedding_ipv6_forms_are_refused(value: int) -> None:
    four = ipaddress.IPv4Address(value)
    _refused(str(ipaddress.IPv6Address((0xFFFF << 32) | value)))  # IPv4-mapped
    _refused(str(ipaddress.IPv6Address((0xFFFF << 48) | value)))  # IPv4-translated
    _refused(str(ipaddress.IPv6Address(value)))  # IPv4-compatible
    _refused(f"64:ff9b::{four}")  # NAT64
    _refused(str(ipaddress.IPv6Address((0x64FF9B0001 << 80) | value)))  # local-use NAT64
    _refused(str(ipaddress.IPv6Address((0x2002 << 112) | (value << 80) | 1)))  # 6to4
    # Teredo: the server's IPv4 in bits 64..95, the client's (obfuscated) in the last 32
    _refused(str(ipaddress.IPv6Address((0x20010000 << 96) | (value << 64) | (~value & 0xFFFFFFFF))))


async def test_embedded_forms_of_a_public_ipv4_are_refused_by_the_guard() -> None:
    for address in ("64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1", "2001:0:808:808::1"):
        guard = WebhookGuard(resolver=RebindingResolver([address], [address]))
        with pytest.raises(WebhookRejected, match="embedding an IPv4 address|non-public"):
            await guard.check_url("https://hooks.example.com/x")
        with pytest.raises(WebhookRejected):  # the same when it is the URL's literal host
            await WebhookGuard().check_url(f"https://[{address}]/x")
    await WebhookGuard(resolver=RebindingResolver(["2606:4700::1"], [])).check_url("http://a.b/")


# --- item 2: bounded delivery -------------------------------------------------------------
async def test_a_dripping_receiver_is_cut_at_the_total_deadline(dripper: HostileReceiver) -> None:
    settings = webhook_settings(webhook_timeout_seconds=3.0)
    async with asyncio.timeout(BOUND):  # per-read timeouts alone would never end this
        assert not await send_webhook(dripper.url(), {"run_id": "r"}, settings)
    hooks = WebhookSender(
        WebhookConfig(
            urls=(dripper.url(),), timeout_seconds=3.0, max_attempts=1, allowed_hosts=("127.0.0.1",)
        )  # fmt: skip
    )
    async with asyncio.timeout(BOUND):
        [delivery] = await hooks.send(WebhookEvent(type="daily.summary", user_id="alice"))
    await hooks.close()
    assert not delivery.delivered and "no answer within 3.0 s" in (delivery.error or "")


async def test_an_endless_answer_is_read_up_to_the_cap() -> None:
    endless = HostileReceiver(mode="endless").start()
    try:
        settings = webhook_settings(webhook_timeout_seconds=120.0, webhook_max_response_bytes=1024)
        async with asyncio.timeout(BOUND):  # reading the whole answer would never end
            assert await send_webhook(endless.url(), {"run_id": "r"}, settings)
        await asyncio.to_thread(endless.wait_for, "closed", 1)  # we hung up, mid-answer
    finally:
        endless.stop()


async def test_dispatcher_drops_when_full_and_stops_cleanly(dripper: HostileReceiver) -> None:
    settings = webhook_settings(
        webhook_queue_size=1,
        webhook_concurrency=1,
        webhook_timeout_seconds=120.0,
        webhook_shutdown_grace_seconds=0.5,
    )
    dispatcher = WebhookDispatcher(settings)
    assert dispatcher.submit(dripper.url(), {"n": 1})
    assert not dispatcher.submit(dripper.url(), {"n": 2})  # full: dropped, not awaited
    assert dispatcher.dropped == 1
    dispatcher.start()
    await asyncio.to_thread(dripper.wait_for, "requests", 1)  # the sender is stuck on it
    async with asyncio.timeout(BOUND):  # the 120 s deadline does not hold the shutdown
        await dispatcher.stop()
    assert not dispatcher.submit(dripper.url(), {"n": 3})


async def test_dispatcher_drains_the_queue_at_shutdown(receiver: HostileReceiver) -> None:
    dispatcher = WebhookDispatcher(webhook_settings(webhook_shutdown_grace_seconds=60.0))
    for n in range(3):
        assert dispatcher.submit(receiver.url(), {"n": n})
    dispatcher.start()
    await dispatcher.stop()
    assert (dispatcher.sent, receiver.requests) == (3, 3)


# --- item 2 end to end: dripping webhooks do not stall a real server's background work ------
@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[ApiProcess]:
    folder = tmp_path_factory.mktemp("webhooks-api")
    redis_server = RedisServer(port=free_port(), workdir=folder)
    redis_server.start()
    stub = StubOpenAI().start()
    stub.responder = lambda request: "done"
    env = {
        "REDIS_URL": redis_server.url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder),
        "API_KEYS": KEY,
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": stub.base_url,
        "LLM_CACHE_TTL_SECONDS": "0",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "RUN_HEARTBEAT_SECONDS": "0.3",
        "RUN_CLAIM_TIMEOUT_SECONDS": "3",
        "RUN_WORKER_CONCURRENCY": "2",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",  # the dripping receiver is on loopback
        "WEBHOOK_TIMEOUT_SECONDS": "120",  # the total deadline is not what saves the workers
        "WEBHOOK_SHUTDOWN_GRACE_SECONDS": "1",
        "HF_HUB_OFFLINE": "1",
    }
    process = ApiProcess(env, log_path=Path(folder) / "api.log", module="tests.agent_server.serve")
    try:
        yield process.start(timeout=180)
    finally:
        process.stop()
        stub.stop()
        redis_server.stop()


def _background_run(client: httpx.Client, webhook: str | None) -> tuple[str, str]:
    thread_id = client.post("/threads", json={}).raise_for_status().json()["thread_id"]
    body: dict[str, Any] = {
        "assistant_id": "chat",
        "input": {"messages": [{"type": "human", "content": "hi"}], "target_agent": "chat"},
    }
    if webhook:
        body["webhook"] = webhook
    run = client.post(f"/threads/{thread_id}/runs", json=body).raise_for_status().json()
    return thread_id, run["run_id"]


def _wait_done(client: httpx.Client, runs: list[tuple[str, str]], bound: float) -> None:
    deadline = time.monotonic() + bound
    pending = list(runs)
    while pending:
        thread_id, run_id = pending[0]
        status = client.get(f"/threads/{thread_id}/runs/{run_id}").json()["status"]
        if status == "success":
            pending.pop(0)
            continue
        assert status in ("pending", "running"), status
        assert time.monotonic() < deadline, f"run {run_id} still {status} after {bound} s"
        time.sleep(0.1)


@pytest.mark.slow
def test_dripping_webhooks_do_not_stall_background_runs(
    api: ApiProcess, dripper: HostileReceiver
) -> None:
    headers = {"X-API-Key": KEY}
    with httpx.Client(base_url=api.url, headers=headers, timeout=30) as client:
        # twice as many dripping webhooks as run slots: before the fix, each held its slot
        hooked = [_background_run(client, dripper.url()) for _ in range(4)]
        _wait_done(client, hooked, BOUND)
        dripper.wait_for("requests", 4, timeout=BOUND)  # all four receivers are dripping now
        later = [_background_run(client, None) for _ in range(2)]
        _wait_done(client, later, BOUND)
        (thread_id, run_id) = later[0]
        state = client.get(f"/threads/{thread_id}/state").raise_for_status().json()
        assert json.dumps(state["values"]).count("done") >= 1


@pytest.mark.slow
def test_dripping_webhooks_do_not_stall_a_background_analysis(
    api: ApiProcess, dripper: HostileReceiver
) -> None:
    headers = {"X-API-Key": KEY}
    with httpx.Client(base_url=api.url, headers=headers, timeout=30) as client:
        # the scenario: four runs whose webhooks drip (twice the run slots), then a
        # background analysis of one tiny file, which stayed `queued` for over a minute
        hooked = [_background_run(client, dripper.url()) for _ in range(4)]
        _wait_done(client, hooked, BOUND)
        dripper.wait_for("requests", 4, timeout=BOUND)  # every receiver is dripping now
        submitted = client.post(
            "/analyses",
            json={
                "files": [
                    {"path": "tests/test_tiny.py", "content": "def test_a():\n    assert 1\n"}
                ],
                "mode": "rules-only",
            },
        )
        assert submitted.status_code == 202, submitted.text
        analysis = submitted.json()["thread_id"]
        deadline = time.monotonic() + ANALYSIS_BOUND
        while True:
            status = client.get(f"/analyses/{analysis}").raise_for_status().json()["status"]
            if status == "done":
                break
            assert status in ("queued", "running"), status
            assert time.monotonic() < deadline, (
                f"the analysis is still {status} {ANALYSIS_BOUND} s after it was submitted"
            )
            time.sleep(0.1)
        assert dripper.requests >= 4
