"""The event agent's registration: its card (what the router knows of it) and its spec."""

from __future__ import annotations

from agents.contract.personal import personal_spec
from agents.contract.spec import AgentSpec
from agents.event.agent import DEFINITION

DESCRIPTION = (
    "The user's own calendar: puts events, meetings and appointments on the calendar with a "
    "time, place and attendees, shows what is on for a day or week, moves, changes and cancels "
    "events, and finds them by topic or person."
)

#: Routing keywords (whole words, two distinct ones route a message here).
KEYWORDS = (
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

EXAMPLES = (
    "Lunch with Sam on Thursday 12:30 at Rosa's",
    "Which meetings are on my calendar this week?",
    "Put the dentist appointment on Monday at 3pm on my calendar",
    "Move my meeting with Anna to Friday",
    "Do I have any appointments on Saturday?",
    "Cancel the team offsite",
)


def event_agent() -> AgentSpec:
    """The event agent (the user's calendar)."""
    return personal_spec(DEFINITION, description=DESCRIPTION, keywords=KEYWORDS, examples=EXAMPLES)
