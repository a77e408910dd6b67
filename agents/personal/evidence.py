"""What a message's own wording proves about a personal agent, before any stored item does.

Nutrients. An amount of energy or of a nutrient ("30g protein", "about 450 kcal", "12 g of
fat") is what a food log records and nothing else here does: "log a protein shake after my
workout, 30g protein" names no meal the user has logged before and reached the default agent
(issue 28). The food agent's data probe scores it `AMOUNT`.

Time spans. An event has a start and an end; a task has a due time and a meal a moment. So a
message that gives a span of clock time ("from 3 to 4pm", "10-11am", "14:00–15:30") is about a
calendar entry, even when the user's tasks hold a similar title ("call the plumber") and the
words read like a to-do ("add a call with ..."): issue 28 saw such requests routed to the task
agent. The event agent's data probe scores it `SPAN` (at ROUTE_DATA_OVERRIDE's default, so two
incidental keywords of another agent yield to it), with no I/O.
"""

from __future__ import annotations

import re

#: The event probe's score for a message that gives a span of clock time.
SPAN = 0.8
#: The food probe's score for a message that gives an amount of energy or of a nutrient.
AMOUNT = 0.8

_NUTRIENT = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:k?cals?|calories|kj)\b"
    r"|\b\d+(?:[.,]\d+)?\s*(?:g|gr|grams?|mg)\s+(?:of\s+)?"
    r"(?:protein|carbs?|carbohydrates?|fat|fats|fib(?:re|er)|sugars?|salt|sodium)\b",
    re.IGNORECASE,
)

_CLOCK = r"\d{1,2}(?:[:.h]\d{2})?"
_MERIDIEM = r"\s*(?:am|pm|a\.m\.|p\.m\.|h)?"
#: "from 3 to 4pm", "from 14:00 until 15:30", "3pm-4pm", "10–11am", "9:30 - 10:15"
_SPAN = re.compile(
    rf"\bfrom\s+{_CLOCK}{_MERIDIEM}\s+(?:to|till|until)\s+{_CLOCK}{_MERIDIEM}"
    rf"|\b{_CLOCK}{_MERIDIEM}\s*[-–]\s*{_CLOCK}\s*(?:am|pm|a\.m\.|p\.m\.)"
    rf"|\b\d{{1,2}}[:.]\d{{2}}\s*[-–]\s*\d{{1,2}}[:.]\d{{2}}\b",
    re.IGNORECASE,
)


#: A clock time, not a count: a meridiem or minutes ("from 2 to 3 servers" is no span).
_IS_CLOCK = re.compile(r"\d\s*(?:am|pm|a\.m\.|p\.m\.)|\d[:.h]\d{2}", re.IGNORECASE)


def time_span(message: str) -> bool:
    """Whether ``message`` gives a span of clock time (see the module docstring)."""
    return any(_IS_CLOCK.search(m.group(0)) for m in _SPAN.finditer(message[:2000]))


def nutrient_amount(message: str) -> bool:
    """Whether ``message`` gives an amount of energy or of a nutrient (see the module)."""
    return _NUTRIENT.search(message[:2000]) is not None
