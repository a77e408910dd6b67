"""What the three request interpreters share: the plan they produce, what they know, the
references ("the second one", "#12"), clause splitting and title clean-up."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from agents.personal.context import HandoffDecision


class PlannedCall(BaseModel):
    """A tool call the interpreter decided on."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Plan(BaseModel):
    """The interpreter's decision: tool calls, a handoff, or a direct reply (help)."""

    calls: list[PlannedCall] = Field(default_factory=list)
    handoff: HandoffDecision | None = None
    reply: str | None = None

    def call(self, name: str, **args: Any) -> Plan:
        """Add a call (arguments that are None are left out)."""
        self.calls.append(
            PlannedCall(name=name, args={k: v for k, v in args.items() if v is not None})
        )
        return self


@dataclass
class Situation:
    """What an interpreter knows besides the text: the clock, zone, and the domain context."""

    now: datetime
    tz: str
    default_hour: int = 9
    domain_context: dict[str, Any] = field(default_factory=dict)
    incoming: HandoffDecision | None = None


ORDINALS: dict[str, int] = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1, "top": 1,
}  # fmt: skip
_ORDINAL = re.compile(
    r"\b(?:the\s+)?(" + "|".join(ORDINALS) + r")(?:\s+(?:one|task|item|meal|event|entry))?\b",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"(?:#|\bnumber\s+|\bno\.\s*|\bitem\s+)(\d{1,9})\b", re.IGNORECASE)
_ID = re.compile(r"(?:#|\b(?:task|meal|event|id)\s+#?)(\d{1,12})\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|that(?: one)?|this(?: one)?)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Reference:
    """An item the user pointed at: an id, or a position in the last list shown, or a title."""

    item_id: int | None = None
    match: str | None = None
    problem: str | None = None


def reference(text: str, situation: Situation) -> Reference | None:
    """Resolve "the second one", "number 2", "#12", "task 12" or "it" to an item id."""
    listed = situation.domain_context.get("last_list") or []
    ordinal = _ORDINAL.search(text)
    if ordinal:
        position = ORDINALS[ordinal.group(1).lower()]
        return _position(position, listed)
    numbered = _NUMBERED.search(text)
    if numbered and text[numbered.start()] != "#":
        return _position(int(numbered.group(1)), listed)
    direct = _ID.search(text)
    if direct:
        return Reference(item_id=int(direct.group(1)))
    if _PRONOUN.search(text):
        last = situation.domain_context.get("last_item")
        if last and last.get("id"):
            return Reference(item_id=int(last["id"]))
        if len(listed) == 1:
            return Reference(item_id=int(listed[0]["id"]))
    return None


def _position(position: int, listed: list[dict[str, Any]]) -> Reference:
    if not listed:
        return Reference(problem="I have not shown you a list yet: ask for one first, or use #id.")
    index = position - 1 if position > 0 else len(listed) + position
    if not 0 <= index < len(listed):
        return Reference(
            problem=f"The last list had {len(listed)} item(s), so there is no item {position}."
        )
    return Reference(item_id=int(listed[index]["id"]))


_CLAUSE = re.compile(
    r"\s*(?:,\s*)?\b(?:and\s+also|and\s+then|also|then)\b\s*"
    r"|\s*,?\s*\band\s+(?=(?:put|add|log|schedule|remind|block|set|book|mark|create|note)\b)"
    r"|\s*;\s*|\.\s+",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """A request split into its parts ("remind me X and also put it on my calendar")."""
    parts = [part.strip(" ,.") for part in _CLAUSE.split(text)]
    joined: list[str] = []
    for part in filter(None, parts):
        # "..., and remind me an hour before" belongs to the item before it
        if joined and (lead := _LEAD.match(" " + part)) and lead.end() == len(part) + 1:
            joined[-1] = f"{joined[-1]}, {part}"
        else:
            joined.append(part)
    return joined


_FILLER_START = re.compile(
    r"^(?:please\s+|pls\s+|hey\s+|ok(?:ay)?\s+|can you\s+|could you\s+|would you\s+)+",
    re.IGNORECASE,
)


def strip_filler(text: str) -> str:
    """The request without polite openers and trailing punctuation."""
    return _FILLER_START.sub("", text.strip()).strip(" ?!.")


def remove_spans(text: str, spans: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> str:
    """`text` with the given character spans cut out."""
    out = text
    for start, end in sorted(spans, reverse=True):
        out = out[:start] + " " + out[end:]
    return " ".join(out.split())


_DANGLING = re.compile(
    r"(?:\s+\b(?:on|at|by|for|due|before|until|from|in|this|next|the|and|to)\b)+\s*$|^\s*(?:to|that|about)\s+",  # noqa: E501
    re.IGNORECASE,
)


def tidy_title(text: str) -> str:
    """A title from leftover words: no dangling prepositions, first letter upper-case."""
    title = text.strip(" ,.:;-!?'\"")
    for _ in range(3):
        title = _DANGLING.sub("", title).strip(" ,.:;-")
    return title[:1].upper() + title[1:] if title else title


def quoted(text: str) -> str | None:
    """Text in quotes, if any ("mark 'buy boxes' done")."""
    found = re.search(r"[\"“'‘]([^\"”'’]{2,200})[\"”'’]", text)
    return found.group(1).strip() if found else None


#: "..., remind me an hour before" (and "remind me 30 minutes before", "with a reminder 2
#: days before"): the lead the create operations read as ``remind``.
_LEAD = re.compile(
    r"[,;]?\s*(?:and\s+)?(?:remind me|with a reminder|reminder)\s+"
    r"(?P<lead>(?:\d+(?:\.\d+)?|half an|an?|one|two|three|four|five|ten|fifteen|thirty)\s*"
    r"(?:minute|min|hour|hr|day|week)s?\s+(?:before|earlier|ahead|in advance))\b",
    re.IGNORECASE,
)


def reminder_lead(text: str) -> tuple[str | None, str]:
    """The reminder lead in ``text`` ('an hour before') and the text without it."""
    found = _LEAD.search(text)
    if found is None:
        return None, text
    return found.group("lead"), remove_spans(text, [found.span()])
