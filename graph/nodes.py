"""The graph's spine: `ingest`, `route`, `detect_handoff`, `finalize`, and their edge functions.

Each node is a small function `state (, runtime) -> partial update`; the settings and models
it needs come from the run's services (`agents.contract.context`). Factories close over the
registry only, which is fixed when the graph is built.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agents.contract.context import AgentServices, RunContext, context_of, services_of
from agents.contract.messages import last_user_text
from agents.contract.state import AgentAnswer, merge_contexts
from graph.registry import AgentRegistry
from graph.routing import Router, decision
from graph.state import MultiAgentState

Node = Callable[[MultiAgentState, Runtime[RunContext]], dict[str, Any]]
AsyncNode = Callable[[MultiAgentState, Runtime[RunContext]], Awaitable[dict[str, Any]]]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def prune(messages: Sequence[AnyMessage], keep_last: int) -> list[RemoveMessage]:
    """Removals that keep the first message and the last `keep_last`."""
    if len(messages) <= keep_last + 1:
        return []
    return [RemoveMessage(id=m.id) for m in messages[1:-keep_last] if m.id is not None]


# --- ingest ----------------------------------------------------------------------------------


# Spine nodes are async although they only compute: LangGraph runs a sync node in a worker
# thread under an async run, and the hop costs more than the work.
async def ingest(state: MultiAgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Start a turn: prune the conversation, stamp times, reset the per-turn fields."""
    keep_last = services_of(runtime).settings.state.message_keep_last
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


# --- route -----------------------------------------------------------------------------------


class RouterCache:
    """One router per services object (the agents' description vectors are computed once)."""

    def __init__(self, registry: AgentRegistry) -> None:
        self.registry = registry
        self._routers: dict[int, tuple[AgentServices, Router]] = {}
        self._lock = threading.Lock()

    def for_services(self, services: AgentServices) -> Router:
        with self._lock:
            found = self._routers.get(id(services))
            if found is None or found[0] is not services:
                s = services.settings
                router = Router(
                    self.registry,
                    embeddings=services.embeddings,
                    llm=lambda: services.llm("fast"),
                    semantic_threshold=s.routing.semantic_threshold,
                    semantic_margin=s.routing.semantic_margin,
                    services=services,
                    data_threshold=s.routing.data_threshold,
                    data_timeout=s.routing.data_timeout_seconds,
                )
                found = self._routers[id(services)] = (services, router)
            return found[1]


