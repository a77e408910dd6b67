"""The agent registry: adding an agent to Switchyard is registering it here.

An agent names itself, describes what it handles (the router embeds the description and the
examples), lists routing keywords, and adds its stage nodes to the builder. `entry` is where
`route` sends a message. When the agent ends in one node, `exit` names it and the builder adds
`exit -> detect_handoff`; an agent that leaves through a conditional edge (a retry loop) wires
that edge to `HANDOFF` itself and leaves `exit` unset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

    from graph.deps import GraphDeps

#: The node every agent goes on to when it is done.
HANDOFF = "detect_handoff"

#: Adds an agent's nodes and internal edges to the builder.
NodeInstaller = Callable[["StateGraph[Any, Any, Any, Any]", "GraphDeps"], Any]


@dataclass(frozen=True)
class AgentSpec:
    """One agent as the router and the graph builder see it."""

    name: str
    description: str
    keywords: tuple[str, ...]
    examples: tuple[str, ...]
    entry: str
    install: NodeInstaller
    nodes: tuple[str, ...] = field(default=())
    exit: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"agent name {self.name!r} must be an identifier")
        if self.entry not in self.nodes or (self.exit is not None and self.exit not in self.nodes):
            raise ValueError(f"agent {self.name!r}: entry and exit must be among its nodes")


class AgentRegistry:
    """An ordered set of agents; the first registered with `default=True` is the fallback."""

    def __init__(self, agents: Iterable[AgentSpec] = (), *, default: str = "chat") -> None:
        self._agents: dict[str, AgentSpec] = {}
        self.default = default
        for agent in agents:
            self.register(agent)

    def register(self, agent: AgentSpec) -> None:
        if agent.name in self._agents:
            raise ValueError(f"agent {agent.name!r} is registered twice")
        taken = {node for other in self._agents.values() for node in other.nodes}
        clash = taken.intersection(agent.nodes)
        if clash:
            raise ValueError(f"agent {agent.name!r} reuses node names {sorted(clash)}")
        self._agents[agent.name] = agent

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def __getitem__(self, name: str) -> AgentSpec:
        return self._agents[name]

    def __iter__(self) -> Iterator[AgentSpec]:
        return iter(self._agents.values())

    def __len__(self) -> int:
        return len(self._agents)

    @property
    def names(self) -> list[str]:
        return list(self._agents)

    def entry_nodes(self) -> list[str]:
        return [agent.entry for agent in self._agents.values()]
