"""The task agent: the user's to-do list and reminders.

A prebuilt ReAct agent (`langchain.agents.create_agent`) over the task tools of
`tools.personal` with the system prompt of `prompts.py`, or, without a chat model, the
deterministic request interpreter calling the same tools. Built once per model and reused.

For the root graph:
- `build_task_subgraph(model)`: the compiled subgraph (state `PersonalAgentState`: `messages`
  plus its private fields `domain_context`, `handoff`, `incoming`, `facts`, `answer`, `method`;
  runtime context `PersonalContext`);
- `run_task_agent(...)`: one turn, returning a `PersonalAgentResult` (answer, method,
  `HandoffDecision`, the domain context to keep in `agent_contexts["task"]`, tool calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langgraph.graph.state import CompiledStateGraph

from agents.task.prompts import TASK_SYSTEM
from tools.personal.agent_kit import AgentDefinition, PersonalAgent, cached_agent
from tools.personal.context import Domain, HandoffDecision, PersonalAgentResult, PersonalContext
from tools.personal.task_tools import task_tools

NAME: Domain = "task"
DESCRIPTION = (
    "To-dos and reminders: create, list (due dates, priority, tags), complete,"
    " change and delete tasks; find tasks by topic."
)
DEFINITION = AgentDefinition(name=NAME, system_prompt=TASK_SYSTEM, tools=task_tools)


def build_task_agent(model: BaseChatModel | None, *, max_steps: int = 12) -> PersonalAgent:
    """The task agent for `model` (None = the deterministic interpreter), built once."""
    return cached_agent(DEFINITION, model, max_steps=max_steps)


def build_task_subgraph(
    model: BaseChatModel | None, *, max_steps: int = 12
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The task agent's compiled subgraph (invoke it with `context=PersonalContext(...)`)."""
    return build_task_agent(model, max_steps=max_steps).graph


async def run_task_agent(
    messages: str | Sequence[AnyMessage],
    *,
    context: PersonalContext,
    model: BaseChatModel | None = None,
    domain_context: dict[str, Any] | None = None,
    handoff: HandoffDecision | None = None,
    max_steps: int = 12,
) -> PersonalAgentResult:
    """Run one turn of the task agent.

    `messages`: the user's message or the conversation (the last human message is the request);
    `context`: the user, the services, the time zone; `domain_context`: the `context` this agent
    returned last turn (kept by the caller in `agent_contexts["task"]`); `handoff`: the
    decision of the agent that handed this turn over, if any. Route a returned
    `result.handoff` with `should_handoff` through the root graph's bounded handoff path.
    """
    agent = build_task_agent(model, max_steps=max_steps)
    return await agent.run(
        messages, context=context, domain_context=domain_context, handoff=handoff
    )
