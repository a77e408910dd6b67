"""The three personal agents (task, food, event) in the root graph: one spec builder they share.

Each agent (`spec.py`) is only what makes it itself: its card (description, routing keywords,
examples), its system prompt and its tool set (`AgentDefinition`). Everything else is the same
for the three and lives here:

    START -> personal_turn -> END

`personal_turn` builds the turn's `PersonalContext` from the run (the run's owner as the user,
never a caller-supplied id; the `PersonalService` the app opened; the time zone of the
`personal_timezone` option, else PERSONAL_TIMEZONE; webhooks and the long-term memory store when
the app provided them) and runs the agent's own subgraph (`agents.personal.kit`: a ReAct
agent with a chat model, the deterministic interpreter without one).

Handoffs go through the spine's bounded path (`graph.nodes.detect_handoff`): the agent's
`HandoffDecision` is recorded in `agent_contexts[<agent>]["handoff"]` (and in the answer's
`data`), its target and reason in the answer's `handoff_to` / `handoff_reason`. The receiving
agent, routed with method `handoff`, reads that decision back from `agent_contexts` (the
subject and time of "it", the rest of the request, what the first agent already did).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from pydantic import field_validator

from agents.contract.context import AgentOptions, AgentServices, RunContext, context_of, override
from agents.contract.messages import last_user_text
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from agents.personal.context import DOMAINS, HandoffDecision, PersonalAgentResult, PersonalContext
from agents.personal.evidence import (
    AMOUNT,
    SPAN,
    WORDED,
    asks_event_detail,
    event_wording,
    nutrient_amount,
    task_wording,
    time_span,
)
from agents.personal.kit import AgentDefinition, PersonalAgent
from agents.personal.tools import handoff_subject
from tools.operations import EngineNotOpen
from tools.personal.models import Kind
from tools.personal.service import PersonalService, check_timezone
from tools.personal.webhooks import WebhookSender

log = logging.getLogger(__name__)

#: The table each personal agent keeps its items in (the data probe searches it).
KINDS: dict[str, Kind] = {"task": "task", "food": "meal", "event": "event"}
#: What the spine's `finalize` keeps per domain: never handed to the agent as its context.
BOOKKEEPING = ("turns_handled", "last_turn", "last_answered_at", "last_method", "handoff")
NOT_OPEN = (
    "The personal data store is not open in this process: the app opens it at start-up "
    "(app/components/personal.py)."
)


class PersonalOptions(AgentOptions):
    """Per-run options of the personal agents (one model shared by the three)."""

    personal_timezone: str | None = override(
        "personal_timezone",
        "IANA time zone this request's dates are read in (e.g. Europe/Berlin).",
    )

    @field_validator("personal_timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        return check_timezone(value) if value is not None else None


def incoming_handoff(name: str, state: Mapping[str, Any]) -> HandoffDecision | None:
    """The decision another personal agent handed this turn over with, if this turn is one.

    Only a turn the spine routed by handoff counts, and only a decision that names this agent
    (a stale decision of an earlier turn is ignored: the spine's route carries its reason).
    """
    route = state.get("route") or {}
    if route.get("method") != "handoff":
        return None
    contexts = state.get("agent_contexts") or {}
    for domain in DOMAINS:
        raw = (contexts.get(domain) or {}).get("handoff")
        if domain == name or not raw:
            continue
        decision = HandoffDecision.model_validate(raw)
        if decision.should_handoff and decision.target_agent == name:
            if not route.get("reason") or decision.reason == route.get("reason"):
                return decision
    return None


#: Openers before the request itself ("please also put it ...").
_OPENERS = re.compile(
    r"^(?:(?:please|pls|ok|okay|and|also|then|now|can you|could you|would you)[\s,]+)+",
    re.IGNORECASE,
)
#: A request about the item just handled: "put it on my calendar", "add that to my list".
_ABOUT_IT = re.compile(
    r"^(?:put|add|schedule|block|log|make|save|note)\b.*\b(?:it|that|this)\b", re.IGNORECASE
)


def carried_over(name: str, state: Mapping[str, Any]) -> HandoffDecision | None:
    """A request like "also put it on my calendar", routed straight to this agent: "it" is the
    item another personal agent touched in the previous turn, carried over as if handed over.

    Only a request that starts with such a verb about "it" counts ("remind me to X and put it
    on my calendar" is the task agent's own request, handed over the usual way).
    """
    text = _OPENERS.sub("", last_user_text(state.get("messages") or []).strip())
    if not _ABOUT_IT.search(text):
        return None
    contexts = state.get("agent_contexts") or {}
    latest = max((int(c.get("last_turn") or 0) for c in contexts.values()), default=0)
    for domain in DOMAINS:
        kept = contexts.get(domain) or {}
        if domain == name or not kept.get("last_item"):
            continue
        if latest and int(kept.get("last_turn") or 0) == latest:
            return HandoffDecision(
                should_handoff=True,
                target_agent=name,
                reason=f"a follow-up on the item the {domain} agent handled last turn",
                context={"from": domain, "request": text, **handoff_subject(kept)},
            )
    return None


def own_context(name: str, state: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's consolidated domain context of earlier turns (without the spine's keys)."""
    kept = (state.get("agent_contexts") or {}).get(name) or {}
    return {k: v for k, v in kept.items() if k not in BOOKKEEPING}


def answer_of(
    name: str, result: PersonalAgentResult, incoming: HandoffDecision | None
) -> dict[str, Any]:
    """The root-state update of one turn: the answer, the domain context, the decision."""
    decision = result.handoff
    text = result.answer
    if decision.should_handoff:
        # what this agent did travels with the decision: the receiving agent's answer (the
        # one the turn shows) starts with it
        decision = decision.model_copy(update={"context": {**decision.context, "done": text}})
    if incoming is not None and incoming.context.get("done"):
        text = f"{incoming.context['done']}\n{text}".strip()
    data: dict[str, Any] = {
        "tool_calls": [call.model_dump() for call in result.tool_calls],
        "results": result.data,
        "handoff": decision.model_dump(),
    }
    if incoming is not None:
        data["handed_over"] = incoming.model_dump()
    answer = AgentAnswer(
        agent=name,
        answer=text,
        method=result.method,
        data=data,
        handoff_to=decision.target_agent if decision.should_handoff else None,
        handoff_reason=decision.reason if decision.should_handoff else None,
    )
    context = {**result.context, "handoff": decision.model_dump()}
    return {"agent_answers": {name: answer}, "agent_contexts": {name: context}}


def _optional(services: AgentServices, kind: type[Any]) -> Any:
    try:
        return services.engine(kind)
    except EngineNotOpen:
        return None


def make_turn(agent: PersonalAgent) -> Any:
    """The node running one turn of `agent` for the run's owner."""
    name = agent.name

    async def personal_turn(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Run the agent on the latest message (or the request handed over) and answer."""
        run = context_of(runtime)
        services = run.require_services()
        try:
            service = services.engine(PersonalService)
        except EngineNotOpen:
            answer = AgentAnswer(agent=name, answer=NOT_OPEN, method="none", data={})
            return {"agent_answers": {name: answer}, "errors": [f"{name}: {NOT_OPEN}"]}
        settings = services.settings
        zone = run.options(PersonalOptions).personal_timezone or settings.personal.timezone
        ctx = PersonalContext(
            user_id=run.owner,
            service=service,
            timezone=zone,
            webhooks=_optional(services, WebhookSender),
            memory=_optional(services, BaseStore),
            default_hour=settings.personal.default_hour,
        )
        incoming = incoming_handoff(name, state) or carried_over(name, state)
        try:
            result = await agent.run(
                list(state.get("messages") or []),
                context=ctx,
                domain_context=own_context(name, state),
                handoff=incoming,
            )
        except GraphBubbleUp:
            raise
        except Exception as exc:  # the turn answers; the failure is recorded
            log.warning("%s agent failed: %s: %s", name, type(exc).__name__, exc)
            line = f"personal_turn: the {name} agent failed ({type(exc).__name__}: {exc})"
            text = f"The {name} agent could not finish this request ({type(exc).__name__})."
            answer = AgentAnswer(agent=name, answer=text, method=agent.method, data={})
            return {"agent_answers": {name: answer}, "errors": [line]}
        return answer_of(name, result, incoming)

    return personal_turn


def _has_messages(state: Mapping[str, Any]) -> str | None:
    messages = state.get("messages")
    if not isinstance(messages, list) or not any(m.type == "human" for m in messages):
        return "the state has no user message to answer"
    return None


def make_build(definition: AgentDefinition) -> Any:
    """`build(peers, services)` of a personal agent: its ReAct agent (or interpreter) is
    compiled here, once per graph, with the process's chat model."""

    def build(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
        agent = PersonalAgent(
            definition, services.llm("chat"), max_steps=services.settings.personal.max_steps
        )
        builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
        builder.add_node(
            "personal_turn", gated("personal_turn", make_turn(agent), check_input=_has_messages)
        )
        builder.add_edge(START, "personal_turn")
        builder.add_edge("personal_turn", END)
        return builder.compile(name=definition.name)

    return build


def make_probe(name: str) -> Any:
    """The router's data tier for a personal agent: how close the owner's own nearest item
    is to the message (cosine, 0..1); None without the store, without semantic search (no
    pgvector) or without items. The probes also read the message's own wording: a span of clock
    time, a command to move or block something to a time, or a question whether the user is free
    is an event's, an amount of a nutrient a meal's, "todo ..." or "put X on my list" a task's;
    a question where or how long, when the user's events match, an event's
    (`agents.personal.evidence`)."""
    kind = KINDS[name]

    async def probe(message: str, context: RunContext) -> float | None:
        services, owner = context.require_services(), context.owner
        worded = None
        if kind == "event" and time_span(message):
            worded = SPAN
        elif kind == "event" and event_wording(message):
            worded = WORDED
        elif kind == "meal" and nutrient_amount(message):
            worded = AMOUNT
        elif kind == "task" and task_wording(message):
            worded = WORDED
        service = _optional(services, PersonalService)
        if service is None or service.semantic_search_off:
            return worded
        hits = await service.search(owner, kind, message, limit=1)
        stored = float(hits[0].score) if hits else None
        if (
            kind == "event"
            and stored is not None
            and stored >= services.settings.routing.data_threshold
            and asks_event_detail(message)
        ):
            worded = max(worded or 0.0, SPAN)
        return max((s for s in (stored, worded) if s is not None), default=None)

    return probe


def personal_spec(
    definition: AgentDefinition,
    *,
    description: str,
    keywords: tuple[str, ...],
    examples: tuple[str, ...],
) -> AgentSpec:
    """The `AgentSpec` of a personal agent (its model's tokens stream as the answer)."""
    return AgentSpec(
        name=definition.name,
        description=description,
        keywords=keywords,
        examples=examples,
        build=make_build(definition),
        answer_nodes=frozenset({"model"}),
        options=PersonalOptions,
        probe=make_probe(definition.name),
    )
