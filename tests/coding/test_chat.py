"""Chat turns routed to the coding agent: without a model (pasted code checked and run, a
traceback explained) and with the stub model (the ReAct loop writes, runs and fixes the code);
the loop's tool traffic never reaches the session's conversation."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.coding.scripted_coder import ScriptedCoder, fenced
from tests.coding.test_loop import FIXED, RAISES
from tests.coding.transcript import render_transcript
from tests.support.stub_openai import StubOpenAI, StubReply

DATA_BLOCK = '```json\n{"region": ["north", "south", "east"], "amount": [1.5, 2.0, 3.5]}\n```'
ASK = (
    "Write a function `top_amount` that returns the first amount above 1.8 of a pandas "
    f"DataFrame, on this data:\n{DATA_BLOCK}"
)
TRACEBACK = """Traceback (most recent call last):
  File "report.py", line 12, in <module>
    first = df.loc[0, "amount"]
            ~~~~~~^^^^^^^^^^^^^
KeyError: 0
"""


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings())) as test_client:
        yield test_client


@pytest.fixture
def llm_client(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> Iterator[TestClient]:
    with TestClient(create_app(stub_settings(llm_cache_ttl_seconds=0))) as test_client:
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


# --- without a model -------------------------------------------------------------------------


def test_pasted_code_is_checked_and_run_without_a_model(client: TestClient) -> None:
    message = f"Why does `top_amount` fail?\n```python\n{RAISES}\n```\n{DATA_BLOCK}"
    body = client.post("/chat", json={"message": message}).json()
    assert body["agent"] == "coding" and body["methods"] == {"coding": "pasted_review"}
    answer = body["answer"]
    assert answer.startswith("Generating code needs a chat model")
    assert "Running it in the sandbox failed: KeyError" in answer and ".iloc" in answer
    result = body["data"]["coding"]
    assert result["generated_code"].strip() == RAISES.strip()
    assert result["is_code_valid"] is False and result["runtime_error"].startswith("KeyError")
    assert result["iteration_count"] == 0


def test_a_pasted_traceback_is_explained_without_a_model(client: TestClient) -> None:
    body = client.post("/chat", json={"message": f"I get this:\n{TRACEBACK}"}).json()
    assert body["agent"] == "coding"
    assert "KeyError" in body["answer"] and ".iloc" in body["answer"]
    assert body["data"]["coding"]["generated_code"] == ""


def test_a_generation_request_without_a_model_says_what_is_needed(client: TestClient) -> None:
    body = client.post(
        "/chat",
        json={"message": "Write a function that returns the total amount per region of a "
              "DataFrame"},
    ).json()  # fmt: skip
    assert body["agent"] == "coding"
    assert body["answer"].startswith("Generating code needs a chat model")
    assert "```python" in body["answer"]  # how to paste code for a check instead
    assert set(body["data"]["coding"]) >= {"generated_code", "is_code_valid"}


def test_the_option_is_validated_with_the_settings_bounds(client: TestClient) -> None:
    bad = client.post("/chat", json={"message": "hi", "options": {"coding_max_iterations": 21}})
    assert bad.status_code == 422 and "coding_max_iterations" in bad.text


# --- with the stub model ---------------------------------------------------------------------


def _coder() -> ScriptedCoder:
    """A model that says what it does, writes `top_amount` (raising first), tests, fixes."""
    start = StubReply(
        content="I will write top_amount and run it on your data.",
        tool_calls=[
            (
                "generate_code",
                {"function_name": "top_amount", "description": "the first amount above 1.8"},
            )
        ],
    )
    return ScriptedCoder(generations=[fenced(RAISES), fenced(FIXED)], first_steps=[start])


def test_a_chat_request_writes_runs_and_fixes_code(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = _coder()
    body = llm_client.post("/chat", json={"message": ASK}).json()
    assert body["agent"] == "coding" and body["methods"] == {"coding": "llm"}
    result = body["data"]["coding"]
    print("\n" + render_transcript(stub_openai.requests, result))
    assert result["is_code_valid"] is True and result["iteration_count"] == 2
    # The pasted data was the DataFrame the code ran on.
    assert result["execution_result"] == {"type": "float", "value": 2.0}
    assert "The function passed after 2 iteration(s)" in body["answer"]
    assert 'big["amount"].iloc[0]' in body["answer"]
    # The loop's tool calls stay in the agent: the session holds the message and the answer.
    summary = llm_client.get(f"/session/{body['session_id']}").json()
    assert [m["role"] for m in summary["last_messages"]] == ["user", "assistant"]


def test_the_bound_comes_from_the_run_options(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    coder = _coder()
    coder.generations = [fenced(RAISES)]
    stub_openai.responder = coder
    body = llm_client.post(
        "/chat", json={"message": ASK, "options": {"coding_max_iterations": 1}}
    ).json()
    result = body["data"]["coding"]
    assert result["iteration_count"] == 1 and coder.generation_calls == 1
    assert result["is_code_valid"] is False and "does not pass yet" in body["answer"]


def test_the_model_tokens_stream_as_the_answer(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = _coder()
    with llm_client.stream("POST", "/chat/stream", json={"message": ASK}) as response:
        events = _sse(response.read().decode())
    kinds = [kind for kind, _ in events]
    assert "route" in kinds and kinds[-1] == "answer"
    tokens = [data for kind, data in events if kind == "token"]
    assert tokens and {(t["agent"], t["node"]) for t in tokens} == {("coding", "model")}
    assert "".join(t["text"] for t in tokens) == "I will write top_amount and run it on your data."
    answer = events[-1][1]
    assert answer["data"]["coding"]["is_code_valid"] is True


def test_with_a_model_a_pasted_traceback_is_explained_by_the_model(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = _coder()
    body = llm_client.post("/chat", json={"message": f"I get this:\n{TRACEBACK}"}).json()
    assert body["agent"] == "coding" and body["methods"] == {"coding": "pasted_review_llm"}
    assert "not in the index" in body["answer"]  # the scripted model's analysis
    assert not body["answer"].startswith("Generating code needs")
