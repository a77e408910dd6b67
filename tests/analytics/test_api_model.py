"""The analytics agent with a model, through the app: the real langchain-openai client against
the OpenAI-compatible stub server, scripted to call the tools (including a broken call that the
tool-error middleware turns into a message the model recovers from)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.analytics.test_api import sse_events, summary
from tests.support.stub_openai import StubOpenAI, StubReply, last_user_text

BROKEN_SQL = "SELECT region, count(*) FROM analytics.sales GROUP BY region"
MODEL_SQL = (
    "SELECT d.region, count(*) AS units_sold FROM analytics.sales s "
    "JOIN analytics.dealers d ON d.dealer_id = s.dealer_id "
    "WHERE s.sold_on >= DATE '2025-01-01' AND s.sold_on < DATE '2026-01-01' "
    "GROUP BY d.region ORDER BY units_sold DESC"
)
FINAL = "The Southeast sold the most vehicles in 2025."


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool messages of this turn (after the last user message)."""
    messages = request["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m for m in messages[last_user:] if m["role"] == "tool"]


def analyst(request: dict[str, Any]) -> StubReply | dict[str, Any]:
    """The scripted model: SQL drafts for the SQL tool; the agent's steps otherwise."""
    tools = [t["function"]["name"] for t in request.get("tools") or []]
    if tools[:1] == ["SQLDraft"]:
        return {"sql": MODEL_SQL, "explanation": "units sold by region in 2025"}
    results = tool_results(request)
    if not results:
        return StubReply(
            content="Let me check the numbers.",
            tool_calls=[("sql_generation_tool", {"question": last_user_text(request)})],
        )
    if len(results) == 1:  # first try its own SQL, which is wrong
        return StubReply(tool_calls=[("sql_execution_tool", {"sql": BROKEN_SQL})])
    if len(results) == 2:
        assert results[1]["content"].startswith("Error in sql_execution_tool")
        generated = json.loads(results[0]["content"])["sql"]
        return StubReply(tool_calls=[("sql_execution_tool", {"sql": generated})])
    if len(results) == 3:
        result_id = json.loads(results[2]["content"])["result_id"]
        return StubReply(tool_calls=[
            ("kpi_analysis_tool", {"data": result_id, "query_type": "ranking"}),
            ("chart_configuration_tool", {"data": result_id, "question": "Units by region"}),
        ])  # fmt: skip
    return StubReply(content=FINAL)


@pytest.fixture
def api(stub_settings: Callable[..., Settings], stub_openai: StubOpenAI) -> Iterator[TestClient]:
    stub_openai.responder = analyst
    settings = stub_settings(rate_limit_per_minute=10_000, llm_max_retries=0)
    with TestClient(create_app(settings)) as client:
        yield client


def test_the_model_answers_a_query_and_recovers_from_a_tool_error(
    api: TestClient, stub_openai: StubOpenAI
) -> None:
    response = api.post("/analytics/query", json={"question": "Units sold by region in 2025"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["text"].startswith(FINAL) and body["demo_data"]  # + the demo-data note
    assert body["method"] == "model" and body["sql"] and "analytics.dealers" in body["sql"]
    assert body["columns"] == ["region", "units_sold"] and body["rows"][0][0] == "Southeast"
    assert len(body["errors"]) == 1, "\n----\n".join(body["errors"])
    assert 'column "region" does not exist' in body["errors"][0]
    assert body["analysis"]["query_type"] == "ranking"
    assert body["chart"]["chart_type"] == "bar" and body["chart"]["url"]
    assert api.get(body["chart"]["url"]).status_code == 200
    # the agent's model saw the five tools; one SQLDraft request wrote the SQL
    agent_calls = [
        r for r in stub_openai.requests if r["tools"][0]["function"]["name"] != "SQLDraft"
    ]
    assert len(agent_calls) == 5
    assert {t["function"]["name"] for t in agent_calls[0]["tools"]} == {
        "sql_generation_tool",
        "sql_execution_tool",
        "kpi_analysis_tool",
        "root_cause_analysis_tool",
        "chart_configuration_tool",
    }


def test_a_streamed_model_turn_sends_progress_then_tokens_then_the_answer(
    api: TestClient,
) -> None:
    events = sse_events(api, {"message": "Units sold by region in 2025", "agent": "analytics"})
    print("\nstreamed event sequence (stub model):\n  " + "\n  ".join(summary(events)))
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "answer" and "error" not in kinds
    tokens = [(i, d) for i, (k, d) in enumerate(events) if k == "token"]
    assert all(d["agent"] == "analytics" and d["node"] == "model" for _, d in tokens)
    last_progress = max(i for i, k in enumerate(kinds) if k == "progress")
    final_tokens = "".join(d["text"] for i, d in tokens if i > last_progress)
    assert final_tokens == FINAL  # the answer streams after the tools are done
    preamble = "".join(d["text"] for i, d in tokens if i < last_progress)
    assert preamble == "Let me check the numbers."
    answer = events[-1][1]
    assert answer["answer"].startswith(FINAL) and answer["methods"] == {"analytics": "llm"}
    assert answer["data"]["analytics"]["rows"][0][0] == "Southeast"
    steps = [(d["data"]["tool"], d["data"]["stage"]) for k, d in events if k == "progress"]
    assert steps[:6] == [
        ("sql_generation_tool", "start"),
        ("sql_generation_tool", "done"),
        ("sql_execution_tool", "start"),
        ("sql_execution_tool", "error"),  # the broken SQL, reported and recovered from
        ("sql_execution_tool", "start"),
        ("sql_execution_tool", "done"),
    ]
    failed = next(d["data"] for k, d in events if k == "progress" and d["data"]["stage"] == "error")
    assert failed["message"] == "Failed: the database rejected the SQL"
    assert failed["data"] == {"error": "failed"}


def test_a_failing_model_falls_back_to_the_plan(api: TestClient, stub_openai: StubOpenAI) -> None:
    stub_openai.fail_next(500)  # the agent's first model call fails (no retries configured)
    response = api.post("/chat", json={"message": "Revenue by region in 2025"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["agent"] == "analytics" and body["methods"] == {"analytics": "plan"}
    assert any(
        e.startswith("answer_with_model: the language model failed") and "deterministic plan" in e
        for e in body["errors"]
    )
    data = body["data"]["analytics"]
    assert data["method"] == "semantic-layer" and data["row_count"] == 5
