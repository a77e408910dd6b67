"""The personal agents as a user meets them: through POST /chat (routing, the spine's bounded
handoff) and the REST endpoints, on the real app with Redis and Postgres, without a model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from config import Settings
from main import create_app


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    settings = make_settings(personal_timezone="Europe/Berlin", api_keys="key-a,key-b")
    with TestClient(create_app(settings)) as test_client:
        yield test_client


A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}


def _line(message: str, body: dict[str, Any]) -> str:
    handoff = None
    for name in body["agents"]:
        data = body["data"].get(name) or {}
        received = data.get("handed_over")
        if received:
            handoff = received
    route = body["route"]
    head = f"user: {message}\n  routed: {route['agent']} ({route['method']}: {route['reason']})"
    if handoff:
        head += (
            f"\n  handoff: {handoff['context'].get('from')} -> {handoff['target_agent']}"
            f" (should_handoff={handoff['should_handoff']}, reason={handoff['reason']!r})"
        )
    return head + "\n  answer: " + body["answer"].replace("\n", "\n          ")


def test_a_task_handed_off_to_the_event_agent_over_chat(client: TestClient) -> None:
    transcript: list[str] = []
    session: str | None = None
    bodies = []
    for message in (
        "remind me to renew my passport next Friday at 9am",
        "please also put it on my calendar",
        "remind me to call mom tomorrow at 6pm and also put it on my calendar",
        "what's on my calendar tomorrow?",
        "anything due this week?",
    ):
        payload: dict[str, Any] = {"message": message}
        if session:
            payload["session_id"] = session
        response = client.post("/chat", json=payload, headers=A)
        assert response.status_code == 200, response.text
        body = response.json()
        session = body["session_id"]
        bodies.append(body)
        transcript.append(_line(message, body))
    print("\n" + "\n".join(transcript))
    first, follow_up, handed, calendar, due = bodies
    assert first["agent"] == "task" and first["methods"] == {"task": "interpreter"}
    # "also put it on my calendar" went straight to the event agent: "it" is the task
    assert follow_up["agent"] == "event" and follow_up["handoffs"] == 0
    assert "Renew my passport" in follow_up["answer"]
    # a compound request: the task agent creates the task and hands the rest to the event
    # agent through the spine (routed again, method handoff, bounded)
    assert handed["handoffs"] == 1 and handed["agent"] == "event"
    assert handed["route"]["method"] == "handoff"
    received = handed["data"]["event"]["handed_over"]
    assert received["target_agent"] == "event" and received["context"]["from"] == "task"
    assert received["context"]["subject"] == "Call mom"
    assert "Created task" in handed["answer"] and "Created event" in handed["answer"]
    assert calendar["agent"] == "event" and "Call mom" in calendar["answer"]
    assert due["agent"] == "task" and "Renew my passport" in due["answer"]
    tasks = client.get("/tasks", headers=A).json()["items"]
    events = client.get("/events", headers=A).json()["items"]
    assert sorted(t["title"] for t in tasks) == ["Call mom", "Renew my passport"]
    by_title = {t["title"]: t["due_at"] for t in tasks}
    assert {e["title"]: e["starts_at"] for e in events} == by_title
    # another API key sees none of it
    assert client.get("/tasks", headers=B).json()["items"] == []
    assert client.get("/events", headers=B).json()["total"] == 0
