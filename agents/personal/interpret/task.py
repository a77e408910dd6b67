"""The task agent's deterministic interpreter: common to-do requests to task-tool calls."""

from __future__ import annotations

import re

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
    "I can add reminders ('remind me to renew my passport next Friday at 9'), show tasks "
    "('what's due this week?'), mark them done ('mark the second one done'), change or delete "
    "them, and find them by topic ('tasks about the tax return')."
)

_I = re.IGNORECASE
_CREATE = re.compile(
    r"^(?:remind me(?:\s+to|\s+about|\s+that)?|add (?:a )?(?:new )?(?:task|to-?do|reminder)"
    r"(?:\s+to)?:?|(?:new )?(?:task|to-?do)\s*:|create (?:a )?task(?:\s+to)?:?|new task:?"
    r"|i (?:need|have|got) to|don'?t (?:let me )?forget to|note to self:?)\s+(?P<rest>.+)$",
    _I,
)
_ADD_TO_LIST = re.compile(
    r"^add\s+(?P<rest>.+?)\s+to\s+my\s+(?:to-?do|task)s?(?:\s+list)?\b(?P<tail>.*)$", _I
)
_COMPLETE = re.compile(
    r"\b(?:mark|set)\b.*\b(?:as\s+)?(?:done|complete|completed|finished)\b|\bcheck off\b"
    r"|\bi(?:'ve| have)?\s+(?:finished|completed|done)\b|\bcomplete\b|\bdone with\b|\bticked? off\b",  # noqa: E501
    _I,
)
_DELETE = re.compile(r"\b(?:delete|remove|drop|cancel|get rid of|scrap)\b", _I)
_UPDATE = re.compile(
    r"\b(?:change|move|postpone|push|reschedule|set|make|rename|update|bump)\b", _I
)
_PRIORITY = re.compile(
    r"(?:,?\s*(?:with\s+)?\b(?P<p>high|low|normal|top)\s*-?\s*priority\b|\b(?P<u>urgent(?:ly)?|asap|important)\b)",  # noqa: E501
    _I,
)
_TAGS = re.compile(
    r"#(?P<tag>[A-Za-z][\w-]{0,39})|\btagged\s+(?:as\s+|with\s+)?(?P<word>[\w-]{1,40})", _I
)
_QUERY = re.compile(
    r"\b(?:what|which|show|list|any|do i have|what'?s|whats|tasks|to-?dos|due|overdue|open)\b", _I
)
_ABOUT = re.compile(
    r"\b(?:about|regarding|related to|for the|concerning|on the topic of)\s+(?P<q>.+)$", _I
)
_WEBHOOK_REMINDER = re.compile(r"\bsend\b.*\breminder\b|\bnotify\b.*\b(?:about|for)\b|\bping\b", _I)
_SUMMARY = re.compile(r"\b(?:daily\s+)?summary\b|\bdigest\b", _I)
_REMEMBER = re.compile(r"^(?:remember|note|keep in mind)\s+that\s+(?P<fact>.+)$", _I)


def _priority(text: str) -> tuple[str | None, list[tuple[int, int]]]:
    found = _PRIORITY.search(text)
    if not found:
        return None, []
    word = (found.group("p") or found.group("u") or "").lower()
    level = {"top": "urgent", "urgent": "urgent", "urgently": "urgent", "asap": "urgent",
             "important": "high"}.get(word, word)  # fmt: skip
    return level, [found.span()]


