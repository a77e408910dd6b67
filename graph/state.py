"""The state of the one Switchyard graph: core fields plus a section per agent.

`MultiAgentState` is a TypedDict whose fields merge through small named reducers defined here;
per-turn fields are reset by `ingest` with LangGraph's `Overwrite`, which bypasses a reducer.
Agents that keep working state (retrieval, analysis) add their section by contributing a
TypedDict that `MultiAgentState` inherits, so the top-level graph shows every stage's fields.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from agents.knowledge.state import KnowledgeSection
from agents.test_analysis.state import AnalysisSection

RouteMethod = Literal["keyword", "semantic", "llm", "default", "handoff"]


class RouteDecision(TypedDict):
    """Where a message goes, how that was decided, and how sure the router is."""

    agent: str
    """The primary agent."""
    agents: list[str]
    """Every agent that runs (two when a message clearly belongs to both)."""
    method: RouteMethod
    """keyword | semantic | llm | default | handoff."""
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


def append_items(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Append items; parallel writers in one step all land."""
    return [*(left or []), *(right or [])]


def merge_timings(
    left: dict[str, float] | None, right: dict[str, float] | None
) -> dict[str, float]:
    """Add stage latencies; a stage that runs twice in a turn (a retry) sums."""
    merged = dict(left or {})
    for stage, ms in (right or {}).items():
        merged[stage] = round(merged.get(stage, 0.0) + ms, 3)
    return merged


# --- state -----------------------------------------------------------------------------------


class CoreState(TypedDict, total=False):
    """Fields every turn uses, whatever agent handles it."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation; `ingest` prunes it to the first message and the last N."""
    user_id: str
    """Who the session belongs to (the API key owner, or a caller-supplied id)."""
    session_id: str
    """The thread id of this session."""
    current_agent: str | None
    """The agent handling the current turn."""
    previous_agent: str | None
    """The agent that handled the previous turn (or before a handoff)."""
    route: RouteDecision | None
    """The routing decision of the current turn."""
    target_agent: str | None
    """An explicit handoff target set by an agent; `route` honours it."""
    handoff_reason: str | None
    """Why the last handoff happened."""
    handoff_count: int
    """Handoffs in the current turn (bounded by MAX_HANDOFFS)."""
    visited_agents: Annotated[list[str], append_items]
    """Agents that ran in the current turn; a handoff never returns to one of them."""
    agent_contexts: Annotated[dict[str, dict[str, Any]], merge_contexts]
    """Long-lived context per domain (e.g. the knowledge agent's last sources)."""
    agent_answers: Annotated[dict[str, AgentAnswer], collect_answers]
    """The current turn's answers by agent; `finalize` merges them."""
    answer: str
    """The final answer of the last turn."""
    turn_count: int
    """Completed turns in this session."""
    created_at: str
    """When the session's first turn started (ISO 8601, UTC)."""
    updated_at: str
    """When the last turn finished (ISO 8601, UTC)."""
    stage_ms: Annotated[dict[str, float], merge_timings]
    """Latency per stage in the current turn (ms), recorded by the quality gate."""
    errors: Annotated[list[str], append_items]
    """Stage errors of the current turn that were handled without failing the run."""


class MultiAgentState(CoreState, KnowledgeSection, AnalysisSection, total=False):
    """The whole graph state: core fields and every agent's section."""


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
