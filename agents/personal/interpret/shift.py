"""The domain-shift check: which personal domain a request (or a part of one) belongs to.

Each domain has weighted signals; a request belongs to the domain with the highest score, and
an agent hands off only when another domain clearly wins (score >= `MIN_SHIFT`) and its own
domain scores lower. Vocabulary conflicts are settled here: "lunch with Sam on Thursday" is an
event (a meal *with someone*), "I had lunch" is food, "remind me to book the dentist" is a task.
"""

from __future__ import annotations

import re

from agents.personal.context import Domain, HandoffDecision

MIN_SHIFT = 2.0

_SIGNALS: dict[Domain, tuple[tuple[str, float], ...]] = {
    "task": (
        (r"\bremind(?:er|ers)?\b|\bremind me\b", 3.0),
        (r"\bto-?dos?\b|\btasks?\b|\bchecklist\b|\bto do list\b", 3.0),
        (r"\bdue\b|\bdeadlines?\b|\boverdue\b", 2.0),
        (r"\bi (?:need|have|got) to\b|\bdon'?t (?:let me )?forget\b", 2.0),
        (r"\bmark\b.*\b(?:done|complete|completed|finished)\b|\bcheck off\b", 2.0),
        (r"\bpriority\b|\burgent\b", 1.0),
        (r"\bfinish(?:ed)?\b|\bcomplete(?:d)?\b", 1.0),
    ),
    "food": (
        (r"\b(?:i|we)\s+(?:just\s+)?(?:had|ate|eaten|have eaten|'ve had|'ve eaten)\b", 2.5),
        (r"\b(?:breakfast|lunch|dinner|supper|brunch|snack)\s*(?::|was|were)", 3.0),
        (r"\bfor\s+(?:breakfast|lunch|dinner|supper|brunch|a snack|dessert)\b", 2.5),
        (r"\bcalories?\b|\bkcal\b|\bprotein\b|\bcarbs?\b|\bnutrition\b|\bmacros?\b", 3.0),
        (r"\bmeals?\b|\bfood\b|\bdiet\b|\bwhat did i eat\b|\bate\b|\beat\b", 2.0),
        (r"\b(?:breakfast|dinner|snack|dinners|lunches|breakfasts)\b", 1.0),
        (r"\blog\b", 0.5),
    ),
    "event": (
        (r"\bcalendar\b|\bagenda\b|\bschedule\b|\bappointments?\b", 3.0),
        (r"\bmeetings?\b|\bevents?\b|\bconference\b|\bparty\b|\bwedding\b|\bconcert\b", 2.5),
        (r"\b(?:lunch|dinner|breakfast|coffee|drinks|brunch|call)\s+with\s+[A-Z]", 3.5),
        (r"\bwhat'?s on\b|\bam i free\b|\bbusy\b|\bbook(?:ed)?\b", 2.0),
        (r"\bmeet(?:ing)?\s+(?:with\s+)?[A-Z]", 2.0),
        (r"\breschedule\b|\bmove\b.*\bto\b", 1.0),
    ),
}

_COMPILED = {
    domain: tuple((re.compile(p, re.IGNORECASE if "[A-Z]" not in p else 0), w) for p, w in sigs)
    for domain, sigs in _SIGNALS.items()
}

_HOW: dict[Domain, str] = {
    "task": "to-dos and reminders belong to the task agent",
    "food": "meals and nutrition belong to the food agent",
    "event": "calendar entries belong to the event agent",
}


def domain_scores(text: str) -> dict[Domain, float]:
    """The weight of each domain's signals in `text`."""
    scores: dict[Domain, float] = {}
    for domain, signals in _COMPILED.items():
        scores[domain] = sum(weight for pattern, weight in signals if pattern.search(text))
    # "lunch with Sam" is a calendar entry, not a meal log, unless the user says they ate.
    if re.search(r"\b(?:lunch|dinner|breakfast|coffee|drinks|brunch)\s+with\s+[A-Z]", text):
        if not re.search(r"\b(?:had|ate|eaten)\b", text, re.IGNORECASE):
            scores["food"] = max(0.0, scores["food"] - 3.0)
    # "remind me ... meeting" stays a reminder: the explicit verb wins.
    if re.search(r"\bremind me\b", text, re.IGNORECASE):
        scores["event"] = max(0.0, scores["event"] - 2.0)
        scores["food"] = max(0.0, scores["food"] - 2.0)
    return scores


def best_domain(text: str) -> tuple[Domain | None, float]:
    """The domain `text` belongs to and its score; None when nothing signals one."""
    scores = domain_scores(text)
    domain = max(scores, key=lambda d: scores[d])
    return (domain, scores[domain]) if scores[domain] > 0 else (None, 0.0)


def shift_check(own: Domain, text: str) -> HandoffDecision | None:
    """A handoff when `text` clearly belongs to another domain than `own`, else None."""
    scores = domain_scores(text)
    other = max((d for d in scores if d != own), key=lambda d: scores[d])
    if scores[other] >= MIN_SHIFT and scores[other] > scores[own]:
        return HandoffDecision(
            should_handoff=True,
            target_agent=other,
            reason=f"{_HOW[other]} (domain shift from {own})",
            context={"from": own, "request": text},
        )
    return None
