"""The personal agents' registration: the task, food and event agents, three specs from one
builder (`personal_spec`). Each card says what the router knows of its agent: the description,
routing keywords (whole words, two distinct ones route a message here) and examples."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage

from agents.contract.spec import AgentSpec
from agents.personal.context import Domain, PersonalAgentResult
from agents.personal.kit import AgentDefinition, PersonalAgent, cached_agent, run_agent
from agents.personal.prompts import EVENT_SYSTEM, FOOD_SYSTEM, TASK_SYSTEM
from agents.personal.tools import agent_tools
from agents.personal.turn import personal_spec


def definition(name: Domain) -> AgentDefinition:
    """The definition of the personal agent `name`: its prompt and its tools."""
    prompt = {"task": TASK_SYSTEM, "food": FOOD_SYSTEM, "event": EVENT_SYSTEM}[name]
    return AgentDefinition(name=name, system_prompt=prompt, tools=lambda: agent_tools(name))


def build_personal_agent(
    name: Domain, model: BaseChatModel | None, *, max_steps: int = 12
) -> PersonalAgent:
    """The agent `name` for `model` (None = the deterministic interpreter), built once."""
    return cached_agent(definition(name), model, max_steps=max_steps)


async def run_personal_agent(
    name: Domain, messages: str | list[AnyMessage], **options: Any
) -> PersonalAgentResult:
    """One turn of the agent `name` (`options`: those of `kit.run_agent`)."""
    return await run_agent(definition(name), messages, **options)


TASK_DESCRIPTION = (
    "The user's own to-do list and reminders: creates reminders and tasks with due dates, "
    "priorities and tags, lists what is due or overdue, marks tasks done, changes and deletes "
    "them, finds tasks by topic, and sends reminder webhooks."
)
TASK_KEYWORDS = (
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
TASK_EXAMPLES = (
    "Remind me to renew my passport next Friday at 9",
    "What's due this week?",
    "Add a high-priority task to file the tax return by the 15th",
    "Mark the second one done",
    "Which of my tasks are overdue?",
    "Show my open to-dos about the move",
    "Delete the reminder about the car service",
    "I have to renew the lease before June",
)


FOOD_DESCRIPTION = (
    "The user's own food diary: logs what the user ate (breakfast, lunch, dinner, snacks) with "
    "calories and macros, lists meals eaten, sums calories, protein, carbs and fat for a day or "
    "a week, finds similar meals, and sends the daily food summary."
)
FOOD_KEYWORDS = (
    "i had",
    "i ate",
    "ate",
    "eaten",
    "for breakfast",
    "for lunch",
    "for dinner",
    "breakfast",
    "dinner",
    "snack",
    "meal",
    "meals",
    "calories",
    "calorie",
    "kcal",
    "protein",
    "carbs",
    "fat",
    "macros",
    "nutrition",
    "food diary",
    "food log",
    "my macros",
    "my calories",
)
FOOD_EXAMPLES = (
    "I had oatmeal with banana for breakfast, about 350 kcal",
    "What did I eat yesterday?",
    "How many calories did I have this week?",
    "Log a chicken salad for lunch, 520 calories",
    "Meals like the burrito I had last week",
    "Show my healthy dinners under 600 kcal",
)


EVENT_DESCRIPTION = (
    "The user's own calendar: puts events, meetings and appointments on the calendar with a "
    "time, place and attendees, shows what is on for a day or week, moves, changes and cancels "
    "events, and finds them by topic or person."
)
EVENT_KEYWORDS = (
    "calendar",
    "agenda",
    "schedule",
    "scheduled",
    "reschedule",
    "meeting",
    "meetings",
    "appointment",
    "appointments",
    "event",
    "events",
    "what's on",
    "am i free",
    "busy",
    "book",
    "cancel",
    "attendees",
    "my meetings",
    "my schedule",
    "my agenda",
    "my appointments",
)
EVENT_EXAMPLES = (
    "Lunch with Sam on Thursday 12:30 at Rosa's",
    "Which meetings are on my calendar this week?",
    "Put the dentist appointment on Monday at 3pm on my calendar",
    "Move my meeting with Anna to Friday",
    "Do I have any appointments on Saturday?",
    "Cancel the team offsite",
)


def task_agent() -> AgentSpec:
    """The task agent (the user's to-dos and reminders)."""
    return personal_spec(
        definition("task"),
        description=TASK_DESCRIPTION,
        keywords=TASK_KEYWORDS,
        examples=TASK_EXAMPLES,
    )


def food_agent() -> AgentSpec:
    """The food agent (the user's food diary and nutrition)."""
    return personal_spec(
        definition("food"),
        description=FOOD_DESCRIPTION,
        keywords=FOOD_KEYWORDS,
        examples=FOOD_EXAMPLES,
    )


def event_agent() -> AgentSpec:
    """The event agent (the user's calendar)."""
    return personal_spec(
        definition("event"),
        description=EVENT_DESCRIPTION,
        keywords=EVENT_KEYWORDS,
        examples=EVENT_EXAMPLES,
    )
