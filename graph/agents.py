"""The agents Switchyard ships: adding one is one line here (its package does the rest)."""

from __future__ import annotations

from agents.analytics.spec import analytics_agent
from agents.chat.spec import chat_agent
from agents.coding.spec import coding_agent
from agents.contract.spec import AgentSpec
from agents.knowledge.spec import knowledge_agent
from agents.personal.spec import event_agent, food_agent, task_agent
from agents.test_analysis.spec import analysis_agent


def default_agents() -> list[AgentSpec]:
    """Every shipped agent, in registration order (routing ties go to the earlier one)."""
    return [
        chat_agent(),
        analysis_agent(),
        knowledge_agent(),
        coding_agent(),
        analytics_agent(),
        task_agent(),
        food_agent(),
        event_agent(),
    ]
