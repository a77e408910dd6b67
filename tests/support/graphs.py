"""Running the Switchyard graph in tests: services from settings, a scripted model (or none)
and the real embeddings, passed to every run as the graph's runtime context."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from agents.contract.context import AgentServices, RunContext
from agents.contract.spec import AgentSpec
from config import Settings
from graph.workflow import SwitchyardGraph, build_registry, compile_graph
from tests.support.scripted import FixedFactory
from tools.test_analysis.filework import FileWork


def agent_services(
    settings: Settings,
    model: BaseChatModel | None = None,
    *,
    embeddings: Embeddings | None = None,
    resources: Sequence[object] = (),
) -> AgentServices:
    """Agent services answering with ``model`` (None: no model) and ``embeddings``, with the
    test-smell engine open and ``resources`` provided."""
    services = AgentServices(
        settings,
        FixedFactory(model),
        embeddings_factory=(lambda: embeddings) if embeddings is not None else None,
    )
    # the engines the app's components open that need no server (the test-smell engine)
    services.provide(FileWork.from_settings(settings))
    for resource in resources:
        services.provide(resource)
    return services


@dataclass
class BoundGraph:
    """A compiled graph that runs with ``services`` (and per-call options) as its context."""

    graph: SwitchyardGraph
    services: AgentServices
    options: dict[str, Any] = field(default_factory=dict)

    def context(self, **options: Any) -> RunContext:
        schema: Any = self.graph.context_schema
        values = {**self.options, **options}
        context: RunContext = schema(services=self.services, **values)
        return context

    async def ainvoke(
        self, inp: Any, config: RunnableConfig | None = None, **options: Any
    ) -> dict[str, Any]:
        state: dict[str, Any] = await self.graph.ainvoke(
            inp, config, context=self.context(**options)
        )
        return state

    def invoke(self, inp: Any, config: RunnableConfig | None = None, **options: Any) -> Any:
        return self.graph.invoke(inp, config, context=self.context(**options))

    def astream(
        self, inp: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        return self.graph.astream(inp, config, context=self.context(), **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)


def bound_graph(
    services: AgentServices,
    *,
    agents: Sequence[AgentSpec] | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    **options: Any,
) -> BoundGraph:
    """The graph of ``agents`` (default: the shipped ones) bound to ``services``."""
    graph = compile_graph(build_registry(agents), services, checkpointer=checkpointer)
    return BoundGraph(graph, services, options)


async def _run_saved(
    graph: BoundGraph, inp: Any, **options: Any
) -> tuple[dict[str, Any], InMemorySaver, str]:
    saver = InMemorySaver()
    compiled = graph.graph.builder.compile(checkpointer=saver)
    thread = uuid.uuid4().hex
    config: RunnableConfig = {"configurable": {"thread_id": thread}, "recursion_limit": 100}
    root: dict[str, Any] = await compiled.ainvoke(inp, config, context=graph.context(**options))
    return root, saver, thread


def _agent_checkpoints(saver: InMemorySaver, thread: str, agent: str) -> list[dict[str, Any]]:
    """The agent's saved states of the thread, oldest first (its own namespace, not those of
    subgraphs its nodes run: ``agent:<task>|node:<task>``)."""
    states: list[dict[str, Any]] = []
    for namespace in saver.storage.get(thread, {}):
        if namespace.startswith(f"{agent}:") and "|" not in namespace:
            config: RunnableConfig = {
                "configurable": {"thread_id": thread, "checkpoint_ns": namespace}
            }
            saved = list(saver.list(config))
            states.extend(dict(t.checkpoint["channel_values"]) for t in reversed(saved))
    return states


async def run_with_agent_state(
    graph: BoundGraph, inp: Any, agent: str, **options: Any
) -> dict[str, Any]:
    """Run one turn of ``graph`` (recompiled here with an in-memory saver) and return the root
    state merged over ``agent``'s own final state: its working fields (the root state holds
    only the shared keys)."""
    root, saver, thread = await _run_saved(graph, inp, **options)
    states = _agent_checkpoints(saver, thread, agent)
    return {**(states[-1] if states else {}), **root}


async def agent_history(
    graph: BoundGraph, inp: Any, agent: str, **options: Any
) -> list[dict[str, Any]]:
    """Every saved state of ``agent``'s subgraph in one turn of ``graph``, oldest first."""
    _root, saver, thread = await _run_saved(graph, inp, **options)
    return _agent_checkpoints(saver, thread, agent)
