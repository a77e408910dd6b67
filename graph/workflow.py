"""The Switchyard graph factory: `build_graph()` returns the builder; compile it at the edge.

    START -> ingest -> route -> <agent>[, <agent>] -> detect_handoff -> finalize -> END
                         ^                                |
                         +--------- handoff (bounded) ----+

Each agent is one node: its own compiled subgraph (Studio shows its stages with ``xray``).
Nothing here runs at import: the app compiles the graph at start-up with the Redis saver, and
Studio gets it from the app's graph factory (``app/studio.py``, named by langgraph.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from agents.contract.context import AgentServices, RunContext, context_schema_for
from agents.contract.quality import gated
from agents.contract.spec import AgentSpec
from graph.nodes import (
    after_handoff,
    agents_for,
    ingest,
    make_detect_handoff,
    make_finalize,
    make_route,
)
from graph.registry import HANDOFF, AgentRegistry
from graph.state import ChatInput, MultiAgentState

#: The compiled Switchyard graph, with its state, context and input types.
SwitchyardGraph = CompiledStateGraph[MultiAgentState, RunContext, ChatInput, MultiAgentState]


def build_registry(agents: Sequence[AgentSpec] | None = None) -> AgentRegistry:
    """The registry of `agents` (default: every shipped agent, see `graph.agents`)."""
    if agents is None:
        from graph.agents import default_agents

        agents = default_agents()
    return AgentRegistry(agents)


def build_graph(
    registry: AgentRegistry, services: AgentServices
) -> StateGraph[MultiAgentState, RunContext, ChatInput, MultiAgentState]:
    """The builder of the one Switchyard graph over `registry`'s agents (not compiled)."""
    context_schema: Any = context_schema_for(registry.options())
    builder = StateGraph(MultiAgentState, context_schema=context_schema, input_schema=ChatInput)
    builder.add_node("ingest", gated("ingest", ingest))
    builder.add_node("route", gated("route", make_route(registry)))
    # Deferred: when two agents run in parallel, the handoff check waits for both.
    builder.add_node(HANDOFF, gated(HANDOFF, make_detect_handoff(registry)), defer=True)
    builder.add_node("finalize", gated("finalize", make_finalize(registry)))
    cards = registry.cards
    for agent in registry:
        builder.add_node(agent.name, agent.build(cards, services))
        builder.add_edge(agent.name, HANDOFF)
    builder.add_edge(START, "ingest")
    builder.add_edge("ingest", "route")
    builder.add_conditional_edges("route", agents_for(registry), registry.names)
    builder.add_conditional_edges(HANDOFF, after_handoff, ["route", "finalize"])
    builder.add_edge("finalize", END)
    return builder


def compile_graph(
    registry: AgentRegistry | None,
    services: AgentServices,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
) -> SwitchyardGraph:
    """Build and compile (the API passes the Redis saver and the Postgres store)."""
    builder = build_graph(registry or build_registry(), services)
    return builder.compile(checkpointer=checkpointer, store=store, name="switchyard")
