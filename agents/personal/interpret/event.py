"""The event agent's deterministic interpreter: calendar entries, agenda queries, moves."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from agents.personal.interpret.common import (
    Plan,
    Situation,
    quoted,
    reference,
    reminder_lead,
    remove_spans,
    strip_filler,
    tidy_title,
)
from tools.personal.dates import find_range, find_when

HELP = (
    "I can put things on your calendar ('lunch with Sam on Thursday 12:30 at Rosa's'), show "
    "what is on ('what's on my calendar tomorrow?'), move or cancel events, and find them by "
    "topic or person ('meetings with Anna next week about the budget')."
)

_I = re.IGNORECASE
_NAME = r"[A-Z][a-zA-Z'-]+"
_PEOPLE = re.compile(
    rf"\bwith\s+(?P<people>(?:my\s+\w+|{_NAME})(?:\s*(?:,|and|&)\s*(?:my\s+\w+|{_NAME}))*)"
)
_PLACE = re.compile(rf"\b(?:at|in)\s+(?:the\s+)?(?P<place>{_NAME}(?:\s+{_NAME})*(?:'s)?)")
_DURATION = re.compile(
    r"\bfor\s+(?P<n>\d{1,3}|an?|one|two|three)\s*(?P<unit>hours?|h|minutes?|mins?)\b", _I
)
_CREATE = re.compile(
    r"^(?:add|put|schedule|book|create|set up|block(?: out)?|plan)\b\s*(?P<rest>.*)$"
    r"|^(?P<meal>(?:lunch|dinner|breakfast|brunch|coffee|drinks|call|meeting)\s+with\b.*)$"
    r"|^(?P<thing>(?:a\s+|an\s+|the\s+)?(?:[\w'-]+\s+){0,3}(?:appointment|meeting|party|wedding|concert|interview|conference|session|class|game|dinner|lunch|call|checkup|check-up)\b.*)$",  # noqa: E501
    _I,
)  # fmt: skip
_QUERY = re.compile(
    r"\bwhat'?s on\b|\bwhats on\b|\bwhat do i have\b|\bam i free\b|\bam i busy\b|\bagenda\b"
    r"|\b(?:show|list)\b|\bany (?:events|meetings|appointments)\b|\bmy (?:events|meetings|calendar|schedule)\b"  # noqa: E501
    r"|\bwhen is\b|\bwhen'?s\b|\bupcoming\b|^(?:events|meetings|appointments)\b",
    _I,
)  # fmt: skip
_ABOUT = re.compile(r"\b(?:about|regarding|related to|concerning)\s+(?P<q>.+)$", _I)
_CALENDAR_WORDS = re.compile(
    r"\b(?:on|to|in|into)\s+(?:my\s+)?(?:calendar|agenda|schedule|diary)\b|\bcalendar\s+entry\b|\ban?\s+event\s+for\b",  # noqa: E501
    _I,
)
_REMEMBER = re.compile(r"^(?:remember|note|keep in mind)\s+that\s+(?P<fact>.+)$", _I)
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


def _people(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    found = _PEOPLE.search(text)
    if not found:
        return [], []
    names = re.split(r"\s*(?:,|\band\b|&)\s*", found.group("people"))
    return [n.strip() for n in names if n.strip()], [found.span()]


def _place(text: str) -> tuple[str, list[tuple[int, int]]]:
    found = _PLACE.search(text)
    if not found:
        return "", []
    return found.group("place"), [found.span()]


def _duration(text: str) -> tuple[timedelta | None, list[tuple[int, int]]]:
    found = _DURATION.search(text)
    if not found:
        return None, []
    raw = found.group("n").lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    unit = found.group("unit").lower()
    delta = timedelta(hours=n) if unit.startswith("h") else timedelta(minutes=n)
    return delta, [found.span()]


def _create(rest: str, situation: Situation, plan: Plan) -> Plan:
    incoming = situation.incoming
    subject = (incoming.context.get("subject") if incoming else None) or None
    lead, rest = reminder_lead(rest)
    text = _CALENDAR_WORDS.sub(" ", rest)
    when = find_when(text, tz=situation.tz, now=situation.now, default_hour=situation.default_hour)
    spans = list(when.spans) if when else []
    masked = remove_spans(text, spans)
    people, _ = _people(masked)
    place, place_spans = _place(masked)
    duration, d_spans = _duration(masked)
    title = tidy_title(remove_spans(masked, place_spans + d_spans))
    title = re.sub(r"^(?:an?|the)\s+", "", title, flags=_I)
    title = tidy_title(re.sub(r"\b(?:it|this|that)\b", " ", title, flags=_I).strip())
    starts: datetime | None = when.start if when else None
    if subject and (not title or re.fullmatch(r"(?:it|this|that)?", title, _I)):
        title = tidy_title(str(subject))
    if starts is None and incoming and incoming.context.get("when"):
        starts = datetime.fromisoformat(str(incoming.context["when"]))
    if not title:
        plan.reply = "What should I put on your calendar?"
        return plan
    if starts is None:
        plan.reply = f"When is '{title}'? Tell me a day and time, e.g. 'Thursday 12:30'."
        return plan
    ends = when.end if when and when.end else (starts + duration if duration else None)
    return plan.call(
        "create_event",
        title=title,
        starts=starts.isoformat(),
        ends=ends.isoformat() if ends else None,
        location=place or None,
        attendees=people or None,
        remind=lead,
    )


def _list(text: str, situation: Situation, plan: Plan) -> Plan:
    about = _ABOUT.search(text)
    query = about.group("q").strip(" ?.") if about else None
    head = text[: about.start()] if about else text
    span = find_range(head, tz=situation.tz, now=situation.now)
    people, _ = _people(head)
    attendee = people[0] if people else None
    if query and (span or attendee):
        return plan.call(
            "hybrid_search_events", query=query, starts=span.label if span else None,
            attendee=attendee,
        )  # fmt: skip
    if query:
        return plan.call("search_events", query=query)
    upcoming = bool(re.search(r"\bupcoming\b|\bnext (?:event|meeting|appointment)\b", head, _I))
    place, _ = _place(head)
    return plan.call(
        "list_events",
        starts=span.label if span else None,
        attendee=attendee,
        location=place or None,
        upcoming=upcoming or None,
    )


def _target(text: str, situation: Situation, plan: Plan) -> dict[str, object] | None:
    ref = reference(text, situation)
    if ref is not None and ref.problem:
        plan.reply = ref.problem
        return None
    if ref is not None and ref.item_id is not None:
        return {"event_id": ref.item_id}
    words = quoted(text)
    if not words:
        cut = re.sub(
            r"^\s*(?:cancel|delete|remove|drop|move|reschedule|push|postpone)\s+(?:the\s+|my\s+)?",
            "",
            text,
            flags=_I,
        )
        cut = re.split(r"\s+(?:to|until)\s+", cut, maxsplit=1, flags=_I)[0]
        when = find_when(cut, tz=situation.tz, now=situation.now)
        words = tidy_title(remove_spans(cut, when.spans if when else ()))
    if not words:
        plan.reply = "Which event? Say 'the first one' after a list, or its #id."
        return None
    return {"match": words.lower()}


def interpret_event(text: str, situation: Situation) -> Plan:
    """The plan for one event-domain request."""
    plan = Plan()
    clean = strip_filler(text)
    if fact := _REMEMBER.match(clean):
        return plan.call("remember_fact", fact=fact.group("fact"))
    if re.search(r"\bsend\b", clean, _I) and re.search(r"\bsummary\b|\bagenda\b", clean, _I):
        span = find_range(clean, tz=situation.tz, now=situation.now)
        return plan.call("send_daily_summary", day=span.label if span else "today")
    if re.search(r"\b(?:announce|notify|share|webhook|n8n)\b", clean, _I):
        ref = reference(clean, situation)
        if ref and ref.item_id:
            return plan.call("announce_event", event_id=ref.item_id)
    if re.search(r"^(?:cancel|delete|remove|drop)\b", clean, _I):
        target = _target(clean, situation, plan)
        return plan.call("delete_event", **target) if target else plan
    if re.search(r"^(?:move|reschedule|push|postpone|change|shift)\b", clean, _I):
        target = _target(clean, situation, plan)
        if target is None:
            return plan
        place = re.search(r"\blocation\b.*\bto\s+(?P<p>.+)$", clean, _I)
        if place:
            return plan.call("update_event", **target, location=place.group("p").strip(" ."))
        tail = re.split(r"\s+(?:to|until)\s+", clean, maxsplit=1, flags=_I)
        when = find_when(
            tail[-1], tz=situation.tz, now=situation.now, default_hour=situation.default_hour
        )
        if when is None:
            plan.reply = "To when? e.g. 'move the second one to Friday at 2pm'."
            return plan
        return plan.call("update_event", **target, starts=when.start.isoformat())
    if _QUERY.search(clean) and not re.match(r"^(?:add|put|schedule|book|create)\b", clean, _I):
        return _list(clean, situation, plan)
    if match := _CREATE.match(clean):
        rest = match.group("rest") if match.group("rest") is not None else clean
        return _create(rest, situation, plan)
    if _CALENDAR_WORDS.search(clean) or situation.incoming:
        return _create(clean, situation, plan)
    if _ABOUT.search(clean):
        return _list(clean, situation, plan)
    plan.reply = HELP
    return plan
