"""The task agent's registration: its card (what the router knows of it) and its spec."""

from __future__ import annotations

from agents.contract.personal import personal_spec
from agents.contract.spec import AgentSpec
from agents.task.agent import DEFINITION

DESCRIPTION = (
    "The user's own to-do list and reminders: creates reminders and tasks with due dates, "
    "priorities and tags, lists what is due or overdue, marks tasks done, changes and deletes "
    "them, finds tasks by topic, and sends reminder webhooks."
)

#: Routing keywords (whole words, two distinct ones route a message here).
KEYWORDS = (
    "remind me",
    "remind",
    "reminder",
    "reminders",
    "to-do",
    "to-dos",
    "todo",
    "todos",
    "to-do list",
    "task",
    "tasks",
    "due",
    "overdue",
    "deadline",
    "deadlines",
    "mark it done",
    "done",
    "priority",
    "high-priority",
    "urgent",
    "don't let me forget",
    "forget",
    "set a reminder",
    "check off",
    "my tasks",
)

EXAMPLES = (
    "Remind me to renew my passport next Friday at 9",
    "What's due this week?",
    "Add a high-priority task to file the tax return by the 15th",
    "Mark the second one done",
    "Which of my tasks are overdue?",
    "Show my open to-dos about the move",
    "Delete the reminder about the car service",
    "I have to renew the lease before June",
)


def task_agent() -> AgentSpec:
    """The task agent (the user's to-dos and reminders)."""
    return personal_spec(DEFINITION, description=DESCRIPTION, keywords=KEYWORDS, examples=EXAMPLES)
