"""The root state of the one Switchyard graph: only what every turn shares.

Each agent is a subgraph with a state of its own (``agents.contract.state.AgentState`` plus
its working fields): the root passes it the :class:`~agents.contract.state.AgentInput` keys and
merges back the :class:`~agents.contract.state.AgentOutput` keys. Per-turn fields are reset by
``ingest`` with LangGraph's ``Overwrite``, which bypasses a reducer.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agents.contract.state import AgentInput, AgentOutput


class MultiAgentState(AgentInput, AgentOutput, total=False):
    """The whole root state: the agents' interface keys plus the turn's bookkeeping."""

    current_agent: str | None
    """The agent handling the current turn."""
    previous_agent: str | None
    """The agent that handled the previous turn (or before a handoff)."""
    target_agent: str | None
    """An explicit target (asked for by name, or set by a handoff); `route` honours it."""
    handoff_reason: str | None
    """Why the last handoff happened."""
    handoff_count: int
    """Handoffs in the current turn (bounded by MAX_HANDOFFS)."""
    visited_agents: Annotated[list[str], operator.add]
    """Agents that ran in the current turn; a handoff never returns to one of them."""
    answer: str
    """The final answer of the last turn."""
    turn_count: int
    """Completed turns in this session."""
    created_at: str
    """When the session's first turn started (ISO 8601, UTC)."""
    updated_at: str
    """When the last turn finished (ISO 8601, UTC)."""


class ChatInput(TypedDict, total=False):
    """What a caller sends to start a turn (the graph's input schema)."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The new user message(s)."""
    user_id: str
    """The caller's id."""
    session_id: str
    """The thread id."""
    target_agent: str | None
    """Ask for this agent by name instead of routing."""
    agent_input: dict[str, Any] | None
    """Structured input for the agent asked for by name (validated by that agent)."""
