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

Commands and questions that name a personal item by its kind (issue 28). A message names what
it wants done with one of the user's items even when it names no stored item and no two
keywords:
- a task: it opens with "todo" or "new task", puts something on the user's list ("put X on my
  list"), checks an item off, or asks not to let the user forget (`task_wording`);
- an event: it moves, shifts, pushes or blocks something to a clock time or a day ("move my
  haircut to 11", "block 9 to 11 on friday"), adds something on a day at a clock time, asks
  whether the user is free or busy, or what is on for a day (`event_wording`). A message that
  names a task ("push the deadline to friday", "move the reminder to 5pm") is the task's.
Both probes score it `WORDED`. A question about what only an event has (where it is, how long
it lasts, when it starts: `asks_event_detail`) raises the event probe's score to `SPAN` when
the user's events match it (at the data threshold): "where's the team dinner?" is asked of the
calendar even when a task about that dinner matches as well.
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


#: The task and event probes' score for a message worded as a command or question about
#: their kind of item: above the data threshold, below the match of a stored item that the
#: message names ("move watering the plants to saturday" moves the user's task of that name).
WORDED = 0.65

_I = re.IGNORECASE
_DAY = (
    r"(?:today|tonight|tomorrow|(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)"
    r"(?:day)?s?|the\s+next\s+day|next\s+week|this\s+(?:week(?:end)?|morning|afternoon|"
    r"evening)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}"
    r"|the\s+\d{1,2}(?:st|nd|rd|th))"
)
_TIME = r"\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)?"
#: The task agent's own nouns: a message naming one is about a task, however it is worded.
_TASK_NOUN = re.compile(r"\b(?:tasks?|to-?dos?|reminders?|deadlines?|my\s+list)\b", _I)
_TASK_WORDING = re.compile(
    r"^\W*(?:please\s+)?(?:to-?do|new\s+(?:task|to-?do))\b"
    r"|\b(?:put|add|stick|pop|throw)\b.{1,80}?\b(?:on|to)\s+my\s+(?:to-?do\s+)?list\b"
    r"|^\W*(?:please\s+)?(?:check|tick|cross)\s+off\b"
    r"|\b(?:don'?t|do\s+not)\s+let\s+me\s+forget\b",
    _I,
)
#: A clock time written as a bare hour ("to 11") ends its clause: "from 2 to 3 servers" is
#: a count.
_BARE_END = r"(?=\s*(?:$|[,.;!?)]|\s(?:on|at|for|instead|today|tomorrow|tonight|please)\b))"
_TARGET = (
    rf"(?:\d{{1,2}}(?:[:.]\d{{2}}\s*(?:am|pm)?|\s*(?:am|pm|a\.m\.|p\.m\.))|\d{{1,2}}{_BARE_END})"
)
_EVENT_WORDING = re.compile(
    rf"\b(?:move|shift|push|reschedule|postpone|bring|block)\b.{{0,60}}?"
    rf"(?:\b(?:to|until|till)\s+(?:{_TARGET}|{_DAY}\b)|(?<!\S){_TIME}\s+(?:to|until|-)\s+{_TARGET})"
    rf"|\b(?:add|put|schedule)\b.{{1,60}}?\b{_DAY}\b.{{0,20}}?\bat\s+{_TIME}"
    rf"|\b(?:am\s+i|are\s+we|is\s+\w+)\s+(?:free|busy|available)\b"
    rf"|\bwhat'?s\s+(?:on|happening|planned)\b.{{0,30}}?\b{_DAY}\b",
    _I,
)
_EVENT_DETAIL = re.compile(
    r"\bwhere(?:'s|\s+is|\s+was|\s+are)\b|\bhow\s+long\s+(?:is|was|does|will)\b"
    r"|\bwhat\s+time\s+(?:is|does|do)\b|\bwhen\s+(?:does|do|is)\b.{1,60}\b(?:start|begin|end)",
    _I,
)


def task_wording(message: str) -> bool:
    """Whether ``message`` is worded as a command about a task (see the module docstring)."""
    return _TASK_WORDING.search(message[:2000]) is not None


def event_wording(message: str) -> bool:
    """Whether ``message`` is worded as a command or question about a calendar entry and names
    no task (see the module docstring)."""
    text = message[:2000]
    return _EVENT_WORDING.search(text) is not None and _TASK_NOUN.search(text) is None


def asks_event_detail(message: str) -> bool:
    """Whether ``message`` asks where an item is, how long it lasts or when it starts."""
    return _EVENT_DETAIL.search(message[:2000]) is not None
