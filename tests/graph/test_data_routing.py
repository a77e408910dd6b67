"""The router's data tier: agents whose own data matches a message get it, after keywords and
before similarity, the LLM and the default; probes are bounded, isolated and see the run's
owner; the chat agent without a model points at the agents that can answer."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from agents.chat.spec import chat_agent
from agents.contract.context import AgentServices, RunContext
from agents.contract.spec import AgentSpec
from config import Settings
from graph.routing import Router
from graph.workflow import build_registry
from tests.graph.conftest import answering_agent
from tests.support.graphs import BoundGraph
from tests.support.scripted import FixedFactory

PASSPORT = "Where did I put my passport?"


@dataclasses.dataclass
class Probe:
    """A data probe with fixed scores per message, recording who asked."""

    scores: dict[str, float | None]
    calls: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    gate: asyncio.Event | None = None  # a probe that waits on it never answers in time
    error: Exception | None = None

    async def __call__(self, message: str, context: RunContext) -> float | None:
        assert isinstance(context.services, AgentServices)
        self.calls.append((message, context.owner))
        if self.gate is not None:
            await self.gate.wait()
        if self.error is not None:
            raise self.error
        return self.scores.get(message)


def probing(name: str, probe: Probe, **card: Any) -> AgentSpec:
    return dataclasses.replace(answering_agent(name, **card), probe=probe)


def router(*agents: AgentSpec, embeddings: Embeddings | None = None, **knobs: Any) -> Router:
    services = AgentServices(Settings(_env_file=None), FixedFactory(None))
    return Router(
        build_registry([chat_agent(), *agents]),
        embeddings=(lambda: embeddings) if embeddings is not None else None,
        llm=lambda: None,
        services=services,
        **{"data_threshold": 0.5, **knobs},
    )


async def test_a_message_the_agents_data_matches_goes_to_it_with_the_owner_searched() -> None:
    vault = Probe({PASSPORT: 0.8})
    chosen = await router(probing("vault", vault)).decide(PASSPORT, RunContext(owner="alice"))
    assert (chosen["agent"], chosen["method"], chosen["confidence"]) == ("vault", "data", 0.8)
    assert chosen["reason"] == "the vault agent's data matches (0.80 >= 0.50)"
    assert vault.calls == [(PASSPORT, "alice")]


async def test_below_the_threshold_the_next_method_decides_and_the_default_says_why() -> None:
    chosen = await router(probing("vault", Probe({PASSPORT: 0.3}))).decide(PASSPORT)
    assert (chosen["agent"], chosen["method"]) == ("chat", "default")
    assert "(the closest data match was the vault agent's, 0.30 < 0.50)" in chosen["reason"]


async def test_similarity_decides_what_no_data_matches(embeddings: Embeddings) -> None:
    travel = probing("travel", Probe({}), description="Travel planning: flights, hotels, visas.",
                     examples=("Which documents do I need to enter Japan?",))  # fmt: skip
    chosen = await router(travel, embeddings=embeddings).decide(
        "What documents must I show at the Japanese border?"
    )
    assert chosen["method"] == "semantic" and chosen["agent"] == "travel"


async def test_keywords_decide_before_any_probe_runs() -> None:
    vault = Probe({"my recipe for bread, to bake in the oven": 0.9})
    recipes = answering_agent("recipes", keywords=("recipe", "bake", "oven"))
    chosen = await router(recipes, probing("vault", vault)).decide(
        "my recipe for bread, to bake in the oven"
    )
    assert chosen["method"] == "keyword" and chosen["agent"] == "recipes"
    assert vault.calls == []


async def test_the_best_of_several_probes_wins() -> None:
    chosen = await router(
        probing("vault", Probe({PASSPORT: 0.6})), probing("notes", Probe({PASSPORT: 0.9}))
    ).decide(PASSPORT)
    assert (chosen["agent"], chosen["method"]) == ("notes", "data")


async def test_a_probe_that_fails_or_hangs_is_ignored_and_the_others_still_decide(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hang = Probe({PASSPORT: 1.0}, gate=asyncio.Event())  # never set: it never answers
    broken = Probe({}, error=ConnectionError("index down"))
    chosen = await router(
        probing("slow", hang), probing("broken", broken), probing("vault", Probe({PASSPORT: 0.7})),
        data_timeout=0.05,
    ).decide(PASSPORT)  # fmt: skip
    assert (chosen["agent"], chosen["method"]) == ("vault", "data")
    assert hang.calls and broken.calls
    logged = caplog.text
    assert "the slow data probe took over 0.05s; ignored" in logged
    assert "the broken data probe failed (ConnectionError: index down); ignored" in logged


async def test_a_probe_that_skips_is_no_evidence_and_no_services_means_no_data_tier() -> None:
    skipping = Probe({PASSPORT: None})
    bob = RunContext(owner="bob")
    assert await router(probing("vault", skipping)).data_scores(PASSPORT, bob) == {}
    blind = Router(build_registry([chat_agent(), probing("vault", Probe({PASSPORT: 1.0}))]),
                   embeddings=None, llm=lambda: None)  # fmt: skip
    assert (await blind.decide(PASSPORT))["method"] == "default"


async def test_the_route_node_probes_as_the_runs_owner(
    make_graph: Callable[..., BoundGraph],
) -> None:
    vault = Probe({PASSPORT: 0.9})
    graph = make_graph(agents=[chat_agent(), probing("vault", vault)])
    state = await graph.ainvoke({"messages": [HumanMessage(PASSPORT)]}, owner="alice")
    assert state["route"]["method"] == "data" and state["answer"] == "vault answered"
    assert vault.calls == [(PASSPORT, "alice")]


async def test_chat_without_a_model_names_the_exact_request_for_each_agent(
    make_graph: Callable[..., BoundGraph],
) -> None:
    message = 'Where is the "blue" folder?'
    vault = probing("vault", Probe({message: 0.2}), description="Finds things you stored.",
                    examples=("Where are my keys?",))  # fmt: skip
    graph = make_graph(agents=[chat_agent(), vault])
    state = await graph.ainvoke({"messages": [HumanMessage(message)]})
    assert state["route"]["method"] == "default"
    answer = state["answer"]
    assert "No language model is configured" in answer
    # why it came here, including the closest data match
    assert "the closest data match was the vault agent's, 0.20 <" in answer
    # the graph used directly (no app): the request is the graph's input
    body = {"messages": [{"type": "human", "content": message}], "target_agent": "vault"}
    request = json.dumps(body)
    assert f"- vault: Finds things you stored.\n  Ask it: {request}" in answer
    assert 'For example: "Where are my keys?"' in answer
    # the request it names is exact: sent as it says, the agent answers
    asked = await graph.ainvoke({"messages": [HumanMessage(message)], "target_agent": "vault"})
    assert asked["answer"] == "vault answered"
