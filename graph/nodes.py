"""The graph's spine: `ingest`, `route`, `detect_handoff`, `finalize`, and their edge functions.

Each node is a small function `state -> partial update`. Those that need settings or services
are made by a `make_*` factory that closes over them (the builder calls these), so the functions
LangGraph runs stay plain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.types import Overwrite

from graph.registry import AgentRegistry
from graph.routing import Router, decision
from graph.state import AgentAnswer, MultiAgentState

Node = Callable[[MultiAgentState], dict[str, Any]]
AsyncNode = Callable[[MultiAgentState], Awaitable[dict[str, Any]]]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def last_user_text(messages: list[AnyMessage]) -> str:
    """The text of the latest human message ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            content = message.content
            return content if isinstance(content, str) else str(content)
    return ""


def prune(messages: list[AnyMessage], keep_last: int) -> list[RemoveMessage]:
    """Removals that keep the first message and the last `keep_last`."""
    if len(messages) <= keep_last + 1:
        return []
    return [RemoveMessage(id=m.id) for m in messages[1:-keep_last] if m.id is not None]


# --- ingest ----------------------------------------------------------------------------------


def make_ingest(keep_last: int) -> Node:
    def ingest(state: MultiAgentState) -> dict[str, Any]:
        """Start a turn: prune the conversation, stamp times, reset the per-turn fields."""
        stamp = now_iso()
        return {
            "messages": prune(state.get("messages", []), keep_last),
            "created_at": state.get("created_at") or stamp,
            "updated_at": stamp,
            "route": None,
            "handoff_count": 0,
            "handoff_reason": None,
            "visited_agents": Overwrite([]),
            "agent_answers": Overwrite({}),
            "stage_ms": Overwrite({}),
            "errors": Overwrite([]),
            "answer": "",
        }

    return ingest


# --- route -----------------------------------------------------------------------------------


def make_route(router: Router, registry: AgentRegistry) -> AsyncNode:
    async def route(state: MultiAgentState) -> dict[str, Any]:
        """Decide which agent(s) handle the message (or honour an explicit/handoff target)."""
        target = state.get("target_agent")
        if target and target in registry:
            method = "handoff" if state.get("handoff_count", 0) else "explicit"
            reason = state.get("handoff_reason") or f"{target} was asked for by name"
            chosen = decision([target], method, 1.0, reason)
        else:
            chosen = await router.decide(last_user_text(state.get("messages", [])))
        return {
            "route": chosen,
            "target_agent": None,
            "previous_agent": state.get("current_agent"),
            "current_agent": chosen["agent"],
            "visited_agents": list(chosen["agents"]),
        }

    return route


# --- handoff ---------------------------------------------------------------------------------


def _latest_answers(state: MultiAgentState) -> list[AgentAnswer]:
    answers = state.get("agent_answers") or {}
    route = state.get("route")
    ran = route["agents"] if route else []
    return [answers[name] for name in ran if name in answers]


def make_detect_handoff(registry: AgentRegistry, max_handoffs: int) -> Node:
    def detect_handoff(state: MultiAgentState) -> dict[str, Any]:
        """Send the turn back to `route` when an agent found the request belongs elsewhere.

        Bounded: at most `max_handoffs` per turn, and never to an agent that already ran in
        this turn, so two agents cannot bounce a message between them.
        """
        count = state.get("handoff_count", 0)
        visited = set(state.get("visited_agents") or [])
        for answer in _latest_answers(state):
            target = answer.get("handoff_to")
            if not target or target not in registry or target in visited:
                continue
            if count >= max_handoffs:
                return {"errors": [f"handoff to {target} refused: {max_handoffs} handoffs done"]}
            reason = answer.get("handoff_reason") or f"{answer.get('agent')} handed off"
            return {"target_agent": target, "handoff_reason": reason, "handoff_count": count + 1}
        return {"target_agent": None}

    return detect_handoff


def after_handoff(state: MultiAgentState) -> Literal["route", "finalize"]:
    """Back to `route` when `detect_handoff` chose a target, else on to `finalize`."""
    return "route" if state.get("target_agent") else "finalize"


# --- finalize --------------------------------------------------------------------------------


def make_finalize(registry: AgentRegistry) -> Node:
    def finalize(state: MultiAgentState) -> dict[str, Any]:
        """Merge the agents' answers into one reply, and close the turn."""
        answers = [a for a in _latest_answers(state) if a.get("answer")]
        if not answers:
            answers = [a for a in (state.get("agent_answers") or {}).values() if a.get("answer")]
        if not answers:
            problems = "; ".join(state.get("errors") or []) or "no agent produced an answer"
            text = f"Sorry, I could not answer this ({problems})."
            agent = state.get("current_agent") or registry.default
        elif len(answers) == 1:
            text = answers[0]["answer"]
            agent = answers[0].get("agent", registry.default)
        else:
            text = "\n\n".join(f"**{_title(a.get('agent', '?'))}**\n{a['answer']}" for a in answers)
            agent = answers[0].get("agent", registry.default)
        turn = state.get("turn_count", 0) + 1
        stamp = now_iso()
        return {
            "messages": [AIMessage(content=text, name=agent)],
            "answer": text,
            "turn_count": turn,
            "updated_at": stamp,
            "agent_contexts": _contexts(state, answers, turn, stamp),
        }

    return finalize


def _contexts(
    state: MultiAgentState, answers: list[AgentAnswer], turn: int, stamp: str
) -> dict[str, dict[str, Any]]:
    """Per-domain bookkeeping for the agents that answered (merged into `agent_contexts`)."""
    previous = state.get("agent_contexts") or {}
    updates: dict[str, dict[str, Any]] = {}
    for answer in answers:
        name = answer.get("agent")
        if not name:
            continue
        handled = int(previous.get(name, {}).get("turns_handled", 0)) + 1
        updates[name] = {
            "turns_handled": handled,
            "last_turn": turn,
            "last_answered_at": stamp,
            "last_method": answer.get("method"),
        }
    return updates


def _title(agent: str) -> str:
    return agent.replace("_", " ").capitalize()
