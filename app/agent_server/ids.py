"""The assistants of this deployment: one for the graph, one per agent (fixed, read-only).

Assistant ids are the Agent Server's: ``uuid5(NAMESPACE_GRAPH, graph_id)`` for a graph's default
assistant (so ``assistant_id`` may be the graph name, ``switchyard``, or that UUID), and
``uuid5(NAMESPACE_GRAPH, "switchyard:<agent>")`` for an agent's, whose runs go to that agent
(``target_agent``) instead of being routed; the agent's name works as its id too.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["GRAPH_ID", "NAMESPACE_GRAPH", "AssistantDef", "assistants_of", "thread_defaults"]

GRAPH_ID = "switchyard"
#: langgraph-api's namespace for the ids of graphs' default assistants.
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
GRAPH_ASSISTANT_ID = str(uuid.uuid5(NAMESPACE_GRAPH, GRAPH_ID))


@dataclass(frozen=True)
class AssistantDef:
    """One assistant: the graph's, or an agent's (``agent`` set)."""

    assistant_id: str
    name: str
    description: str
    agent: str | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        if self.agent is None:
            return {"created_by": "system"}
        return {"created_by": "switchyard", "agent": self.agent}


def assistants_of(agents: list[tuple[str, str]]) -> list[AssistantDef]:
    """The graph's assistant, then one per agent (``(name, description)`` pairs)."""
    found = [
        AssistantDef(
            GRAPH_ASSISTANT_ID,
            GRAPH_ID,
            "Switchyard: every message is routed to the agent that owns it.",
        )
    ]
    for name, description in agents:
        found.append(
            AssistantDef(
                str(uuid.uuid5(NAMESPACE_GRAPH, f"{GRAPH_ID}:{name}")),
                name,
                f"The {name} agent only (no routing): {description}",
                agent=name,
            )
        )
    return found


def thread_defaults() -> dict[str, Any]:
    """Metadata every thread has unless set otherwise: the graph and its assistant (what
    agent-chat-ui and Studio filter their thread lists by)."""
    return {"graph_id": GRAPH_ID, "assistant_id": GRAPH_ASSISTANT_ID}
