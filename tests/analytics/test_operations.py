"""The analytics operations on the seeded dataset: called directly, served as tools (the scripted
model calls them and sees their replies), run as the calling owner, refusals with their status,
and a missing engine as the one EngineNotOpen error."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agents.contract.context import AgentServices
from config import Settings
from tests.support.scripted import FixedFactory, ScriptedChatModel
from tools.analytics.context import AnalyticsContext
from tools.analytics.operations import (
    OPERATIONS,
    compute_kpi,
    engine_of,
    explain_change,
    generate_sql,
    list_kpis,
    make_chart,
    run_sql,
)
from tools.operations import EngineNotOpen, OperationContext, OperationError

Ctx = Callable[..., AnalyticsContext]
BY_REGION = (
    "SELECT d.region, count(*) AS units FROM analytics.sales s "
    "JOIN analytics.dealers d ON d.dealer_id = s.dealer_id GROUP BY d.region ORDER BY 1"
)


def _caller(owner: str, engine: AnalyticsContext | None) -> OperationContext:
    services = AgentServices(Settings(_env_file=None), FixedFactory(None))
    if engine is not None:
        services.provide(engine)
    return OperationContext(owner, services)


async def test_the_plan_as_operations(make_ctx: Ctx) -> None:
    ctx = _caller("alice", make_ctx())
    generated = await generate_sql(ctx, {"question": "Units sold by region in 2025"})
    assert generated.sql and generated.method == "semantic-layer"
    result = await run_sql(ctx, {"sql": generated.sql})
    assert result.row_count > 0 and "region" in result.columns
    analysis = await compute_kpi(ctx, {"result": result.model_dump()})
    assert analysis.row_count == result.row_count and analysis.analysis
    chart = await make_chart(ctx, {"result": result.model_dump(), "question": "by region"})
    assert chart.chart_type in {"bar", "pie"} and chart.vega_lite
    kpis = await list_kpis(ctx, {})
    assert "damage_rate_pct" in {k.key for k in kpis.metrics}
    damage = await list_kpis(ctx, {"search": "damage"})
    assert [k.key for k in damage.metrics] == ["damage_rate_pct"]
    assert {op.name for op in OPERATIONS} == {
        "generate_sql", "run_sql", "list_kpis", "compute_kpi", "explain_change",
        "make_chart",
    }  # fmt: skip


async def test_explain_change_reports_each_breakdown_query(make_ctx: Ctx) -> None:
    seen: list[int] = []
    ctx = OperationContext(
        "alice", _caller("alice", make_ctx()).engines, extra={"on_query": seen.append}
    )
    output = await explain_change(ctx, {"metric": "damage rate", "period": "Q3 2025"})
    assert output.metric == "damage_rate_pct" and output.drivers
    assert seen == list(range(1, len(seen) + 1)) and len(seen) >= 2


async def test_operations_run_as_the_calling_owner(make_ctx: Ctx) -> None:
    shared = make_ctx(user_id="anonymous")
    assert engine_of(_caller("alice", shared)).user_id == "alice"
    assert engine_of(_caller("bob", shared)).user_id == "bob"
    assert shared.user_id == "anonymous"  # the process's context is not changed


async def test_refusals_carry_their_status(make_ctx: Ctx) -> None:
    ctx = _caller("alice", make_ctx())
    with pytest.raises(OperationError, match="SQL refused: .*not a SELECT") as refused:
        await run_sql(ctx, {"sql": "DELETE FROM analytics.sales"})
    assert refused.value.status == 422
    assert str(refused.value).count("SQL refused") == 1  # the guard's words, said once
    with pytest.raises(OperationError, match="unknown metric") as metric:
        await explain_change(ctx, {"metric": "happiness", "period": "Q3 2025"})
    assert metric.value.status == 422
    slow = _caller("alice", make_ctx(statement_timeout_ms=1))
    cross = "SELECT count(*) FROM analytics.sales a, analytics.sales b, analytics.sales c"
    with pytest.raises(OperationError, match="timed out") as timeout:
        await run_sql(slow, {"sql": cross})
    assert timeout.value.status == 504


async def test_a_missing_engine_is_engine_not_open() -> None:
    ctx = _caller("alice", None)
    for op, payload in (
        (run_sql, {"sql": "SELECT 1"}),
        (generate_sql, {"question": "Units sold by region"}),
        (explain_change, {"metric": "damage rate", "period": "Q3 2025"}),
    ):
        with pytest.raises(EngineNotOpen) as caught:
            await op(ctx, payload)
        assert str(caught.value) == AnalyticsContext.NOT_OPEN and caught.value.status == 503


async def test_served_as_tools(make_ctx: Ctx) -> None:
    ctx = _caller("carol", make_ctx())
    tools = [op.as_tool(lambda runtime: ctx) for op in OPERATIONS]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("run_sql", {"sql": BY_REGION}),
        ("run_sql", {"sql": "DROP TABLE analytics.sales"}),
        ("list_kpis", {"search": "damage"}),
    ]
    script: list[Any] = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": str(i)}])
        for i, (name, args) in enumerate(calls)
    ]
    model = ScriptedChatModel(script=[*script, "done"])
    result = await create_agent(model, tools).ainvoke({"messages": [HumanMessage("go")]})
    rows, refused, kpis = [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]
    assert json.loads(rows)["columns"] == ["region", "units"]
    assert refused.startswith("Error: SQL refused") and refused.count("SQL refused") == 1
    assert any(k["key"] == "damage_rate_pct" for k in json.loads(kpis)["metrics"])
    assert model.bound_tools[0] == [op.name for op in OPERATIONS]
