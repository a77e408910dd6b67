"""Routing: each method, parallel agents, a message that matches nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents.chat.spec import chat_agent
from graph.registry import AgentRegistry
from graph.routing import Router, RoutingDecision
from graph.workflow import build_registry
from tests.graph.conftest import answering_agent
from tests.support.graphs import BoundGraph
from tests.support.scripted import ScriptedChatModel

RECIPES = answering_agent(
    "recipes",
    keywords=("recipe", "bake", "oven", "flour", "ingredients"),
    examples=("How long do I bake bread?", "What can I cook with eggs and spinach?"),
    description="Cooking: recipes, baking, ingredients and meal ideas.",
)
TRAVEL = answering_agent(
    "travel",
    keywords=("flight", "hotel", "trip", "itinerary", "visa"),
    examples=("Plan a weekend trip to Lisbon.", "Which documents do I need to enter Japan?"),
    description="Travel planning: flights, hotels, itineraries and visas.",
)
AGENTS = [chat_agent(), RECIPES, TRAVEL]


def _router(embeddings: Embeddings | None, model: ScriptedChatModel | None = None) -> Router:
    registry = build_registry(AGENTS)
    return Router(
        registry,
        embeddings=(lambda: embeddings) if embeddings else None,
        llm=lambda: model,
    )


async def test_keyword_fast_path_needs_two_hits_and_a_clear_winner(embeddings: Embeddings) -> None:
    router = _router(embeddings)
    chosen = await router.decide("Which flour should I use, and how hot should the oven be?")
    assert chosen["method"] == "keyword"
    assert chosen["agents"] == ["recipes"]
    assert 0.5 < chosen["confidence"] <= 0.95
    # one keyword alone is not enough for the fast path
    assert router.by_keywords("I need a hotel") is None


async def test_two_agents_that_both_match_run_in_parallel(embeddings: Embeddings) -> None:
    chosen = await _router(embeddings).decide(
        "Book a flight and a hotel for my trip, and find a recipe with ingredients I can bake"
    )
    assert chosen["method"] == "keyword"
    assert sorted(chosen["agents"]) == ["recipes", "travel"]


async def test_semantic_similarity_routes_without_keywords(embeddings: Embeddings) -> None:
    chosen = await _router(embeddings).decide("What documents must I show at the Japanese border?")
    assert chosen["method"] == "semantic"
    assert chosen["agent"] == "travel"
    assert chosen["confidence"] >= 0.35


async def test_llm_decides_when_keywords_and_similarity_do_not(embeddings: Embeddings) -> None:
    model = ScriptedChatModel(
        script=[RoutingDecision(agent="recipes", confidence=0.8, reason="food question")]
    )
    chosen = await _router(embeddings, model).decide("zzz qqq")
    assert chosen == {
        "agent": "recipes",
        "agents": ["recipes"],
        "method": "llm",
        "confidence": 0.8,
        "reason": "food question",
    }
    assert model.structured_calls == ["RoutingDecision"]
    prompt = model.calls[0][0].content
    assert "recipes" in prompt and "travel" in prompt


async def test_llm_naming_an_unknown_agent_falls_back_to_default(embeddings: Embeddings) -> None:
    model = ScriptedChatModel(script=[{"agent": "weather", "confidence": 0.9, "reason": "?"}])
    chosen = await _router(embeddings, model).decide("zzz qqq")
    assert (chosen["agent"], chosen["method"], chosen["confidence"]) == ("chat", "default", 0.0)


async def test_llm_failure_falls_back_to_default(embeddings: Embeddings) -> None:
    model = ScriptedChatModel(script=[TimeoutError("provider down")])
    chosen = await _router(embeddings, model).decide("zzz qqq")
    assert chosen["method"] == "default"


async def test_message_matching_no_agent_goes_to_the_default_agent() -> None:
    chosen = await _router(None).decide("Tell me something about the colour purple.")
    assert chosen["agent"] == "chat" and chosen["method"] == "default"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bake bake bake bake", {"recipes": 1, "travel": 0}),  # distinct keywords only
        ("A FLIGHT and a Hotel", {"recipes": 0, "travel": 2}),  # case-insensitive
        ("flightless birds in the hotelier's garden", {"recipes": 0, "travel": 0}),  # whole words
    ],
)
def test_keyword_hits_count_distinct_whole_words(text: str, expected: dict[str, int]) -> None:
    hits = _router(None).keyword_hits(text)
    assert {k: hits[k] for k in expected} == expected


async def test_parallel_agents_are_merged_by_finalize(
    make_graph: Callable[..., BoundGraph],
) -> None:
    graph = make_graph(checkpointer=InMemorySaver(), agents=AGENTS)
    state = await graph.ainvoke(
        {"messages": [HumanMessage("flight and hotel for the trip; recipe to bake with flour")]},
        {"configurable": {"thread_id": "parallel"}},
    )
    assert sorted(state["route"]["agents"]) == ["recipes", "travel"]
    assert "**Recipes**\nrecipes answered" in state["answer"]
    assert "**Travel**\ntravel answered" in state["answer"]
    assert state["messages"][-1].content == state["answer"]


def test_registry_rejects_duplicates() -> None:
    registry = AgentRegistry()
    registry.register(RECIPES)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(RECIPES)


def test_the_llm_tiers_trace_metadata_is_the_schemas() -> None:
    # ChatOpenAI's structured runnable carries the schema precomputed: the same metadata
    from langchain_core.language_models.chat_models import _format_ls_structured_output
    from langchain_openai import ChatOpenAI

    from tools.providers.chat_models import function_calling

    model = ChatOpenAI(model="m", api_key="sk-test", base_url="http://llm.test/v1")
    bound: Any = function_calling(model, RoutingDecision)
    given = bound.first.kwargs["ls_structured_output_format"]
    assert given["schema"] is not RoutingDecision
    assert _format_ls_structured_output(given) == _format_ls_structured_output(
        {"kwargs": {"method": "function_calling", "strict": None}, "schema": RoutingDecision}
    )
    # a model that refuses the extra argument gets the plain call
    assert function_calling(ScriptedChatModel(), RoutingDecision) is not None
