"""The Switchyard graph: `build_graph()` returns the builder; compile it at the edge.

- The API compiles it with the Redis saver (`compile_graph(deps, checkpointer=...)`).
- Studio (`langgraph dev`) loads `graph` from this module: the same graph compiled WITHOUT a
  checkpointer (langgraph-api refuses graphs that carry their own); langgraph.json names our
  Redis saver for it instead. It is built at import from the environment's settings.

    START -> ingest -> route -> <agent entry> ... -> detect_handoff -> finalize -> END
                         ^                              |
                         +------- handoff (bounded) ----+
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from graph.context import RunContext
from graph.deps import GraphDeps
from graph.nodes import (
    after_handoff,
    make_detect_handoff,
    make_finalize,
    make_ingest,
    make_route,
)
from graph.quality import gated
from graph.registry import HANDOFF, AgentRegistry, AgentSpec
from graph.routing import Router, entry_nodes_for
from graph.state import ChatInput, MultiAgentState

AgentFactory = Callable[[AgentRegistry], AgentSpec]

#: The compiled Switchyard graph, with its state, context and input types.
SwitchyardGraph = CompiledStateGraph[MultiAgentState, RunContext, ChatInput, MultiAgentState]


def default_agents() -> list[AgentFactory]:
    """Every agent Switchyard ships, in registration order (the first is the default)."""
    from agents.chat.agent import chat_agent
    from agents.knowledge.agent import knowledge_agent
    from agents.test_analysis.agent import analysis_agent

    return [chat_agent, analysis_agent, knowledge_agent]


def build_registry(factories: Sequence[AgentFactory] | None = None) -> AgentRegistry:
    registry = AgentRegistry()
    for make in factories or default_agents():
        registry.register(make(registry))
    return registry


def build_graph(
    deps: GraphDeps | None = None,
    *,
    agents: Sequence[AgentFactory] | None = None,
    router: Router | None = None,
) -> StateGraph[MultiAgentState, RunContext, ChatInput, MultiAgentState]:
    """The builder of the one Switchyard graph (not compiled)."""
    deps = deps or GraphDeps.from_settings()
    settings = deps.settings
    registry = build_registry(agents)
    router = router or Router(
        registry,
        embeddings=deps.embeddings,
        llm=lambda: deps.llm("fast"),
        semantic_threshold=settings.route_semantic_threshold,
        semantic_margin=settings.route_semantic_margin,
    )
    builder = StateGraph(MultiAgentState, context_schema=RunContext, input_schema=ChatInput)
    builder.add_node("ingest", gated("ingest", make_ingest(settings.message_keep_last)))
    builder.add_node("route", gated("route", make_route(router, registry)))
    # Deferred: when two agents run in parallel, their branches may differ in length; the
    # handoff check (and so `finalize`) waits until every branch has finished.
    builder.add_node(
        HANDOFF,
        gated(HANDOFF, make_detect_handoff(registry, settings.max_handoffs)),
        defer=True,
    )
    builder.add_node("finalize", gated("finalize", make_finalize(registry)))
    for agent in registry:
        agent.install(builder, deps)
        if agent.exit is not None:
            builder.add_edge(agent.exit, HANDOFF)
    builder.add_edge(START, "ingest")
    builder.add_edge("ingest", "route")
    builder.add_conditional_edges("route", entry_nodes_for(registry), registry.entry_nodes())
    builder.add_conditional_edges(HANDOFF, after_handoff, ["route", "finalize"])
    builder.add_edge("finalize", END)
    builder.registry = registry  # type: ignore[attr-defined]
    return builder


def compile_graph(
    deps: GraphDeps | None = None,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
    agents: Sequence[AgentFactory] | None = None,
) -> SwitchyardGraph:
    """Build and compile (the API passes the Redis saver and the Postgres store)."""
    builder = build_graph(deps, agents=agents)
    compiled = builder.compile(checkpointer=checkpointer, store=store, name="switchyard")
    compiled.registry = builder.registry  # type: ignore[attr-defined]
    return compiled


#: Studio's graph (`langgraph.json`): compiled WITHOUT a checkpointer, as langgraph-api requires;
#: its runs persist through the saver langgraph.json names. Building it opens nothing: models,
#: embeddings and stores are created on first use.
graph = compile_graph()
