"""The state keys an agent shares with the root graph, and their reducers.

An agent is a subgraph with a state schema of its own: it extends :class:`AgentState` with
its private working fields. The root graph passes the :class:`AgentInput` keys in and takes
the :class:`AgentOutput` keys back (the subgraph is compiled with ``input_schema=AgentInput``
and ``output_schema=AgentOutput``), so an agent's working state never reaches the root state,
and every turn the agent starts from a fresh working state.

``errors`` and ``stage_ms`` are outputs only: the agent starts them empty, so the root's
reducers add exactly what the agent produced.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

RouteMethod = Literal["keyword", "semantic", "data", "llm", "default", "handoff", "explicit"]


class RouteDecision(TypedDict):
    """Where a message goes, how that was decided, and how sure the router is."""

    agent: str
    """The primary agent."""
    agents: list[str]
    """Every agent that runs (two when a message clearly belongs to both)."""
    method: RouteMethod
    """keyword | semantic | data | llm | default | handoff | explicit."""
    confidence: float
    """0..1; for `default` this is 0."""
    reason: str
    """A short human-readable explanation."""


class AgentAnswer(TypedDict, total=False):
    """One agent's answer to the current turn."""

    agent: str
    """The agent's registry name."""
    answer: str
    """The text shown to the user."""
    method: str
    """How it was produced: `llm`, or the deterministic strategy's name."""
    data: dict[str, Any]
    """Structured extras for the API (citations, grades, findings, ...)."""
    handoff_to: str | None
    """Set when the agent found the request belongs to another agent."""
    handoff_reason: str | None
    """Why the agent hands off."""
    message_id: str | None
    """The id of the model message whose tokens were streamed as this answer: the turn's
    answer message keeps it, so a client that showed the stream sees one message."""


# --- reducers --------------------------------------------------------------------------------


def merge_contexts(
    left: dict[str, dict[str, Any]] | None, right: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """Merge per-domain context dicts: a domain's keys are updated, other domains kept."""
    merged = {domain: dict(values) for domain, values in (left or {}).items()}
    for domain, values in (right or {}).items():
        merged.setdefault(domain, {}).update(values)
    return merged


def collect_answers(
    left: dict[str, AgentAnswer] | None, right: dict[str, AgentAnswer] | None
) -> dict[str, AgentAnswer]:
    """Collect this turn's answers by agent (parallel agents each add theirs)."""
    return {**(left or {}), **(right or {})}


def merge_timings(
    left: dict[str, float] | None, right: dict[str, float] | None
) -> dict[str, float]:
    """Add stage latencies; a stage that runs twice in a turn (a retry) sums."""
    merged = dict(left or {})
    for stage, ms in (right or {}).items():
        merged[stage] = round(merged.get(stage, 0.0) + ms, 3)
    return merged


# --- what an agent reads and writes ----------------------------------------------------------


class _Contexts(TypedDict, total=False):
    agent_contexts: Annotated[dict[str, dict[str, Any]], merge_contexts]
    """Long-lived context per domain (an agent reads every domain, writes its own)."""


class AgentInput(_Contexts, total=False):
    """What the root graph passes to an agent."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation, latest user message last."""
    user_id: str
    """Who the session belongs to (the API key owner, or a caller-supplied id)."""
    session_id: str
    """The thread id of this session."""
    route: RouteDecision | None
    """How this turn was routed."""
    agent_input: dict[str, Any] | None
    """Structured input of this turn for the agent asked for by name (e.g. an analysis
    request from the API); the agent validates it with its own schema."""


class AgentOutput(_Contexts, total=False):
    """What an agent gives back to the root graph."""

    agent_answers: Annotated[dict[str, AgentAnswer], collect_answers]
    """The agent's answer, keyed by its name."""
    errors: Annotated[list[str], operator.add]
    """Stage errors handled without failing the run."""
    stage_ms: Annotated[dict[str, float], merge_timings]
    """Latency per stage (ms), recorded by the quality gate."""


class AgentState(AgentInput, AgentOutput, total=False):
    """The base of every agent's own state schema."""