def _tags(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    tags, spans = [], []
    for found in _TAGS.finditer(text):
        tags.append((found.group("tag") or found.group("word")).lower())
        spans.append(found.span())
    return tags, spans


def _create(rest: str, situation: Situation, plan: Plan) -> Plan:
    lead, rest = reminder_lead(rest)
    when = find_when(rest, tz=situation.tz, now=situation.now, default_hour=situation.default_hour)
    spans = list(when.spans) if when else []
    priority, p_spans = _priority(rest)
    tags, t_spans = _tags(rest)
    title = tidy_title(remove_spans(rest, spans + p_spans + t_spans))
    title = re.sub(r"^(?:to|about)\s+", "", title, flags=_I)
    title = tidy_title(title)
    if not title:
        plan.reply = "What should the task say?"
        return plan
    return plan.call(
        "create_task",
        title=title,
        due=when.start.isoformat() if when else None,
        priority=priority,
        tags=tags or None,
        remind=lead,
    )


def _list(text: str, situation: Situation, plan: Plan) -> Plan:
    about = _ABOUT.search(text)
    query = about.group("q").strip(" ?.") if about else None
    head = text[: about.start()] if about else text
    priority, _ = _priority(head)
    tags, _ = _tags(head)
    span = find_range(head, tz=situation.tz, now=situation.now)
    overdue = bool(re.search(r"\boverdue\b|\blate\b|\bpast due\b", head, _I))
    completed = re.search(r"\b(?:finish|finished|complete|completed|did i do|done)\b", head, _I)
    status = None
    if re.search(r"\ball\b(?:\s+my)?\s+tasks|\bevery task\b", head, _I):
        status = ["open", "done", "cancelled"]
    if query and (priority or tags or span or overdue):
        return plan.call(
            "hybrid_search_tasks",
            query=query,
            min_priority=priority,
            tags=tags or None,
            due=span.label if span else None,
        )
    if query:
        return plan.call("search_tasks", query=query)
    if completed and span:
        return plan.call("list_tasks", status=["done"], completed=span.label)
    if completed:
        return plan.call("list_tasks", status=["done"])
    return plan.call(
        "list_tasks",
        status=status,
        due=span.label if span else None,
        overdue=overdue or None,
        min_priority=priority,
        tags=tags or None,
    )


def _target(
    text: str, situation: Situation, plan: Plan, verb: re.Pattern[str]
) -> dict[str, object] | None:
    ref = reference(text, situation)
    if ref is not None and ref.problem:
        plan.reply = ref.problem
        return None
    if ref is not None and ref.item_id is not None:
        return {"task_id": ref.item_id}
    words = quoted(text)
    if not words:
        words = verb.sub(" ", text)
        words = re.sub(r"\b(?:as|the task|task|my|to|is|it's)\b", " ", words, flags=_I)
        words = re.sub(r"\b(?:done|complete|completed|finished|off)\b", " ", words, flags=_I)
        words = tidy_title(" ".join(words.split()))
        words = re.sub(r"^(?:the|a|an|about)\s+", "", words, flags=_I)
    if not words:
        plan.reply = "Which task? Say 'the second one' after a list, or its #id."
        return None
    return {"match": words.lower()}


def _update(text: str, situation: Situation, plan: Plan) -> Plan | None:
    ref = reference(text, situation)
    if ref is None or ref.problem or ref.item_id is None:
        return None
    args: dict[str, object] = {"task_id": ref.item_id}
    priority, _ = _priority(text)
    if priority:
        args["priority"] = priority
    rename = re.search(r"\brename\b.*?\bto\s+(?P<t>.+)$", text, _I)
    if rename:
        args["title"] = tidy_title(rename.group("t"))
    elif re.search(r"\b(?:move|postpone|push|reschedule|due|date|deadline|change)\b", text, _I):
        target = re.split(r"\bto\b|\buntil\b", text, maxsplit=1, flags=_I)
        tail = target[1] if len(target) > 1 else text
        when = find_when(tail, tz=situation.tz, now=situation.now,
                         default_hour=situation.default_hour)  # fmt: skip
        if when:
            args["due"] = when.start.isoformat()
    if len(args) == 1:
        return None
    return plan.call("update_task", **args)


def interpret_task(text: str, situation: Situation) -> Plan:
    """The plan for one task-domain request (a clause already judged to be the task agent's)."""
    plan = Plan()
    clean = strip_filler(text)
    if fact := _REMEMBER.match(clean):
        return plan.call("remember_fact", fact=fact.group("fact"))
    if _SUMMARY.search(clean) and re.search(r"\bsend\b|\bpush\b|\bpost\b", clean, _I):
        span = find_range(clean, tz=situation.tz, now=situation.now, prefer="past")
        return plan.call("send_daily_summary", day=span.label if span else "today")
    if _WEBHOOK_REMINDER.search(clean) and not _CREATE.match(clean):
        ref = reference(clean, situation)
        if ref and ref.item_id:
            return plan.call("send_task_reminder", task_id=ref.item_id)
    added = _ADD_TO_LIST.match(clean)
    if added:
        return _create(added.group("rest") + added.group("tail"), situation, plan)
    create = _CREATE.match(clean)
    if create and not _COMPLETE.search(clean):
        return _create(create.group("rest"), situation, plan)
    if _COMPLETE.search(clean) and not re.search(r"\bwhat\b|\bwhich\b", clean, _I):
        target = _target(clean, situation, plan, _COMPLETE)
        return plan.call("complete_task", **target) if target else plan
    if _DELETE.search(clean):
        target = _target(clean, situation, plan, _DELETE)
        return plan.call("delete_task", **target) if target else plan
    if _UPDATE.search(clean) and (updated := _update(clean, situation, plan)):
        return updated
    if _QUERY.search(clean) or _ABOUT.search(clean):
        return _list(clean, situation, plan)
    plan.reply = HELP
    return plan
