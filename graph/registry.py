"""The agent registry: the ordered set of agents one graph is built from.

Adding an agent to Switchyard is one line in :func:`graph.agents.default_agents` (or one
:meth:`AgentRegistry.register` call): the spine routes to it by its card, adds its subgraph as
one node, and streams the tokens of the nodes its spec names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agents.contract.context import AgentOptions
from agents.contract.spec import AgentCard, AgentSpec

#: The spine's own nodes: no agent may take these names.
SPINE_NODES = frozenset({"ingest", "route", "detect_handoff", "finalize"})
#: The node every agent goes on to when it is done.
HANDOFF = "detect_handoff"


def agent_of(namespace: tuple[str, ...]) -> str:
    """The agent a streamed chunk came from ('' for the spine): its namespace's first part is
    the agent's node, ``("knowledge:<task id>", ...)``."""
    return namespace[0].split(":", 1)[0] if namespace else ""


class AgentRegistry:
    """An ordered set of agents; ``default`` (chat unless told) answers what nothing else does."""

    def __init__(self, agents: Iterable[AgentSpec] = (), *, default: str = "chat") -> None:
        self._agents: dict[str, AgentSpec] = {}
        self.default = default
        for agent in agents:
            self.register(agent)

    def register(self, agent: AgentSpec) -> None:
        """Add an agent (its name must be new and not one of the spine's nodes)."""
        if agent.name in self._agents:
            raise ValueError(f"agent {agent.name!r} is registered twice")
        if agent.name in SPINE_NODES:
            raise ValueError(f"agent name {agent.name!r} is taken by the graph's own nodes")
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
        """The agents' names, in registration order."""
        return list(self._agents)

    @property
    def cards(self) -> tuple[AgentCard, ...]:
        """What every agent knows of the others."""
        return tuple(
            AgentCard(
                a.name, a.description, a.keywords, a.examples, answer_from_data=a.answer_from_data
            )
            for a in self._agents.values()
        )

    def options(self) -> list[type[AgentOptions]]:
        """The per-run options models of the agents that declare one (each once)."""
        seen: list[type[AgentOptions]] = []
        for agent in self._agents.values():
            if agent.options is not None and agent.options not in seen:
                seen.append(agent.options)
        return seen

    def streams(self, agent: str, node: str) -> bool:
        """Whether ``node`` of ``agent`` writes the answer token by token."""
        spec = self._agents.get(agent)
        return spec is not None and node in spec.answer_nodes
