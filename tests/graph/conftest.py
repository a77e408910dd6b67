"""Fixtures for graph tests: small test agents, a scripted-model factory, real embeddings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph

from agents.contract.spec import AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from config import Settings
from tests.support.graphs import BoundGraph, agent_services, bound_graph


def answering_agent(
    name: str,
    *,
    keywords: tuple[str, ...] = (),
    examples: tuple[str, ...] = (),
    description: str = "",
    handoff_to: str | None = None,
    calls: list[str] | None = None,
) -> AgentSpec:
    """A one-node agent answering "<name> answered" (or handing off), recording each run."""

    def node(state: AgentState) -> dict[str, Any]:
        if calls is not None:
            calls.append(name)
        answer = AgentAnswer(agent=name, answer=f"{name} answered", method="test")
        if handoff_to:
            answer = AgentAnswer(
                agent=name, answer="", method="test", handoff_to=handoff_to, handoff_reason="test"
            )
        return {"agent_answers": {name: answer}}

    def build(peers: Any, services: Any) -> Any:
        builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
        builder.add_node(name, node)
        builder.add_edge(START, name)
        return builder.compile()

    return AgentSpec(
        name=name,
        description=description or f"The {name} agent.",
        keywords=keywords,
        examples=examples,
        build=build,
    )


@pytest.fixture(scope="session")
def embeddings() -> Iterator[Embeddings]:
    """The real bundled MiniLM model (loaded once per run)."""
    from tools.providers.embeddings import get_embeddings

    yield get_embeddings(Settings(_env_file=None))


@pytest.fixture
def make_graph(embeddings: Embeddings) -> Callable[..., BoundGraph]:
    """``make_graph(model, agents=..., checkpointer=..., **settings)``: the graph bound to
    services with ``model`` (None: no model), the real embeddings and these settings."""

    def build(
        model: BaseChatModel | None = None,
        *,
        agents: list[AgentSpec] | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        **settings: Any,
    ) -> BoundGraph:
        values: dict[str, Any] = {"llm_provider": "none"}
        values.update(settings)
        services = agent_services(Settings(_env_file=None, **values), model, embeddings=embeddings)
        return bound_graph(services, agents=agents, checkpointer=checkpointer)

    return build
