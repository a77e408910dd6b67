"""The agent through the real langchain-openai client against the OpenAI-compatible stub."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from agents.analytics.react import answer_question, build_analytics_agent
from tests.analytics.questions import TODAY
from tests.support.stub_openai import StubOpenAI, StubReply
from tools.analytics.context import AnalyticsContext
from tools.analytics.sqlgen import generate_sql

Ctx = Callable[..., AnalyticsContext]
QUESTION = "Units sold by region in 2025"
BROKEN_SQL = "SELECT region, count(*) FROM analytics.sales GROUP BY region"


@pytest.fixture
async def stub_chat(stub_openai: StubOpenAI) -> AsyncIterator[ChatOpenAI]:
    """The real ChatOpenAI client on the stub, with an HTTP client of this test's event loop."""
    async with httpx.AsyncClient(timeout=30) as http:
        yield ChatOpenAI(
            base_url=stub_openai.base_url,
            api_key=SecretStr("sk-test"),
            model="stub-model",
            max_retries=0,
            http_async_client=http,
        )


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def scripted_analyst(request: dict[str, Any]) -> StubReply:
    """A model that first writes broken SQL, reads the error, then follows the tools."""
    results = tool_results(request)
    if not results:
        return StubReply(tool_calls=[("sql_execution_tool", {"sql": BROKEN_SQL})])
    last = results[-1]["content"]
    if len(results) == 1:
        assert last.startswith("Error in sql_execution_tool: the database rejected the SQL")
        assert "analytics.dealers(dealer_id, name, region" in last  # the fix is in the message
        return StubReply(
            content="I'll let the catalogue write it.",
            tool_calls=[("sql_generation_tool", {"question": QUESTION})],
        )
    if len(results) == 2:
        return StubReply(tool_calls=[("sql_execution_tool", {"sql": json.loads(last)["sql"]})])
    if len(results) == 3:
        result_id = json.loads(last)["result_id"]
        return StubReply(tool_calls=[
            ("kpi_analysis_tool", {"data": result_id, "query_type": "ranking"}),
            ("chart_configuration_tool", {"data": result_id, "question": QUESTION}),
        ])  # fmt: skip
    return StubReply(content="The Southeast sold the most vehicles in 2025.")


async def test_the_model_recovers_from_a_tool_error(
    stub_openai: StubOpenAI, stub_chat: ChatOpenAI, make_ctx: Ctx
) -> None:
    stub_openai.responder = scripted_analyst
    agent = build_analytics_agent(stub_chat)
    answer = await answer_question(QUESTION, make_ctx(), agent=agent)
    assert stub_openai.calls == 5
    assert len(answer.errors) == 1 and 'column "region" does not exist' in answer.errors[0]
    assert answer.text.startswith("The Southeast sold the most vehicles in 2025.")
    assert answer.method == "semantic-layer"
    assert answer.columns == ["region", "units_sold"] and answer.rows[0][0] == "Southeast"
    assert answer.analysis is not None and answer.analysis.query_type == "ranking"
    assert answer.chart is not None and answer.chart.chart_type == "bar"
    # the model saw the tool schemas, the system prompt and the error as a tool message
    first = stub_openai.requests[0]
    names = {t["function"]["name"] for t in first["tools"]}
    assert names == {
        "sql_generation_tool",
        "sql_execution_tool",
        "kpi_analysis_tool",
        "root_cause_analysis_tool",
        "chart_configuration_tool",
    }
    assert first["messages"][0]["role"] == "system"
    second = stub_openai.requests[1]
    assert tool_results(second)[0]["content"].startswith("Error in sql_execution_tool")


async def test_model_written_sql_is_validated_and_refusals_go_back_once(
    stub_openai: StubOpenAI, stub_chat: ChatOpenAI
) -> None:
    drafts = iter([
        {"sql": "SELECT pg_sleep(10)", "explanation": "sleep"},
        {"sql": "SELECT carrier, round(100.0 * avg(damaged::int), 2) AS damage_rate_pct "
                "FROM analytics.shipments GROUP BY carrier", "explanation": "by carrier"},
    ])  # fmt: skip

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        assert request["tools"][0]["function"]["name"] == "SQLDraft"
        return next(drafts)

    stub_openai.responder = responder
    generation = await generate_sql("Damage rate by carrier", TODAY, stub_chat)
    assert generation.method == "model" and generation.explanation == "by carrier"
    assert generation.sql is not None and "analytics.shipments" in generation.sql
    retry = stub_openai.requests[1]["messages"][-1]["content"]
    assert "SQL refused: function pg_sleep() is not allowed" in retry
    system = stub_openai.requests[0]["messages"][0]["content"]
    assert "analytics.shipments" in system and "Damage rate (%)" in system


async def test_a_failing_sql_model_falls_back_to_the_semantic_layer(
    stub_openai: StubOpenAI, stub_chat: ChatOpenAI
) -> None:
    stub_openai.fail_next(500)
    generation = await generate_sql("Damage rate by carrier in 2025", TODAY, stub_chat)
    assert generation.method == "semantic-layer" and generation.sql is not None


async def test_the_sql_model_writes_the_sql_inside_the_agent(
    stub_openai: StubOpenAI, stub_chat: ChatOpenAI, make_ctx: Ctx
) -> None:
    def responder(request: dict[str, Any]) -> StubReply | dict[str, Any]:
        if request["tools"][0]["function"]["name"] == "SQLDraft":
            return {
                "sql": "SELECT count(*) AS units_sold FROM analytics.sales",
                "explanation": "all units",
            }
        results = tool_results(request)
        if not results:
            return StubReply(tool_calls=[("sql_generation_tool", {"question": "units?"})])
        if len(results) == 1:
            sql = json.loads(results[0]["content"])["sql"]
            return StubReply(tool_calls=[("sql_execution_tool", {"sql": sql})])
        return StubReply(content="49,110 units.")

    stub_openai.responder = responder
    answer = await answer_question(
        "How many units did we sell?",
        make_ctx(sql_model=stub_chat),
        agent=build_analytics_agent(stub_chat),
    )
    assert answer.method == "model" and answer.rows == [[49110]]
