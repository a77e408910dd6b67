"""Webhook delivery against a local HTTP receiver: signed JSON, retries with backoff, dead
letters in Redis, and the agents' webhook tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial

import pytest
import redis.asyncio as aredis

from agents.personal.context import PersonalContext
from agents.personal.spec import run_personal_agent
from tests.personal.receiver import Receiver
from tests.personal.support import NOW
from tests.support.servers import free_port
from tools.personal.models import EventCreate, TaskCreate
from tools.personal.service import PersonalService
from tools.personal.webhooks import (
    SIGNATURE_HEADER,
    WebhookConfig,
    WebhookEvent,
    WebhookSender,
    verify,
)

run_event_agent = partial(run_personal_agent, "event")
run_task_agent = partial(run_personal_agent, "task")

SECRET = "s3cret-for-tests"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def sender(
    urls: list[str], redis_client: aredis.Redis | None, **overrides: object
) -> WebhookSender:
    values: dict[str, object] = {
        "urls": tuple(urls),
        "secret": SECRET,
        "max_attempts": 3,
        "backoff_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "timeout_seconds": 2.0,
        "allowed_hosts": ("127.0.0.1",),  # the local receiver (WEBHOOK_ALLOWED_HOSTS)
    }
    values.update(overrides)
    return WebhookSender(WebhookConfig(**values), redis_client)  # type: ignore[arg-type]


async def test_delivery_is_signed_json(receiver: Receiver, aredis_client: aredis.Redis) -> None:
    hooks = sender([receiver.url], aredis_client)
    event = WebhookEvent(type="reminder.due", user_id="alice", data={"title": "Pay rent"})
    [delivery] = await hooks.send(event)
    await hooks.close()
    assert delivery.delivered and delivery.attempts == 1 and delivery.status_code == 200
    [got] = receiver.received
    assert got.path == "/webhook/personal"
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Switchyard-Event"] == "reminder.due"
    assert got.headers["X-Switchyard-Delivery"] == event.id
    assert verify(SECRET, got.body, got.headers[SIGNATURE_HEADER])
    assert not verify("another-secret", got.body, got.headers[SIGNATURE_HEADER])
    body = json.loads(got.body)
    assert body["type"] == "reminder.due" and body["data"] == {"title": "Pay rent"}
    assert await hooks.dead_letters() == []


async def test_retries_then_delivers(receiver: Receiver, aredis_client: aredis.Redis) -> None:
    receiver.statuses = [503, 429]
    hooks = sender([receiver.url], aredis_client)
    [delivery] = await hooks.send(WebhookEvent(type="daily.summary", user_id="alice"))
    await hooks.close()
    assert delivery.delivered and delivery.attempts == 3
    ids = {r.headers["X-Switchyard-Delivery"] for r in receiver.received}
    assert len(receiver.received) == 3 and len(ids) == 1  # one event id across retries
    assert await hooks.dead_letters() == []


async def test_keeps_failing_goes_to_dead_letters(
    receiver: Receiver, aredis_client: aredis.Redis
) -> None:
    receiver.statuses = [500, 500, 500]
    down = f"http://user:pw@127.0.0.1:{free_port()}/hook"  # nothing listens there
    hooks = sender([receiver.url, down], aredis_client)
    event = WebhookEvent(type="event.created", user_id="alice", data={"title": "Dentist"})
    results = await hooks.send(event)
    assert [(d.delivered, d.attempts, d.dead_lettered) for d in results] == [
        (False, 3, True),
        (False, 3, True),
    ]
    assert results[0].status_code == 500 and "ConnectError" in (results[1].error or "")
    letters = await hooks.dead_letters()
    await hooks.close()
    assert len(letters) == 2
    assert {letter["event"]["id"] for letter in letters} == {event.id}
    assert all(letter["attempts"] == 3 for letter in letters)
    assert "pw" not in json.dumps(letters)  # the URL's password is never recorded


async def test_client_errors_are_not_retried(
    receiver: Receiver, aredis_client: aredis.Redis
) -> None:
    receiver.statuses = [410]
    hooks = sender([receiver.url], aredis_client)
    [delivery] = await hooks.send(WebhookEvent(type="reminder.due", user_id="bob"))
    await hooks.close()
    assert (delivery.delivered, delivery.attempts, delivery.status_code) == (False, 1, 410)
    assert delivery.dead_lettered and len(receiver.received) == 1


async def test_agent_webhook_tools(
    service: PersonalService, user: str, receiver: Receiver, aredis_client: aredis.Redis
) -> None:
    hooks = sender([receiver.url], aredis_client)
    ctx = PersonalContext(
        user_id=user, service=service, timezone="Europe/Berlin", now=NOW, webhooks=hooks
    )
    task = await service.create_task(user, TaskCreate(title="Pay rent"))
    reminder = await run_task_agent(f"send me a reminder for #{task.id}", context=ctx)
    assert [c.ok for c in reminder.tool_calls] == [True], reminder.answer
    event = await service.create_event(user, EventCreate(title="Dentist", starts_at=NOW))
    shown = await run_event_agent("what's on today?", context=ctx)
    announced = await run_event_agent(
        "announce the first one", context=ctx, domain_context=shown.context
    )
    assert [c.ok for c in announced.tool_calls] == [True], announced.answer
    summary = await run_task_agent("send my daily summary", context=ctx)
    assert [c.ok for c in summary.tool_calls] == [True]
    await hooks.close()
    bodies = [json.loads(r.body) for r in receiver.received]
    assert [b["type"] for b in bodies] == ["reminder.due", "event.created", "daily.summary"]
    assert bodies[0]["data"]["task"]["id"] == task.id and bodies[0]["user_id"] == user
    assert bodies[1]["data"]["event"]["id"] == event.id
    assert [t["title"] for t in bodies[2]["data"]["due"]] == []
    # Another user's task cannot be announced through the tools.
    other = PersonalContext(user_id=user + "-x", service=service, now=NOW, webhooks=hooks)
    refused = await run_task_agent(f"send me a reminder for #{task.id}", context=other)
    assert [c.ok for c in refused.tool_calls] == [False]
