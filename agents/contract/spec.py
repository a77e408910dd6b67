"""The agent spec: one value per agent, all the spine needs to route to it and run it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents.contract.context import AgentOptions, AgentServices, RunContext

#: An agent's compiled subgraph (its own state schema; AgentInput in, AgentOutput out).
AgentGraph = CompiledStateGraph[Any, Any, Any, Any]
#: ``build(peers, services)``: an agent's subgraph.
AgentBuilder = Callable[[Sequence["AgentCard"], AgentServices], AgentGraph]
#: ``probe(message, context)``: a calibrated 0..1 score of the run's owner's data for the
#: message (the router's data tier), or None when it cannot tell. ``context`` is the run's
#: typed context (its services, its owner, its options such as the knowledge ``filters``), so
#: a probe searches exactly what the agent would search in that run.
DataProbe = Callable[[str, RunContext], Awaitable[float | None]]


@dataclass(frozen=True)
class DataAnswer:
    """A model-free answer an agent found in the owner's own data for a message routed
    elsewhere: what the chat agent says without a model instead of a dead end."""

    text: str
    """The answer as the agent would give it (quoted passages with ``[n]`` and its sources)."""
    score: float
    """How well the data matched the message (0..1, the agent's probe scale)."""
    threshold: float
    """The calibrated score it had to reach (the setting that sets it is named in `setting`)."""
    setting: str
    """The setting holding `threshold`."""
    citations: tuple[dict[str, Any], ...] = ()
    """The cited sources (title, source, ids, snippet), for the API's ``data``."""


#: ``answer(message, context)``: a confident model-free answer from the run's owner's data (as
#: the run's options narrow it), or None (not confident, no data, cannot tell).
DataAnswerer = Callable[[str, RunContext], Awaitable[DataAnswer | None]]


@dataclass(frozen=True)
class AgentCard:
    """What other parts (the router, the chat agent) know of an agent."""

    name: str
    """The registry name: the root graph's node, the key of its answer and context."""
    description: str
    """What it handles (the semantic router embeds it with the examples)."""
    keywords: tuple[str, ...] = ()
    """Routing keywords (whole words, case-insensitive)."""
    examples: tuple[str, ...] = ()
    """Example messages it should get."""
    answer_from_data: DataAnswerer | None = field(default=None, kw_only=True, compare=False)
    """A model-free answer from the owner's own data (the knowledge agent's: a confident
    passage of the knowledge base), which the chat agent gives without a model."""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"agent name {self.name!r} must be an identifier")


@dataclass(frozen=True)
class AgentSpec(AgentCard):
    """An agent: its card plus how to build and run it."""

    build: AgentBuilder = field(default=lambda peers, services: _no_build(), kw_only=True)
    """Builds the agent's subgraph from the cards of every registered agent (for handoffs) and
    the process's services (a prebuilt ReAct agent is compiled with its chat model and tools;
    nodes still read the run's services from the runtime context)."""
    answer_nodes: frozenset[str] = field(default=frozenset(), kw_only=True)
    """Nodes of the subgraph whose chat-model tokens are the answer (streamed to clients)."""
    options: type[AgentOptions] | None = field(default=None, kw_only=True)
    """The per-run options this agent reads (composed into the run context)."""
    probe: DataProbe | None = field(default=None, kw_only=True)
    """How well the owner's own data can answer a message (0..1, None: cannot tell), for the
    router's data tier; e.g. the knowledge agent's retrieval probe."""


def _no_build() -> AgentGraph:
    raise ValueError("an AgentSpec needs build=")
