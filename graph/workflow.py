"""The Switchyard graph factory: `build_graph()` returns the builder; compile it at the edge.

    START -> ingest (+ route) -> <agent> -> END     (one agent answered: it ends the turn)
                    |                  `-> detect_handoff -> finalize -> END
                    `-> <agent>, <agent> --^          |
    route -> <agent>[, <agent>]  <-- handoff (bounded)-+

Each agent is one node running its own compiled subgraph (Studio shows its stages with
``xray``). A turn's first step ingests and routes (``make_start``); a lone agent that answered
ends the turn in its own step (``make_agent_node``). So a turn is four checkpoints (its input,
then one per step), and regenerating an answer re-runs the agent that gave it.
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
    after_agent,
    after_handoff,
    agents_for,
    ingest,
    make_agent_node,
    make_detect_handoff,
    make_finalize,
    make_route,
    make_start,
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
    route = gated("route", make_route(registry))
    builder.add_node("ingest", make_start(gated("ingest", ingest), route))
    builder.add_node("route", route)
    # Deferred: when two agents run in parallel, the handoff check waits for both.
    builder.add_node(HANDOFF, gated(HANDOFF, make_detect_handoff(registry)), defer=True)
    builder.add_node("finalize", gated("finalize", make_finalize(registry)))
    cards = registry.cards
    for agent in registry:
        subgraph = agent.build(cards, services)
        builder.add_node(agent.name, make_agent_node(registry, agent.name, subgraph))
        builder.add_conditional_edges(agent.name, after_agent, [HANDOFF, END])
    builder.add_edge(START, "ingest")
    # a turn starts with ingest (which routes too); handoffs come back to route
    builder.add_conditional_edges("ingest", agents_for(registry), registry.names)
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
