"""The machinery the three personal agents share: their subgraph and the call that runs a turn.

Each agent (task, food, event; `spec.py`) is an `AgentDefinition` (name, system prompt,
tool-list factory) turned into a `PersonalAgent`, built once and reused:

    agent = PersonalAgent(definition, model)          # model: BaseChatModel | None
    result = await agent.run("what's due this week?", context=PersonalContext(...),
                             domain_context=previous.context, handoff=None)

The subgraph (`agent.graph`, state `PersonalAgentState`) is

    prepare → agent (a `create_agent` ReAct loop with the agent's tools)        → finish
    prepare → interpret → tools (a ToolNode with the SAME tools) → respond      → finish

depending on whether a chat model is configured. `prepare` loads the user's long-term facts;
the domain context, the facts and any incoming handoff reach the model as a context section of
its system prompt (recomputed on every model call, never stored in `messages`); `finish` fills
the handoff's subject from what the turn created and refuses a handoff straight back to the
agent that handed over (ping-pong).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime

from agents.personal.context import (
    Domain,
    HandoffDecision,
    PersonalAgentResult,
    PersonalAgentState,
    PersonalContext,
    ToolCallRecord,
)
from agents.personal.interpret import Situation, interpret
from agents.personal.tools import handoff_subject
from tools.personal import memory

#: Most items of the last list that the context section spells out.
CONTEXT_LIST_ITEMS = 20


@dataclass(frozen=True)
class AgentDefinition:
    """What makes one personal agent: its name, prompt and tools."""

    name: Domain
    system_prompt: str
    tools: Callable[[], list[BaseTool]]
    """A factory: each built agent gets its own tool instances."""


def context_section(state: PersonalAgentState) -> str:
    """The context section of the prompt: facts, handoff, last item and last list shown."""
    lines: list[str] = []
    facts = state.get("facts") or []
    if facts:
        lines.append("Known facts about the user: " + "; ".join(facts))
    incoming = state.get("incoming") or {}
    if incoming.get("should_handoff"):
        extra = {k: v for k, v in (incoming.get("context") or {}).items() if k != "from"}
        lines.append(
            f"Handed over by the {(incoming.get('context') or {}).get('from', 'previous')} "
            f"agent: {incoming.get('reason', '')}. Details: {json.dumps(extra, default=str)}"
        )
    ctx = state.get("domain_context") or {}
    if last := ctx.get("last_item"):
        lines.append(
            f"Last item touched ({ctx.get('last_action', '')}): #{last['id']} {last['label']}"
        )
    listed = ctx.get("last_list") or []
    if listed:
        lines.append(
            f"Last list shown ({ctx.get('last_list_label', '')}); 'the second one' means "
            "position 2:"
        )
        for i, entry in enumerate(listed[:CONTEXT_LIST_ITEMS], start=1):
            lines.append(f"  {i}. #{entry['id']} {entry['label']}")
    return "\n".join(lines)


def _last_human(messages: Sequence[BaseMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return -1


def turn_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages of the current turn (after the last human message)."""
    return list(messages[_last_human(messages) + 1 :])


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
    )


