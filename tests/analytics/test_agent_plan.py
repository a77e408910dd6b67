"""The agent without a model: the deterministic plan, streaming, the subgraph, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agents.analytics.react import (
    AnalyticsAnswer,
    AnalyticsState,
    answer_question,
    astream_answer,
    build_analytics_agent,
    build_analytics_graph,
)
from tests.analytics.conftest import AnalyticsDB
from tests.analytics.test_executor import SLOW_SQL, reader_backends, wait_until
from tests.support.scripted import ScriptedChatModel
from tools.analytics.context import AnalyticsContext

Ctx = Callable[..., AnalyticsContext]


async def events_and_answer(
    question: str, ctx: AnalyticsContext
) -> tuple[list[dict[str, Any]], AnalyticsAnswer]:
    events: list[dict[str, Any]] = []
    answer = None
    async for item in astream_answer(question, ctx):
        if isinstance(item, AnalyticsAnswer):
            answer = item
        else:
            events.append(item)
    assert answer is not None
    return events, answer


async def test_a_trend_question(make_ctx: Ctx) -> None:
    answer = await answer_question("Monthly downtime by plant in 2025", make_ctx())
    assert answer.method == "semantic-layer"
    assert answer.sql and "analytics.production" in answer.sql
    assert answer.columns == ["month", "plant", "downtime_minutes"]
    assert answer.row_count == 60 and len(answer.rows) == 60
    assert answer.analysis is not None and answer.analysis.query_type == "trend"
    assert answer.chart is not None and answer.chart.chart_type == "line"
    assert answer.recommendations and answer.root_cause is None and not answer.errors
    assert "Chattanooga Assembly" in answer.text  # the August spike is an outlier
    assert answer.demo_data and "synthetic demo dataset" in answer.text


async def test_a_why_question_runs_the_root_cause_and_streams_progress(make_ctx: Ctx) -> None:
    events, answer = await events_and_answer("Why did the damage rate rise in Q3 2025?", make_ctx())
    assert answer.root_cause is not None
    assert answer.root_cause.drivers[0].member == "Rapid Haul Logistics"
    assert "Rapid Haul Logistics" in answer.text and "Southwest" in answer.text
    assert answer.recommendations[0].startswith("Investigate carrier Rapid Haul Logistics")
    assert all(e["type"] == "progress" and e["agent"] == "analytics" for e in events)
    order = [(e["tool"], e["stage"]) for e in events if e["stage"] != "progress"]
    assert order[:4] == [
        ("sql_generation_tool", "start"),
        ("sql_generation_tool", "done"),
        ("sql_execution_tool", "start"),
        ("sql_execution_tool", "done"),
    ]
    later = {tool for tool, _ in order[4:]}
    assert later == {"kpi_analysis_tool", "chart_configuration_tool", "root_cause_analysis_tool"}


async def test_an_unmappable_question_gets_an_honest_answer(make_ctx: Ctx) -> None:
    answer = await answer_question("What is the weather tomorrow?", make_ctx())
    assert answer.sql is None and answer.method == "none" and answer.rows == []
    assert "I can answer questions about" in answer.text
    assert "Damage rate" in answer.text


async def test_a_failing_query_is_reported_not_hidden(make_ctx: Ctx) -> None:
    answer = await answer_question("Units sold by dealer", make_ctx(statement_timeout_ms=1))
    assert answer.errors and "Error in sql_execution_tool: query timed out" in answer.errors[0]
    assert answer.text.startswith("The query failed")
    assert answer.rows == []


async def test_questions_are_bounded(make_ctx: Ctx) -> None:
    with pytest.raises(ValueError, match="empty"):
        await answer_question("  ", make_ctx())
    with pytest.raises(ValueError, match="at most 2000"):
        await answer_question("revenue " * 400, make_ctx())


async def test_row_cap_applies_to_the_answer(make_ctx: Ctx) -> None:
    answer = await answer_question("Units sold per day in 2025", make_ctx(row_cap=50))
    assert len(answer.rows) == 50 and answer.truncated


@dataclass
class RootContext:
    """Stands in for the root graph's own context type."""

    analytics: AnalyticsContext


async def test_the_subgraph_streams_progress_then_answers(make_ctx: Ctx) -> None:
    ctx = make_ctx()
    graph = build_analytics_graph(context_factory=lambda root: root.analytics)
    nodes = graph.get_graph(xray=True).nodes
    assert {"answer_analytics:model", "answer_analytics:tools"} <= set(nodes)
    seen: list[str] = []
    final: dict[str, Any] = {}
    state: AnalyticsState = {
        "messages": [
            HumanMessage("Revenue by region in 2025"),
            AIMessage("Southeast leads."),
            HumanMessage("Top 3 dealers by revenue in 2025"),
        ]
    }
    async for part in graph.astream(
        state, context=RootContext(ctx), stream_mode=["custom", "updates", "values"]
    ):
        mode, chunk = cast(tuple[str, Any], part)
        if mode == "custom":
            seen.append(f"{chunk['tool']}:{chunk['stage']}")
        elif mode == "updates":
            seen.append("answer")
        else:
            final = chunk
    assert seen[0] == "sql_generation_tool:start" and seen[-1] == "answer"
    assert "sql_execution_tool:done" in seen
    reply = final["messages"][-1]
    assert isinstance(reply, AIMessage) and reply.name == "analytics"
    assert final["analytics"]["row_count"] == 3
    assert final["analytics"]["chart"]["chart_type"] == "bar"
    assert len(final["messages"]) == 4  # no tool traffic leaks into the shared conversation


async def test_the_subgraph_needs_an_analytics_context(make_ctx: Ctx) -> None:
    graph = build_analytics_graph()
    with pytest.raises(TypeError, match="context_factory"):
        await graph.ainvoke(
            {"messages": [HumanMessage("Revenue in 2025")]}, context=RootContext(make_ctx())
        )


async def test_a_client_gone_mid_stream_leaves_no_transaction_behind(
    make_ctx: Ctx, analytics_db: AnalyticsDB, owner: psycopg.Connection
) -> None:
    model = ScriptedChatModel(script=[
        AIMessage(content="", tool_calls=[{"name": "sql_execution_tool",
                                           "args": {"sql": SLOW_SQL}, "id": "call_slow"}]),
        "never reached",
    ])  # fmt: skip
    ctx = make_ctx(statement_timeout_ms=120_000)
    agent = build_analytics_agent(model)
    started = asyncio.Event()

    async def client() -> None:
        async for item in astream_answer("How many pairs of sales are there?", ctx, agent=agent):
            if isinstance(item, dict) and item["tool"] == "sql_execution_tool":
                started.set()

    task = asyncio.create_task(client())
    await asyncio.wait_for(started.wait(), timeout=60)
    role = analytics_db.reader_user
    await wait_until(  # the cursor's FETCH is where the join runs
        lambda: any(s == "active" for s, _ in reader_backends(owner, role)),
        "the query to run on the server",
    )
    task.cancel()  # the client disconnects
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(
        lambda: all(s == "idle" for s, _ in reader_backends(owner, role)),
        "no running statement and no open transaction",
    )
    assert len(model.calls) == 1  # the run stopped; the model was not asked again
