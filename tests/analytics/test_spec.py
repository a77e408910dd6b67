"""The analytics agent through the contract: its subgraph in the root graph (AgentInput in,
AgentOutput out, tool traffic private), the owner as the data scope, structured input, bounds,
and a process without the engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis.asyncio as aredis
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agents.analytics.react import MAX_QUESTION_CHARS
from agents.analytics.spec import analytics_agent
from agents.contract.state import AgentInput, AgentOutput
from config import Settings
from graph.workflow import build_registry
from tests.support.graphs import agent_services, bound_graph, run_with_agent_state
from tests.support.scripted import ScriptedChatModel
from tools.analytics.chartstore import ChartStore
from tools.analytics.context import AnalyticsContext

Ctx = Callable[..., AnalyticsContext]


def turn(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)], "user_id": "u", "session_id": "s1", **extra}


def test_the_spec_fits_the_contract(make_settings: Callable[..., Settings]) -> None:
    spec = analytics_agent()
    assert spec.name == "analytics" and spec.answer_nodes == frozenset({"model"})
    assert {"units sold", "damage rate", "downtime", "rapid haul", "voltra"} <= set(spec.keywords)
    registry = build_registry()
    assert "analytics" in registry and registry.streams("analytics", "model")
    subgraph = spec.build(registry.cards, agent_services(make_settings()))
    assert subgraph.builder.input_schema is AgentInput
    assert subgraph.builder.output_schema is AgentOutput
    nodes = set(subgraph.get_graph(xray=True).nodes)
    assert {"prepare_question", "publish_answer"} <= nodes
    assert {"answer_with_plan:model", "answer_with_plan:tools"} <= nodes  # Studio's xray
    assert not any(n.startswith("answer_with_model") for n in nodes)  # no model configured
    with_model = spec.build(registry.cards, agent_services(make_settings(), ScriptedChatModel()))
    nodes = set(with_model.get_graph(xray=True).nodes)
    assert {"answer_with_model:model", "answer_with_model:tools"} <= nodes
    assert {"answer_with_plan:model", "answer_with_plan:tools"} <= nodes  # its fallback


async def test_a_model_that_fails_hands_the_turn_to_the_plan(
    make_settings: Callable[..., Settings], make_ctx: Ctx
) -> None:
    broken = ScriptedChatModel(script=[RuntimeError("provider down")])
    graph = bound_graph(agent_services(make_settings(), broken, resources=[make_ctx()]))
    state = await graph.ainvoke(turn("Units sold by region in 2025", target_agent="analytics"))
    answer = state["agent_answers"]["analytics"]
    assert answer["method"] == "plan" and answer["data"]["row_count"] == 5
    assert len(broken.calls) == 1
    assert state["errors"] == [
        "answer_with_model: the language model failed (RuntimeError: provider down); used the "
        "deterministic plan"
    ]


async def test_a_turn_answers_with_data_and_keeps_tool_traffic_private(
    make_settings: Callable[..., Settings], make_ctx: Ctx, aredis_client: aredis.Redis
) -> None:
    store = ChartStore(aredis_client, ttl_seconds=600)
    services = agent_services(make_settings(), resources=[make_ctx(), store])
    graph = bound_graph(services)
    # `user_id` is the caller's claim; the run's owner (set by the app) scopes the data
    state = await run_with_agent_state(
        graph, turn("Revenue by region in 2025", user_id="mallory"), "analytics", owner="alice"
    )
    assert state["route"]["agent"] == "analytics"
    answer = state["agent_answers"]["analytics"]
    assert answer["method"] == "plan"
    data = answer["data"]
    assert data["sql"].startswith("SELECT") and data["columns"] == ["region", "revenue"]
    assert len(data["rows"]) == 5 and data["analysis"] and data["recommendations"]
    assert data["chart"]["url"] == f"/analytics/chart/{data['chart']['chart_id']}.png"
    assert await store.spec("alice", data["chart"]["chart_id"]) is not None
    assert await store.spec("mallory", data["chart"]["chart_id"]) is None
    assert await store.spec("anonymous", data["chart"]["chart_id"]) is None
    messages = state["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage]  # no tool traffic
    assert not any(isinstance(m, ToolMessage) for m in messages)
    assert messages[-1].name == "analytics" and messages[-1].content == answer["answer"]
    assert state["analytics_question"] == "Revenue by region in 2025"  # the agent's own field
    assert state["agent_contexts"]["analytics"]["last_row_count"] == 5
    assert {"prepare_question", "answer_with_plan", "publish_answer"} <= set(state["stage_ms"])


async def test_structured_input_is_the_question_when_the_agent_is_named(
    make_settings: Callable[..., Settings], make_ctx: Ctx
) -> None:
    graph = bound_graph(agent_services(make_settings(), resources=[make_ctx()]))
    state = await graph.ainvoke(
        turn(
            "(asked through the API)",
            target_agent="analytics",
            agent_input={"question": "Damage rate by carrier in Q3 2025"},
        )
    )
    data = state["agent_answers"]["analytics"]["data"]
    assert data["question"] == "Damage rate by carrier in Q3 2025"
    assert data["columns"] == ["carrier", "damage_rate_pct"] and data["chart"]["url"] is None
    bad = await graph.ainvoke(
        turn("x", target_agent="analytics", agent_input={"question": "Revenue", "limit": 5})
    )
    refused = bad["agent_answers"]["analytics"]
    assert refused["method"] == "validation" and "limit: Extra inputs" in refused["answer"]


async def test_an_overlong_message_is_answered_with_what_to_ask(
    make_settings: Callable[..., Settings], make_ctx: Ctx
) -> None:
    graph = bound_graph(agent_services(make_settings(), resources=[make_ctx()]))
    text = "Units sold by region " + "and again " * (MAX_QUESTION_CHARS // 10)
    state = await graph.ainvoke(turn(text, target_agent="analytics"))
    answer = state["agent_answers"]["analytics"]
    assert answer["method"] == "validation"
    assert f"at most {MAX_QUESTION_CHARS} characters" in answer["answer"]


async def test_without_the_engine_the_turn_says_so(make_settings: Callable[..., Settings]) -> None:
    graph = bound_graph(agent_services(make_settings()))
    state = await graph.ainvoke(turn("Units sold by region in 2025"))
    answer = state["agent_answers"]["analytics"]
    not_open = AnalyticsContext.NOT_OPEN  # the EngineNotOpen message of the missing engine
    assert answer["answer"] == not_open and answer["data"]["unavailable"]
    assert state["errors"] == [f"analytics: {not_open}"]
