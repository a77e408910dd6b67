"""The task agent: the user's to-do list and reminders.

Its definition (name, the system prompt of `prompts.py`, its own tools from `tools.personal`);
the machinery it shares with the other personal agents is `tools/personal/agent_kit.py` (a
prebuilt ReAct agent with a chat model, the deterministic interpreter without one), and its
registration in the root graph is `spec.py`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage

from agents.task.prompts import TASK_SYSTEM
from tools.personal.agent_kit import AgentDefinition, PersonalAgent, cached_agent, run_agent
from tools.personal.context import Domain, PersonalAgentResult
from tools.personal.task_tools import task_tools

NAME: Domain = "task"
DEFINITION = AgentDefinition(name=NAME, system_prompt=TASK_SYSTEM, tools=task_tools)


def build_task_agent(model: BaseChatModel | None, *, max_steps: int = 12) -> PersonalAgent:
    """The task agent for `model` (None = the deterministic interpreter), built once."""
    return cached_agent(DEFINITION, model, max_steps=max_steps)


async def run_task_agent(messages: str | list[AnyMessage], **options: Any) -> PersonalAgentResult:
    """One turn of the task agent (`options`: those of `agent_kit.run_agent`)."""
    return await run_agent(DEFINITION, messages, **options)