class PersonalAgent:
    """One personal agent, compiled once: `graph` (its subgraph) and `run` (one turn)."""

    def __init__(
        self, definition: AgentDefinition, model: BaseChatModel | None, *, max_steps: int = 12
    ) -> None:
        if not 2 <= max_steps <= 100:
            raise ValueError("max_steps must be between 2 and 100")
        self.definition = definition
        self.name: Domain = definition.name
        self.model = model
        self.max_steps = max_steps
        self.tools = definition.tools()
        self.method: Literal["llm", "interpreter"] = "llm" if model is not None else "interpreter"
        self.graph = self._build()

    # --- graph -----------------------------------------------------------------------------

    def _build(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(
            PersonalAgentState, context_schema=PersonalContext
        )
        builder.add_node("prepare", self._prepare)
        builder.add_node("finish", self._finish)
        builder.add_edge(START, "prepare")
        if self.model is not None:
            builder.add_node("agent", self._react_agent())
            builder.add_edge("prepare", "agent")
            builder.add_edge("agent", "finish")
        else:
            builder.add_node("interpret", self._interpret)
            builder.add_node("tools", ToolNode(self.tools))
            builder.add_node("respond", self._respond)
            builder.add_edge("prepare", "interpret")
            builder.add_conditional_edges("interpret", _after_interpret, ["tools", "respond"])
            builder.add_edge("tools", "respond")
            builder.add_edge("respond", "finish")
        builder.add_edge("finish", END)
        return builder.compile(name=f"{self.name}_agent")

    def _react_agent(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        base = self.definition.system_prompt

        @dynamic_prompt
        def with_context(request: ModelRequest[Any]) -> str:
            section = context_section(cast(PersonalAgentState, request.state))
            return f"{base}\n\n## Context\n{section}" if section else base

        assert self.model is not None
        return create_agent(
            self.model,
            self.tools,
            middleware=[with_context],
            state_schema=PersonalAgentState,
            context_schema=PersonalContext,
            name=f"{self.name}_react",
        )

    async def _prepare(
        self, state: PersonalAgentState, runtime: Runtime[PersonalContext]
    ) -> dict[str, Any]:
        ctx = runtime.context
        store = ctx.memory or runtime.store
        facts = list(ctx.facts)
        if store is not None:
            facts += [f for f in await memory.recall(store, ctx.user_id) if f not in facts]
        return {"facts": facts, "handoff": None, "method": self.method}

    async def _interpret(
        self, state: PersonalAgentState, runtime: Runtime[PersonalContext]
    ) -> dict[str, Any]:
        ctx = runtime.context
        incoming = (
            HandoffDecision.model_validate(state["incoming"]) if state.get("incoming") else None
        )
        messages = state["messages"]
        index = _last_human(messages)
        text = _text(messages[index]) if index >= 0 else ""
        if incoming and incoming.context.get("request"):
            text = str(incoming.context["request"])
        situation = Situation(
            now=ctx.clock(),
            tz=ctx.timezone,
            default_hour=ctx.default_hour,
            domain_context=dict(state.get("domain_context") or {}),
            incoming=incoming,
        )
        plan = interpret(self.name, text, situation)
        update: dict[str, Any] = {}
        if plan.handoff is not None:
            update["handoff"] = plan.handoff.model_dump()
        calls = [
            {
                "name": c.name,
                "args": c.args,
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "tool_call",
            }
            for c in plan.calls
        ]
        update["messages"] = [AIMessage(content="", tool_calls=calls)] if calls else []
        if not calls:
            reply = plan.reply
            if plan.handoff is not None:
                reply = f"That is for the {plan.handoff.target_agent} agent; handing over."
            update["answer"] = reply or ""
        return update

    async def _respond(self, state: PersonalAgentState) -> dict[str, Any]:
        results = [m for m in turn_messages(state["messages"]) if isinstance(m, ToolMessage)]
        parts = [_text(m) for m in results]
        if not parts:
            return {"messages": [AIMessage(content=state.get("answer", ""))]}
        if state.get("handoff"):
            target = (state.get("handoff") or {}).get("target_agent")
            parts.append(f"Handing the rest over to the {target} agent.")
        answer = "\n".join(parts)
        return {"answer": answer, "messages": [AIMessage(content=answer)]}

    async def _finish(self, state: PersonalAgentState) -> dict[str, Any]:
        update: dict[str, Any] = {}
        handoff = state.get("handoff")
        incoming = state.get("incoming") or {}
        if handoff:
            decision = HandoffDecision.model_validate(handoff)
            source = (incoming.get("context") or {}).get("from")
            if decision.target_agent in (self.name, source):
                decision = HandoffDecision(
                    reason=f"handoff to {decision.target_agent} refused: "
                    "it would go back to where the turn came from"
                )
            else:
                context = {**handoff_subject(state.get("domain_context") or {}), **decision.context}
                decision = decision.model_copy(update={"context": context})
            update["handoff"] = decision.model_dump()
        if self.model is not None:
            last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
            update["answer"] = _text(last) if last is not None else ""
            if handoff and not update["answer"]:
                update["answer"] = f"Handing over to the {handoff.get('target_agent')} agent."
        return update

    # --- one turn --------------------------------------------------------------------------

    async def run(
        self,
        messages: str | Sequence[AnyMessage],
        *,
        context: PersonalContext,
        domain_context: dict[str, Any] | None = None,
        handoff: HandoffDecision | None = None,
    ) -> PersonalAgentResult:
        """Run one turn and return the answer, the handoff decision and the new domain context.

        `messages`: the user's message, or the conversation so far (the last human message is
        the request); `domain_context`: what this agent returned as `context` last turn;
        `handoff`: the decision of the agent that handed this turn over, if any.
        """
        history: list[AnyMessage] = (
            [HumanMessage(content=messages)] if isinstance(messages, str) else list(messages)
        )
        state: dict[str, Any] = {
            "messages": history,
            "domain_context": dict(domain_context or {}),
            "incoming": handoff.model_dump() if handoff and handoff.should_handoff else None,
        }
        out = await self.graph.ainvoke(
            state, context=context, config={"recursion_limit": 2 * self.max_steps + 6}
        )
        return result_of(self.name, self.method, out, len(history))


def _after_interpret(state: PersonalAgentState) -> Literal["tools", "respond"]:
    last = state["messages"][-1] if state["messages"] else None
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "respond"


def result_of(
    name: Domain, method: Literal["llm", "interpreter"], state: dict[str, Any], start: int
) -> PersonalAgentResult:
    """A `PersonalAgentResult` from the subgraph's final state (`start`: messages given in)."""
    new = state["messages"][start:]
    outcome = {m.tool_call_id: m for m in new if isinstance(m, ToolMessage)}
    calls: list[ToolCallRecord] = []
    data: list[dict[str, Any]] = []
    for message in new:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                result = outcome.get(call["id"] or "")
                ok = result is not None and result.status != "error"
                calls.append(ToolCallRecord(name=call["name"], args=call["args"], ok=ok))
                if result is not None and isinstance(result.artifact, dict) and result.artifact:
                    data.append(result.artifact)
    handoff = state.get("handoff")
    return PersonalAgentResult(
        agent=name,
        answer=str(state.get("answer") or ""),
        method=method,
        handoff=HandoffDecision.model_validate(handoff) if handoff else HandoffDecision(),
        context=dict(state.get("domain_context") or {}),
        tool_calls=calls,
        data=data,
    )


async def run_agent(
    definition: AgentDefinition,
    messages: str | Sequence[AnyMessage],
    *,
    context: PersonalContext,
    model: BaseChatModel | None = None,
    domain_context: dict[str, Any] | None = None,
    handoff: HandoffDecision | None = None,
    max_steps: int = 12,
) -> PersonalAgentResult:
    """Run one turn of the agent `definition` makes (built once per model, then reused).

    `messages`: the user's message or the conversation (the last human message is the request);
    `context`: the user, the services, the time zone; `domain_context`: the `context` this agent
    returned last turn (kept by the caller in `agent_contexts[<agent>]`); `handoff`: the
    decision of the agent that handed this turn over, if any. Route a returned
    `result.handoff` with `should_handoff` through the root graph's bounded handoff path.
    """
    agent = cached_agent(definition, model, max_steps=max_steps)
    return await agent.run(
        messages, context=context, domain_context=domain_context, handoff=handoff
    )


_BUILT: dict[tuple[str, int, int], tuple[BaseChatModel | None, PersonalAgent]] = {}
_MAX_BUILT = 16


def cached_agent(
    definition: AgentDefinition, model: BaseChatModel | None, *, max_steps: int = 12
) -> PersonalAgent:
    """The agent for (`definition`, `model`, `max_steps`), built on first use and reused.

    Keyed by the model object's identity (models are not hashable); the entry keeps the model
    alive so the identity cannot be reused by another object. At most 16 are kept.
    """
    key = (definition.name, id(model), max_steps)
    found = _BUILT.get(key)
    if found is not None and found[0] is model:
        return found[1]
    agent = PersonalAgent(definition, model, max_steps=max_steps)
    if len(_BUILT) >= _MAX_BUILT:
        _BUILT.pop(next(iter(_BUILT)))
    _BUILT[key] = (model, agent)
    return agent
