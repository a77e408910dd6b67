"""Fixtures for graph tests: small test agents, a scripted-model factory, real embeddings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from config import Settings
from graph.deps import GraphDeps
from graph.registry import AgentRegistry, AgentSpec
from graph.state import AgentAnswer, MultiAgentState
from tests.support.scripted import FixedFactory


def answering_agent(
    name: str,
    *,
    keywords: tuple[str, ...] = (),
    examples: tuple[str, ...] = (),
    description: str = "",
    handoff_to: str | None = None,
    calls: list[str] | None = None,
) -> Callable[[AgentRegistry], AgentSpec]:
    """A one-node agent answering "<name> answered" (or handing off), recording each run."""

    def node(state: MultiAgentState) -> dict[str, Any]:
        if calls is not None:
            calls.append(name)
        answer = AgentAnswer(agent=name, answer=f"{name} answered", method="test")
        if handoff_to:
            answer = AgentAnswer(
                agent=name, answer="", method="test", handoff_to=handoff_to, handoff_reason="test"
            )
        return {"agent_answers": {name: answer}}

    def make(registry: AgentRegistry) -> AgentSpec:
        return AgentSpec(
            name=name,
            description=description or f"The {name} agent.",
            keywords=keywords,
            examples=examples,
            entry=name,
            exit=name,
            install=lambda builder, deps: builder.add_node(name, node),
            nodes=(name,),
        )

    return make


@pytest.fixture(scope="session")
def embeddings() -> Iterator[Embeddings]:
    """The real bundled MiniLM model (loaded once per run)."""
    from agents.embeddings import get_embeddings

    yield get_embeddings(Settings(_env_file=None))


@pytest.fixture
def make_deps(embeddings: Embeddings) -> Callable[..., GraphDeps]:
    def build(model: BaseChatModel | None = None, **settings: Any) -> GraphDeps:
        values: dict[str, Any] = {"llm_provider": "none"}
        values.update(settings)
        deps = GraphDeps(Settings(_env_file=None, **values))
        deps.llm_factory = FixedFactory(model)  # type: ignore[assignment]
        deps.embeddings_override = embeddings
        return deps

    return build