def make_route(registry: AgentRegistry) -> AsyncNode:
    routers = RouterCache(registry)

    async def route(state: MultiAgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Decide which agent(s) handle the message (or honour an explicit/handoff target)."""
        target = state.get("target_agent")
        if target and target in registry:
            method = "handoff" if state.get("handoff_count", 0) else "explicit"
            reason = state.get("handoff_reason") or f"{target} was asked for by name"
            chosen = decision([target], method, 1.0, reason)
        else:
            context = context_of(runtime)
            router = routers.for_services(context.require_services())
            # the data probes search what the run's agents would: the run's owner (set by the
            # app) and its options (the knowledge agent's filters)
            chosen = await router.decide(last_user_text(state.get("messages", [])), context)
        return {
            "route": chosen,
            "target_agent": None,
            "previous_agent": state.get("current_agent"),
            "current_agent": chosen["agent"],
            "visited_agents": list(chosen["agents"]),
        }

    return route


def agents_for(registry: AgentRegistry) -> Callable[[MultiAgentState], list[str]]:
    """The routing function after `route`: the node of every chosen agent."""

    def to_agents(state: MultiAgentState) -> list[str]:
        route = state.get("route")
        chosen = route["agents"] if route else []
        return [n for n in chosen if n in registry] or [registry.default]

    return to_agents


def make_start(
    ingest_node: Callable[..., Any], route_node: Callable[..., Any]
) -> Callable[..., Any]:
    """The first step of a turn: `ingest`, then `route`, in one node (each keeps its stage
    timing and quality gate).

    Why one step: every step is a checkpoint, and clients read a thread's last few (agent-chat-
    ui reads 10 to find the branches an edit made); a turn is four checkpoints this way. `route`
    stays a node of its own for handoffs, which come back to it.
    """

    async def start(state: MultiAgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        started = await ingest_node(state, runtime)
        fresh = {k: v.value if isinstance(v, Overwrite) else v for k, v in started.items()}
        fresh["messages"] = state.get("messages", [])  # ingest's are removals (pruning)
        routed = await route_node(cast(MultiAgentState, {**state, **fresh}), runtime)
        timings = started["stage_ms"]
        timings = timings.value if isinstance(timings, Overwrite) else timings
        return {
            **started,
            **routed,
            "visited_agents": Overwrite(list(routed.get("visited_agents") or [])),
            "stage_ms": Overwrite({**timings, **(routed.get("stage_ms") or {})}),
        }

    return start


# --- handoff ---------------------------------------------------------------------------------


def _latest_answers(state: MultiAgentState) -> list[AgentAnswer]:
    answers = state.get("agent_answers") or {}
    route = state.get("route")
    ran = route["agents"] if route else []
    return [answers[name] for name in ran if name in answers]


def make_detect_handoff(registry: AgentRegistry) -> AsyncNode:
    async def detect_handoff(
        state: MultiAgentState, runtime: Runtime[RunContext]
    ) -> dict[str, Any]:
        """Send the turn back to `route` when an agent found the request belongs elsewhere.

        Bounded: at most MAX_HANDOFFS per turn, and never to an agent that already ran in
        this turn, so two agents cannot bounce a message between them.
        """
        max_handoffs = services_of(runtime).settings.state.max_handoffs
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


def close_turn(
    state: MultiAgentState, answers: list[AgentAnswer], registry: AgentRegistry
) -> dict[str, Any]:
    """The update that ends a turn: one reply from `answers` (merged when several agents
    answered), the turn's answer and count, and the answering agents' bookkeeping."""
    message_id: str | None = None
    if not answers:
        problems = "; ".join(state.get("errors") or []) or "no agent produced an answer"
        text = f"Sorry, I could not answer this ({problems})."
        agent = state.get("current_agent") or registry.default
    elif len(answers) == 1:
        text = answers[0]["answer"]
        agent = answers[0].get("agent", registry.default)
        message_id = answers[0].get("message_id")
    else:
        text = "\n\n".join(f"**{_title(a.get('agent', '?'))}**\n{a['answer']}" for a in answers)
        agent = answers[0].get("agent", registry.default)
    turn = state.get("turn_count", 0) + 1
    stamp = now_iso()
    return {
        "messages": [AIMessage(content=text, name=agent, id=message_id)],
        "answer": text,
        "turn_count": turn,
        "updated_at": stamp,
        "agent_input": None,  # a turn's structured input is for that turn only
        "agent_contexts": _contexts(state, answers, turn, stamp),
    }


def make_finalize(registry: AgentRegistry) -> AsyncNode:
    async def finalize(state: MultiAgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Merge the agents' answers into one reply, and close the turn (parallel agents, a
        handoff that was refused, or no answer: a lone agent closes its turn itself)."""
        answers = [a for a in _latest_answers(state) if a.get("answer")]
        if not answers:
            answers = [a for a in (state.get("agent_answers") or {}).values() if a.get("answer")]
        return close_turn(state, answers, registry)

    return finalize


# --- the agents' nodes -----------------------------------------------------------------------


def make_agent_node(registry: AgentRegistry, name: str, subgraph: Any) -> Callable[..., Any]:
    """The root node of agent `name`: its subgraph, then, when it is the turn's only agent and
    it answered without handing off, the end of the turn in the same step.

    Why in the same step: a client that regenerates an answer forks from the checkpoint before
    the step that wrote it (agent-chat-ui, the JS SDK's branching); that step must be the
    agent's, or the fork replays the stored answer. It also saves two checkpoints a turn, so an
    edit's fork point stays within the last checkpoints a client reads. The subgraph is called
    from this node (LangGraph finds it through the closure: Studio's xray, the state's
    `subgraphs`, streaming, interrupts and resumption work as for a subgraph node).
    """

    async def run_agent(state: MultiAgentState, config: RunnableConfig) -> dict[str, Any]:
        output: dict[str, Any] = dict(await subgraph.ainvoke(state, config) or {})
        route = state.get("route")
        answer = (output.get("agent_answers") or {}).get(name)
        alone = route is not None and list(route["agents"]) == [name]
        if not alone or not answer or not answer.get("answer") or answer.get("handoff_to"):
            return output  # detect_handoff and finalize take it from here
        # the agent's own context updates and the turn's bookkeeping both go into the merge
        contexts = merge_contexts(state.get("agent_contexts"), output.get("agent_contexts"))
        after = cast(MultiAgentState, {**state, "agent_contexts": contexts})
        closing = close_turn(after, [answer], registry)
        closing["agent_contexts"] = merge_contexts(
            output.get("agent_contexts"), closing["agent_contexts"]
        )
        return {**output, **closing}

    run_agent.__name__ = name
    return run_agent


def after_agent(state: MultiAgentState) -> Literal["detect_handoff", "__end__"]:
    """After an agent: the turn is over when the agent closed it (its answer is set), else
    on to `detect_handoff` (parallel agents, a handoff, or no answer)."""
    return "__end__" if state.get("answer") else "detect_handoff"


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
