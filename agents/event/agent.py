"""The event agent: the user's calendar.

A prebuilt ReAct agent (`langchain.agents.create_agent`) over the event tools of
`tools.personal` with the system prompt of `prompts.py`, or, without a chat model, the
deterministic request interpreter calling the same tools. Built once per model and reused.

For the root graph:
- `build_event_subgraph(model)`: the compiled subgraph (state `PersonalAgentState`: `messages`
  plus its private fields `domain_context`, `handoff`, `incoming`, `facts`, `answer`, `method`;
  runtime context `PersonalContext`);
- `run_event_agent(...)`: one turn, returning a `PersonalAgentResult` (answer, method,
  `HandoffDecision`, the domain context to keep in `agent_contexts["event"]`, tool calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langgraph.graph.state import CompiledStateGraph

from agents.event.prompts import EVENT_SYSTEM
from tools.personal.agent_kit import AgentDefinition, PersonalAgent, cached_agent
from tools.personal.context import Domain, HandoffDecision, PersonalAgentResult, PersonalContext
from tools.personal.event_tools import event_tools

NAME: Domain = "event"
DESCRIPTION = (
    "Calendar: create events with time, place and attendees, show what is on, move"
    " or cancel events, find events by topic or person."
)
DEFINITION = AgentDefinition(name=NAME, system_prompt=EVENT_SYSTEM, tools=event_tools)


def build_event_agent(model: BaseChatModel | None, *, max_steps: int = 12) -> PersonalAgent:
    """The event agent for `model` (None = the deterministic interpreter), built once."""
    return cached_agent(DEFINITION, model, max_steps=max_steps)


def build_event_subgraph(
    model: BaseChatModel | None, *, max_steps: int = 12
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The event agent's compiled subgraph (invoke it with `context=PersonalContext(...)`)."""
    return build_event_agent(model, max_steps=max_steps).graph


async def run_event_agent(
    messages: str | Sequence[AnyMessage],
    *,
    context: PersonalContext,
    model: BaseChatModel | None = None,
    domain_context: dict[str, Any] | None = None,
    handoff: HandoffDecision | None = None,
    max_steps: int = 12,
) -> PersonalAgentResult:
    """Run one turn of the event agent.

    `messages`: the user's message or the conversation (the last human message is the request);
    `context`: the user, the services, the time zone; `domain_context`: the `context` this agent
    returned last turn (kept by the caller in `agent_contexts["event"]`); `handoff`: the
    decision of the agent that handed this turn over, if any. Route a returned
    `result.handoff` with `should_handoff` through the root graph's bounded handoff path.
    """
    agent = build_event_agent(model, max_steps=max_steps)
    return await agent.run(
        messages, context=context, domain_context=domain_context, handoff=handoff
    )
