"""Recurring events (RFC 5545 RRULE with ``dateutil.rrule``) and the reminder times they make.

A recurring event stores its rule (``FREQ=WEEKLY;BYDAY=MO``) and its first occurrence
(``starts_at``, in its zone ``tz``); occurrences are read in that zone's wall time, so a weekly
9:00 stays 9:00 across a DST change. A reminder is ``remind_at`` for the first occurrence and
as long before every later one (``starts_at - remind_at``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dateutil.rrule import HOURLY, rrule, rrulestr

#: Longest rule accepted.
MAX_RRULE_CHARS = 500


def _rule(text: str, start: datetime) -> rrule:
    found = rrulestr(text, dtstart=start)
    if not isinstance(found, rrule):  # an RRULE line only, never a set with EXDATEs
        raise ValueError("give one RRULE, e.g. FREQ=WEEKLY;BYDAY=MO")
    return found


def check_rrule(value: str) -> str:
    """``value`` if it is one RRULE recurring at most hourly (ValueError naming the fix)."""
    text = value.strip()
    if text.upper().startswith("RRULE:"):
        text = text[len("RRULE:") :]
    if "DTSTART" in text.upper() or "\n" in text or ":" in text:
        raise ValueError(
            "give the rule only, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10 (the start is starts_at)"
        )
    try:
        rule = _rule(text, datetime(2000, 1, 1, tzinfo=UTC))
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"not a valid RRULE ({exc}); e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10, UNTIL in UTC "
            "(20261231T235959Z)"
        ) from None
    if rule._freq > HOURLY:  # MINUTELY, SECONDLY: a reminder a minute is not a calendar
        raise ValueError("an event recurs at most hourly (FREQ=HOURLY, DAILY, WEEKLY, ...)")
    return text


def occurrence_reminder(
    rule_text: str, starts_at: datetime, remind_at: datetime, after: datetime
) -> datetime | None:
    """The first reminder time strictly after ``after`` (None when the rule has ended)."""
    lead = starts_at - remind_at
    occurrence = _rule(rule_text, starts_at).after(after + lead, inc=False)
    return None if occurrence is None else occurrence - lead


def next_reminder(
    *,
    remind_at: datetime | None,
    starts_at: datetime | None,
    rule_text: str | None,
    after: datetime,
) -> datetime | None:
    """The item's next reminder time after ``after``: ``remind_at`` itself for a one-off, the
    next occurrence's for a recurring event; None when there is none left."""
    if remind_at is None:
        return None
    if rule_text and starts_at is not None:
        return occurrence_reminder(rule_text, starts_at, remind_at, after)
    return remind_at if remind_at > after else None


def is_reminder_time(
    *, remind_at: datetime | None, starts_at: datetime | None, rule_text: str | None, due: datetime
) -> bool:
    """Whether ``due`` is one of the item's reminder times (a fired job is still current)."""
    before = due - timedelta(milliseconds=1)
    found = next_reminder(
        remind_at=remind_at, starts_at=starts_at, rule_text=rule_text, after=before
    )
    return found is not None and abs((found - due).total_seconds()) < 0.001
