"""The compiled graph: its nodes, handoffs (bounded), pruning, per-turn state, the chat agent."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from agents.chat.spec import chat_agent, offline_answer
from agents.contract.spec import AgentCard
from tests.graph.conftest import answering_agent
from tests.support.graphs import BoundGraph
from tests.support.scripted import ScriptedChatModel


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def test_compiled_graph_has_the_spine_nodes(make_graph: Callable[..., BoundGraph]) -> None:
    nodes = set(make_graph().get_graph().nodes)
    assert {"ingest", "route", "detect_handoff", "finalize", "chat"} <= nodes


async def test_explicit_handoff_goes_back_to_route(make_graph: Callable[..., BoundGraph]) -> None:
    calls: list[str] = []
    agents = [
        chat_agent(),
        answering_agent("alpha", keywords=("alpha", "first"), handoff_to="beta", calls=calls),
        answering_agent("beta", keywords=("beta", "second"), calls=calls),
    ]
    graph = make_graph(checkpointer=InMemorySaver(), agents=agents)
    state = await graph.ainvoke({"messages": [HumanMessage("alpha first")]}, _config("h1"))
    assert calls == ["alpha", "beta"]
    assert state["route"]["method"] == "handoff" and state["route"]["agent"] == "beta"
    assert state["handoff_count"] == 1 and state["answer"] == "beta answered"
    assert state["previous_agent"] == "alpha" and state["current_agent"] == "beta"


async def test_handoffs_are_bounded(make_graph: Callable[..., BoundGraph]) -> None:
    calls: list[str] = []
    agents = [
        chat_agent(),
        answering_agent("a1", keywords=("start", "go"), handoff_to="a2", calls=calls),
        answering_agent("a2", handoff_to="a3", calls=calls),
        answering_agent("a3", handoff_to="a4", calls=calls),
        answering_agent("a4", calls=calls),
    ]
    graph = make_graph(max_handoffs=2, checkpointer=InMemorySaver(), agents=agents)
    state = await graph.ainvoke({"messages": [HumanMessage("start go")]}, _config("h2"))
    assert calls == ["a1", "a2", "a3"]
    assert state["handoff_count"] == 2
    assert any("2 handoffs done" in e for e in state["errors"])


async def test_agents_cannot_bounce_a_message(make_graph: Callable[..., BoundGraph]) -> None:
    calls: list[str] = []
    agents = [
        chat_agent(),
        answering_agent("ping", keywords=("ping", "pong"), handoff_to="pong", calls=calls),
        answering_agent("pong", handoff_to="ping", calls=calls),
    ]
    graph = make_graph(max_handoffs=5, checkpointer=InMemorySaver(), agents=agents)
    state = await graph.ainvoke({"messages": [HumanMessage("ping pong")]}, _config("h3"))
    assert calls == ["ping", "pong"]  # pong may not hand back to ping: it ran this turn
    assert state["handoff_count"] == 1


async def test_conversation_is_pruned_to_first_and_last_n(
    make_graph: Callable[..., BoundGraph],
) -> None:
    graph = make_graph(message_keep_last=4, checkpointer=InMemorySaver())
    for i in range(6):
        state = await graph.ainvoke({"messages": [HumanMessage(f"msg {i}")]}, _config("p"))
    contents = [m.content for m in state["messages"]]
    # first message kept; then the last 4 before this turn's answer, plus the answer
    assert contents[0] == "msg 0"
    assert len(contents) == 1 + 4 + 1
    assert contents[-2] == "msg 5" and state["turn_count"] == 6


async def test_per_turn_fields_reset_each_turn(make_graph: Callable[..., BoundGraph]) -> None:
    graph = make_graph(checkpointer=InMemorySaver())
    first = await graph.ainvoke({"messages": [HumanMessage("hello there")]}, _config("r"))
    second = await graph.ainvoke({"messages": [HumanMessage("thanks, hello")]}, _config("r"))
    assert first["turn_count"] == 1 and second["turn_count"] == 2
    assert list(second["agent_answers"]) == ["chat"]
    assert second["agent_contexts"]["chat"]["turns_handled"] == 2
    assert second["agent_contexts"]["chat"]["last_turn"] == 2
    assert second["agent_contexts"]["chat"]["last_method"] == "offline"
    # a lone agent ends its turn in its own step: detect_handoff and finalize do not run
    assert set(second["stage_ms"]) == {"ingest", "route", "chat"}
    assert second["created_at"] == first["created_at"] <= second["updated_at"]


async def test_chat_without_a_model_explains_what_works(
    make_graph: Callable[..., BoundGraph],
) -> None:
    agents = [
        chat_agent(),
        answering_agent(
            "recipes", description="Cooking and baking.", examples=("How long do I bake bread?",)
        ),
    ]
    graph = make_graph(checkpointer=InMemorySaver(), agents=agents)
    state = await graph.ainvoke({"messages": [HumanMessage("hello, who are you?")]}, _config("c"))
    answer = state["answer"]
    assert "No language model is configured" in answer
    assert "- recipes: Cooking and baking." in answer
    assert "How long do I bake bread?" in answer
    assert state["agent_answers"]["chat"]["method"] == "offline"


def test_the_no_model_reply_suggests_what_works_in_the_client_at_hand() -> None:
    """An agent-chat-ui user cannot send `/chat` fields: the reply names the assistant id."""
    peers = [AgentCard("analytics", "Answers questions about your data.")]
    state: dict[str, object] = {"messages": [HumanMessage("hello")], "route": None}
    ui = offline_answer(state, peers, "none", "agent_server")  # type: ignore[arg-type]
    assert "POST /chat" not in ui and "target_agent" not in ui
    assert "as the assistant id" in ui and "Ask it: assistant id `analytics`" in ui
    rest = offline_answer(state, peers, "none", "rest")  # type: ignore[arg-type]
    assert "POST /chat" in rest and '"agent": "analytics"' in rest
    direct = offline_answer(state, peers, "none", None)  # type: ignore[arg-type]
    assert '"target_agent": "analytics"' in direct and "POST /chat" not in direct


async def test_chat_with_a_model_answers_from_the_conversation(
    make_graph: Callable[..., BoundGraph],
) -> None:
    model = ScriptedChatModel(script=["Nice to meet you, Ada.", "Your name is Ada."])
    graph = make_graph(model, checkpointer=InMemorySaver())
    await graph.ainvoke({"messages": [HumanMessage("hello, I am Ada")]}, _config("m"))
    state = await graph.ainvoke({"messages": [HumanMessage("hi, what is my name?")]}, _config("m"))
    assert state["answer"] == "Your name is Ada."
    second_prompt = [m.content for m in model.calls[1]]
    assert "hello, I am Ada" in second_prompt and "Nice to meet you, Ada." in second_prompt
    assert state["agent_answers"]["chat"]["method"] == "llm"


async def test_chat_model_can_transfer_to_another_agent(
    make_graph: Callable[..., BoundGraph],
) -> None:
    calls: list[str] = []
    transfer = AIMessage(
        content="",
        tool_calls=[{"name": "transfer_to_recipes", "args": {"reason": "cooking"}, "id": "c1"}],
    )
    model = ScriptedChatModel(script=[transfer])
    agents = [chat_agent(), answering_agent("recipes", calls=calls)]
    graph = make_graph(model, checkpointer=InMemorySaver(), agents=agents)
    state = await graph.ainvoke({"messages": [HumanMessage("hi, hello")]}, _config("t"))
    assert calls == ["recipes"]
    assert state["answer"] == "recipes answered"
    assert state["route"] == {
        "agent": "recipes",
        "agents": ["recipes"],
        "method": "handoff",
        "confidence": 1.0,
        "reason": "cooking",
    }
    assert model.bound_tools == [["transfer_to_recipes"]]
