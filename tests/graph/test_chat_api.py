"""The chat REST API on the real Redis saver: turns, sessions, streaming, ownership, bad input."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from config import Settings
from main import create_app
from tests.support.stub_openai import StubOpenAI


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture
def llm_client(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> Iterator[TestClient]:
    settings = stub_settings()
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def _sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.split("\n") if ": " in line and line[0] != ":"
        )
        if "event" in fields:
            events.append((fields["event"], json.loads(fields.get("data", "null"))))
    return events


def test_a_conversation_over_rest(client: TestClient) -> None:
    first = client.post("/chat", json={"message": "hello, who are you?"})
    assert first.status_code == 200
    body = first.json()
    session = body["session_id"]
    assert body["agent"] == "chat" and body["turn"] == 1
    assert body["route"]["method"] in {"keyword", "semantic", "llm", "default"}
    assert 0.0 <= body["route"]["confidence"] <= 1.0
    assert "No language model is configured" in body["answer"]

    second = client.post("/chat", json={"message": "thanks!", "session_id": session}).json()
    assert second["turn"] == 2 and second["session_id"] == session

    summary = client.get(f"/session/{session}").json()
    assert summary["turns"] == 2 and summary["agents_used"] == ["chat"]
    assert [m["role"] for m in summary["last_messages"]] == ["user", "assistant"] * 2
    assert summary["last_messages"][2]["content"] == "thanks!"
    assert summary["created_at"] <= summary["updated_at"] and summary["running"] is False

    history = client.get(f"/session/{session}/history").json()["checkpoints"]
    steps = [c["step"] for c in history]
    assert steps == sorted(steps, reverse=True)
    written = [node for c in history for node in c["nodes"]]
    for node in ("ingest", "chat"):
        assert written.count(node) == 2
    # ingest routes too, a lone agent ends the turn in its own step: four checkpoints a turn
    assert not {"route", "detect_handoff", "finalize"} & set(written)
    assert client.get(f"/session/{session}/history?limit=3").json()["checkpoints"] == history[:3]


def test_delete_removes_every_key_of_the_session(
    client: TestClient, redis_client: redis.Redis
) -> None:
    session = client.post("/chat", json={"message": "hello there"}).json()["session_id"]
    assert any(session.encode() in key for key in redis_client.keys("*"))
    assert client.delete(f"/session/{session}").status_code == 204
    assert not [key for key in redis_client.keys("*") if session.encode() in key]
    assert client.get(f"/session/{session}").status_code == 404
    assert client.get(f"/session/{session}/history").status_code == 404
    assert client.delete(f"/session/{session}").status_code == 404
    gone = client.post("/chat", json={"message": "hello?", "session_id": session})
    assert gone.status_code == 404


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ({"message": ""}, "message"),
        ({"message": "   \n "}, "more than whitespace"),
        ({"message": "x" * 20_001}, "MAX_MESSAGE_CHARS"),
        ({"message": "hi", "session_id": "../../etc"}, "session_id"),
        ({"message": "hi", "session_id": "short"}, "session_id"),
        ({"message": "hi", "agent": "no_such_agent"}, "Unknown agent"),
        ({"message": "hi", "extra": 1}, "extra"),
        ({"message": "hi", "user_id": "a b"}, "user_id"),
        ({"message": 42}, "message"),
        ({}, "message"),
    ],
)
def test_bad_chat_input_is_a_422_with_a_message(
    client: TestClient, payload: dict[str, Any], needle: str
) -> None:
    response = client.post("/chat", json=payload)
    assert response.status_code == 422
    assert needle in response.json()["error"]["message"]


def test_malformed_json_is_a_422(client: TestClient) -> None:
    response = client.post(
        "/chat", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422 and "error" in response.json()


def test_unknown_and_malformed_session_ids(client: TestClient) -> None:
    assert client.get("/session/0123456789abcdef").status_code == 404
    assert (
        client.post("/chat", json={"message": "hi", "session_id": "0123456789abcdef"}).json()[
            "error"
        ]["status"]
        == 404
    )
    malformed = client.get("/session/bad id!")
    assert malformed.status_code == 422 and "session_id" in malformed.json()["error"]["message"]


def test_sessions_belong_to_the_key_that_created_them(
    make_settings: Callable[..., Settings],
) -> None:
    with TestClient(create_app(make_settings(api_keys="key-a,key-b"))) as client:
        a = {"X-API-Key": "key-a"}
        b = {"X-API-Key": "key-b"}
        session = client.post("/chat", json={"message": "hello"}, headers=a).json()["session_id"]
        assert client.get(f"/session/{session}", headers=a).status_code == 200
        assert client.get(f"/session/{session}", headers=b).status_code == 404
        assert client.get(f"/session/{session}/history", headers=b).status_code == 404
        assert client.delete(f"/session/{session}", headers=b).status_code == 404
        hijack = client.post("/chat", json={"message": "hi", "session_id": session}, headers=b)
        assert hijack.status_code == 404
        assert client.post("/chat", json={"message": "hi"}).status_code == 401
        assert client.get(f"/session/{session}", headers=a).json()["turns"] == 1


def test_a_second_message_while_a_turn_runs_gets_409(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    session = llm_client.post("/chat", json={"message": "hello"}).json()["session_id"]
    stub_openai.latency = 1.5
    results: dict[str, Any] = {}

    def slow_turn() -> None:
        results["first"] = llm_client.post(
            "/chat", json={"message": "tell me a long story", "session_id": session}
        )

    worker = threading.Thread(target=slow_turn)
    worker.start()
    time.sleep(0.6)
    busy = llm_client.post("/chat", json={"message": "and another", "session_id": session})
    worker.join()
    assert busy.status_code == 409 and "still answering" in busy.json()["error"]["message"]
    assert results["first"].status_code == 200
    summary = llm_client.get(f"/session/{session}").json()
    assert summary["turns"] == 2  # the refused message never entered the thread
    assert all(m["content"] != "and another" for m in summary["last_messages"])


def test_llm_answers_see_the_whole_conversation(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    first = llm_client.post("/chat", json={"message": "hello, my name is Ada"}).json()
    assert first["answer"].startswith("stub answer:") and first["methods"] == {"chat": "llm"}
    llm_client.post(
        "/chat", json={"message": "thanks, what is my name?", "session_id": first["session_id"]}
    )
    sent = [m.get("content") for m in stub_openai.requests[-1]["messages"]]
    assert "hello, my name is Ada" in sent and first["answer"] in sent


def test_stream_sends_route_progress_tokens_and_answer(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = lambda request: "one two three four"
    response = llm_client.post("/chat/stream", json={"message": "hello, who are you?"})
    assert response.status_code == 200
    events = _sse(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "session" and kinds[-1] == "answer"
    route = next(data for kind, data in events if kind == "route")
    assert route["agent"] == "chat"
    nodes = [data["node"] for kind, data in events if kind == "node" and not data["agent"]]
    assert nodes == ["ingest", "chat"]  # ingest routed; chat answered alone: it ended the turn
    stages = [(d["agent"], d["node"]) for kind, d in events if kind == "node" and d["agent"]]
    assert stages == [("chat", "chat")]  # the agent's own stages, named with their agent
    tokens = "".join(data["text"] for kind, data in events if kind == "token")
    assert tokens == "one two three four"
    answer = events[-1][1]
    assert answer["answer"] == "one two three four" and answer["turn"] == 1


def test_a_client_that_disconnects_does_not_corrupt_the_session(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    session = llm_client.post("/chat", json={"message": "hello"}).json()["session_id"]
    stub_openai.latency = 1.0
    with llm_client.stream(
        "POST", "/chat/stream", json={"message": "hello again, slowly", "session_id": session}
    ) as response:
        for line in response.iter_lines():
            if line.startswith("event: route"):
                break  # hang up mid-turn
    deadline = time.monotonic() + 15
    while llm_client.get(f"/session/{session}").json()["running"]:
        assert time.monotonic() < deadline, "the abandoned turn never completed"
        time.sleep(0.1)
    assert llm_client.get(f"/session/{session}").json()["turns"] == 2
    stub_openai.latency = 0.0
    third = llm_client.post("/chat", json={"message": "thanks, bye", "session_id": session})
    assert third.status_code == 200 and third.json()["turn"] == 3
    contents = [m["content"] for m in llm_client.get(f"/session/{session}").json()["last_messages"]]
    assert contents[0::2] == ["hello", "hello again, slowly", "thanks, bye"]


def test_stream_reports_bad_input_before_streaming(client: TestClient) -> None:
    response = client.post("/chat/stream", json={"message": ""})
    assert response.status_code == 422


def test_a_failing_model_is_a_502_and_the_session_keeps_its_last_turn(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    settings = stub_settings(llm_max_retries=1)
    with TestClient(create_app(settings)) as client:
        session = client.post("/chat", json={"message": "hello"}).json()["session_id"]
        stub_openai.fail_next(500, 500)
        failed = client.post("/chat", json={"message": "hello again", "session_id": session})
        assert failed.status_code == 502, failed.text
        assert "language model provider failed" in failed.json()["error"]["message"]
        assert client.get(f"/session/{session}").json()["turns"] == 1
        retry = client.post("/chat", json={"message": "hello again", "session_id": session})
        assert retry.status_code == 200 and retry.json()["turn"] == 2


def test_the_streamed_answer_and_the_saved_answer_are_one_message(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    """A client that showed the streamed tokens finds the same message id in the thread."""
    stub_openai.responder = lambda request: "one two"
    response = llm_client.post("/chat/stream", json={"message": "hello, who are you?"})
    events = _sse(response.text)
    session = events[0][1]["session_id"]
    last = llm_client.get(f"/session/{session}").json()["last_messages"][-1]
    assert last["role"] == "assistant" and last["content"] == "one two"
    streamed = {data["message_id"] for kind, data in events if kind == "token"}
    assert streamed == {last["id"]}
