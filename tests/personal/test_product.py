"""The personal agents as a user meets them: through POST /chat (routing, the spine's bounded
handoff) and the REST endpoints, on the real app with Redis and Postgres, without a model."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from psycopg_pool import AsyncConnectionPool

from app.operations import OperationContextDep
from config import Settings
from main import create_app
from tests.personal.support import HashEmbeddings
from tests.support.stub_openai import StubOpenAI, StubReply
from tools.personal.operations import tasks
from tools.personal.service import PersonalService

#: Two API keys, new for each test (the tests share one database; owners never see each other).
A: dict[str, str] = {}
B: dict[str, str] = {}


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    keys = [f"key-{uuid.uuid4().hex}" for _ in range(2)]
    A["Authorization"], B["Authorization"] = (f"Bearer {key}" for key in keys)
    settings = make_settings(personal_timezone="Europe/Berlin", api_keys=",".join(keys))
    with TestClient(create_app(settings)) as test_client:
        yield test_client


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
        how = "handoff" if body["handoffs"] else "carried over (no handoff needed)"
        head += (
            f"\n  {how}: {handoff['context'].get('from')} -> {handoff['target_agent']}"
            f" (should_handoff={handoff['should_handoff']}, reason={handoff['reason']!r},"
            f" subject={handoff['context'].get('subject')!r})"
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
        "show my tasks and reminders",
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


def test_rest_crud_pages_and_filters(client: TestClient) -> None:
    # a dependency's details are shown to a key only
    personal = client.get("/health", headers=A).json()["dependencies"]["personal"]
    assert personal["target"].startswith("schema personal") and personal["required"] is False
    made = client.post(
        "/tasks",
        json={"title": "File the tax return", "due_at": "2025-04-15T09:00:00+02:00",
              "priority": "high", "tags": ["money"]},
        headers=A,
    )  # fmt: skip
    assert made.status_code == 201, made.text
    task = made.json()
    assert task["status"] == "open" and task["tags"] == ["money"]
    for n in range(3):
        client.post("/tasks", json={"title": f"Chore {n}"}, headers=A)
    page = client.get("/tasks?limit=2", headers=A).json()
    assert page["total"] == 4 and len(page["items"]) == 2 and page["next_offset"] == 2
    assert client.get("/tasks?limit=2&offset=2", headers=A).json()["next_offset"] is None
    high = client.get("/tasks?min_priority=high&tag=money", headers=A).json()["items"]
    assert [t["id"] for t in high] == [task["id"]]
    done = client.patch(f"/tasks/{task['id']}", json={"status": "done"}, headers=A).json()
    assert done["status"] == "done" and done["completed_at"]
    assert client.get("/tasks?status=open", headers=A).json()["total"] == 3

    meal = client.post(
        "/meals",
        json={"eaten_at": "2025-03-12T08:00:00+01:00", "meal_type": "breakfast",
              "description": "oatmeal with banana", "calories": 350},
        headers=A,
    )  # fmt: skip
    assert meal.status_code == 201, meal.text
    meal_id = meal.json()["id"]
    light = client.get("/meals?max_calories=400&meal_type=breakfast", headers=A).json()
    assert [m["id"] for m in light["items"]] == [meal_id]
    assert (
        client.patch(f"/meals/{meal_id}", json={"calories": 380}, headers=A).json()["calories"]
        == 380
    )

    event = client.post(
        "/events?tz=Europe/Berlin",
        json={"title": "Lunch with Sam", "starts_at": "2025-03-13T12:30:00+01:00",
              "location": "Rosa's", "attendees": ["Sam"]},
        headers=A,
    )  # fmt: skip
    assert event.status_code == 201, event.text
    body = event.json()
    assert body["ends_at"] == "2025-03-13T13:30:00+01:00" and body["tz"] == "Europe/Berlin"
    assert client.get("/events?attendee=sam", headers=A).json()["total"] == 1
    assert client.delete(f"/events/{body['id']}", headers=A).status_code == 204
    assert client.get(f"/events/{body['id']}", headers=A).status_code == 404


def test_rest_refuses_bad_input(client: TestClient) -> None:
    cases = [
        ("/tasks", {"title": "x", "owner": "someone-else"}),  # unknown field
        ("/tasks", {"title": ""}),
        ("/tasks", {"title": "x" * 201}),
        ("/tasks", {"title": "x", "due_at": "2025-03-12T09:00:00"}),  # no offset
        (
            "/meals",
            {"eaten_at": "2025-03-12T08:00:00Z", "meal_type": "brunch", "description": "eggs"},
        ),  # fmt: skip
        (
            "/events",
            {"title": "x", "starts_at": "2025-03-12T10:00:00Z", "ends_at": "2025-03-12T09:00:00Z"},
        ),  # fmt: skip
        ("/tasks", {"title": "nul \u0000 byte"}),
    ]
    for path, body in cases:
        response = client.post(path, json=body, headers=A)
        assert response.status_code == 422, (path, body, response.text)
        assert response.json()["error"]["message"]
    assert client.post("/tasks?tz=Mars/Olympus", json={"title": "x"}, headers=A).status_code == 422
    assert client.get("/tasks?limit=0", headers=A).status_code == 422
    assert client.get("/tasks?limit=500", headers=A).status_code == 422  # > MAX_PAGE_SIZE
    assert client.get("/tasks?due_from=2025-03-12T09:00:00", headers=A).status_code == 422
    assert client.get("/tasks?q=%00", headers=A).status_code in (200, 422)
    assert client.get(f"/tasks/{2**63}", headers=A).status_code == 422


def test_users_cannot_see_or_change_each_others_rows(client: TestClient) -> None:
    mine = client.post("/tasks", json={"title": "Secret plan"}, headers=A).json()
    meal = client.post(
        "/meals",
        json={"eaten_at": "2025-03-12T08:00:00Z", "meal_type": "snack", "description": "apple"},
        headers=A,
    ).json()
    event = client.post(
        "/events", json={"title": "Doctor", "starts_at": "2025-03-12T10:00:00Z"}, headers=A
    ).json()
    for path, item, change in (
        ("/tasks", mine, {"title": "Stolen"}),
        ("/meals", meal, {"description": "Stolen"}),
        ("/events", event, {"title": "Stolen"}),
    ):
        assert client.get(path, headers=B).json()["total"] == 0
        url = f"{path}/{item['id']}"
        assert client.get(url, headers=B).status_code == 404
        assert client.patch(url, json=change, headers=B).status_code == 404
        assert client.delete(url, headers=B).status_code == 404
        kept = client.get(url, headers=A)
        assert kept.status_code == 200 and "Stolen" not in kept.text
    # the other key's chat cannot reach them either
    answer = client.post(
        "/chat", json={"message": f"mark task #{mine['id']} done"}, headers=B
    ).json()
    assert answer["agent"] == "task" and "Not found" in answer["answer"]
    assert client.get(f"/tasks/{mine['id']}", headers=A).json()["status"] == "open"


def test_without_pgvector_items_serve_and_search_is_503_naming_the_fix(
    caplog: pytest.LogCaptureFixture, client: TestClient
) -> None:
    """The machine's Postgres 15 has no pgvector: the component starts with one warning naming
    the fix, /health says semantic search is off (degraded, not required: the process stays
    healthy), CRUD and text filters serve, and a search answers 503 with the fix."""
    warned = [
        r.getMessage()
        for r in caplog.get_records("setup")
        if r.name == "app.components.personal" and r.levelno == logging.WARNING
    ]
    assert len(warned) == 1 and "pgvector" in warned[0] and "DATABASE_URL" in warned[0], warned
    health = client.get("/health", headers=A).json()
    assert health["status"] == "ok"
    personal = health["dependencies"]["personal"]
    assert personal["status"] == "degraded" and personal["required"] is False
    assert personal["target"] == "schema personal, no vectors"
    assert personal["error"].startswith("Semantic search of tasks, meals and events is off")
    assert "pgvector" in personal["error"] and "DATABASE_URL" in personal["error"]
    made = client.post("/tasks", json={"title": "File the tax return"}, headers=A)
    assert made.status_code == 201, made.text
    client.post("/tasks", json={"title": "Buy flowers"}, headers=A)
    found = client.get("/tasks", params={"q": "tax"}, headers=A).json()
    assert [t["title"] for t in found["items"]] == ["File the tax return"]
    changed = client.patch(f"/tasks/{made.json()['id']}", json={"status": "done"}, headers=A)
    assert changed.status_code == 200 and changed.json()["status"] == "done"

    # no REST route searches yet (the agents' tools do): one that calls the operation as the
    # personal routes do shows what the app answers
    async def search(ctx: OperationContextDep, q: str) -> Any:
        return await tasks.search_tasks(ctx, {"query": q})

    client.app.get("/test/search-tasks")(search)  # type: ignore[attr-defined]
    response = client.get("/test/search-tasks", params={"q": "taxes"}, headers=A)
    assert response.status_code == 503, response.text
    message = response.json()["error"]["message"]
    assert message.startswith("Semantic search of tasks, meals and events is off"), message
    assert "pgvector" in message and "DATABASE_URL" in message
    assert client.delete(f"/tasks/{made.json()['id']}", headers=A).status_code == 204


def test_postgres_down_is_503_naming_it(client: TestClient) -> None:
    services = client.app.state.services  # type: ignore[attr-defined]
    kept = services.agents.engine(PersonalService)
    dead = AsyncConnectionPool(
        "postgresql://postgres@127.0.0.1:1/none", min_size=0, max_size=1, open=False, timeout=0.5
    )
    client.portal.call(dead.open)  # type: ignore[union-attr]
    services.agents.provide(PersonalService(dead, HashEmbeddings()))
    try:
        for method, path in (("GET", "/tasks"), ("GET", "/meals/1"), ("DELETE", "/events/1")):
            response = client.request(method, path, headers=A)
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["dependency"] == "postgres" and "Postgres" in error["message"]
        response = client.post("/tasks", json={"title": "x"}, headers=A)
        assert response.status_code == 503
    finally:
        services.agents.provide(kept)
        client.portal.call(dead.close)  # type: ignore[union-attr]


def test_with_a_model_the_transfer_tool_hands_off_through_the_spine(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    """The task agent's model creates the task and calls transfer_to_event; the spine routes
    the turn to the event agent, whose model creates the event (stub server, scripted)."""

    def respond(request: dict[str, Any]) -> StubReply:
        system = "\n".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")
        last_user = max(i for i, m in enumerate(request["messages"]) if m["role"] == "user")
        step = sum(1 for m in request["messages"][last_user:] if m["role"] == "assistant")
        if "You are the task agent" in system:
            replies = [
                StubReply(
                    tool_calls=[("create_task", {"title": "Call mom", "due": "tomorrow 6pm"})]
                ),
                StubReply(tool_calls=[("transfer_to_event", {"request": "put it on my calendar"})]),
            ]
        elif "You are the event agent" in system:
            assert "Call mom" in system  # the handed-over subject is in its context section
            replies = [
                StubReply(
                    tool_calls=[("create_event", {"title": "Call mom", "starts": "tomorrow 6pm"})]
                ),
                StubReply(content="It is on your calendar."),
            ]
        else:
            replies = [StubReply(content="chat")]
        return replies[min(step, len(replies) - 1)]

    stub_openai.responder = respond
    key = f"key-{uuid.uuid4().hex}"
    settings = stub_settings(api_keys=key, llm_cache_ttl_seconds=0)
    headers = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(settings)) as llm_client:
        body = llm_client.post(
            "/chat",
            json={"message": "remind me to call mom tomorrow at 6pm and put it on my calendar",
                  "options": {"personal_timezone": "Europe/Berlin"}},
            headers=headers,
        ).json()  # fmt: skip
        assert body["agent"] == "event" and body["handoffs"] == 1, body
        assert body["methods"] == {"event": "llm"}
        received = body["data"]["event"]["handed_over"]
        assert (
            received["context"]["from"] == "task" and received["context"]["subject"] == "Call mom"
        )
        assert body["answer"].endswith("It is on your calendar.")
        [task] = llm_client.get("/tasks", headers=headers).json()["items"]
        [event] = llm_client.get("/events", headers=headers).json()["items"]
        assert task["title"] == event["title"] == "Call mom"
        assert task["due_at"] == event["starts_at"] and task["tz"] == "Europe/Berlin"
