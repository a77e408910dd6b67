"""Recurring events (RFC 5545 RRULE with ``dateutil.rrule``) and the reminder times they make.

A recurring event stores its rule (``FREQ=WEEKLY;BYDAY=MO``) and its first occurrence
(``starts_at``, in its zone ``tz``); occurrences are read in that zone's wall time, so a weekly
9:00 stays 9:00 across a DST change. A reminder is ``remind_at`` for the first occurrence and
as long before every later one (``starts_at - remind_at``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from dateutil.rrule import rrule, rrulestr

#: Longest rule accepted.
MAX_RRULE_CHARS = 500


def _rule(text: str, start: datetime) -> rrule:
    found = rrulestr(text, dtstart=start)
    if not isinstance(found, rrule):  # an RRULE line only, never a set with EXDATEs
        raise ValueError("give one RRULE, e.g. FREQ=WEEKLY;BYDAY=MO")
    return found


_PART = re.compile(r"^(?P<key>[A-Z]+)=(?P<value>[A-Z0-9,+\-]+)$")
_DAYS = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"}
_DAY = re.compile(r"^(?P<n>[+-]?[1-4])?(?P<day>MO|TU|WE|TH|FR|SA|SU)$")
_FREQS = {"DAILY", "WEEKLY", "MONTHLY", "YEARLY"}
_KEYS = {"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "BYMONTHDAY", "BYMONTH", "WKST"}


def _numbers(value: str, low: int, high: int, what: str, *, signed: bool = False) -> None:
    for item in value.split(","):
        try:
            number = int(item)
        except ValueError:
            raise ValueError(f"{what} takes numbers, not {item!r}") from None
        if not (low <= abs(number) <= high if signed else low <= number <= high):
            span = f"{low}..{high} or -{high}..-{low}" if signed else f"{low}..{high}"
            raise ValueError(f"{what} must be {span}, not {number}")


def _check_parts(text: str) -> None:
    """The subset of RFC 5545 accepted: every rule of it has an occurrence at least every few
    years, so finding the next one is quick (dateutil searches an impossible rule, such as
    BYMONTHDAY=31;BYMONTH=2, up to the year 9999: seconds of CPU per call)."""
    parts: dict[str, str] = {}
    for raw in text.upper().split(";"):
        found = _PART.match(raw.strip())
        if found is None or found["key"] not in _KEYS:
            raise ValueError(
                f"{raw!r} is not supported; use FREQ, INTERVAL, COUNT, UNTIL, BYDAY, "
                "BYMONTHDAY, BYMONTH or WKST"
            )
        parts[found["key"]] = found["value"]
    freq = parts.get("FREQ")
    if freq not in _FREQS:
        raise ValueError("FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY (an event at most daily)")
    _numbers(parts.get("INTERVAL", "1"), 1, 99, "INTERVAL")
    _numbers(parts.get("COUNT", "1"), 1, 1000, "COUNT")
    if "BYMONTH" in parts:
        _numbers(parts["BYMONTH"], 1, 12, "BYMONTH")
    if "BYMONTHDAY" in parts:  # every month has days 1-28 and the last 28
        _numbers(parts["BYMONTHDAY"], 1, 28, "BYMONTHDAY", signed=True)
        if "BYDAY" in parts:
            raise ValueError("use BYMONTHDAY or BYDAY, not both")
    for day in parts.get("BYDAY", "").split(",") if "BYDAY" in parts else []:
        found = _DAY.match(day)
        if found is None or (found["n"] and freq not in ("MONTHLY", "YEARLY")):
            raise ValueError(
                f"BYDAY {day!r}: a weekday (MO..SU), with an ordinal 1..4 or -1..-4 for "
                "MONTHLY and YEARLY only"
            )
    if parts.get("WKST", "MO") not in _DAYS:
        raise ValueError("WKST must be a weekday (MO..SU)")
    interval = int(parts.get("INTERVAL", "1"))
    by = {"BYDAY", "BYMONTHDAY", "BYMONTH"} & set(parts)
    if interval > 1 and (
        (freq in ("DAILY", "MONTHLY") and by) or (freq == "WEEKLY" and by - {"BYDAY"})
    ):
        # e.g. FREQ=DAILY;INTERVAL=7;BYDAY=TU from a Monday never happens
        raise ValueError(f"INTERVAL > 1 with {', '.join(sorted(by))} is not supported for {freq}")


def check_rrule(value: str) -> str:
    """``value`` if it is one supported RRULE (ValueError naming the fix)."""
    text = value.strip()
    if text.upper().startswith("RRULE:"):
        text = text[len("RRULE:") :]
    if "DTSTART" in text.upper() or "\n" in text or ":" in text:
        raise ValueError(
            "give the rule only, e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10 (the start is starts_at)"
        )
    _check_parts(text)
    try:
        _rule(text, datetime(2000, 1, 1, tzinfo=UTC))
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(
            f"not a valid RRULE ({exc}); e.g. FREQ=WEEKLY;BYDAY=MO;COUNT=10, UNTIL in UTC "
            "(20261231T235959Z)"
        ) from None
    return text


def occurrence_reminder(
    rule_text: str, starts_at: datetime, remind_at: datetime, after: datetime
) -> datetime | None:
    """The first reminder time strictly after ``after`` (None when the rule has ended)."""
    lead = starts_at - remind_at
    try:
        occurrence = _rule(rule_text, starts_at).after(after + lead, inc=False)
        return None if occurrence is None else occurrence - lead
    except OverflowError:  # past the year 9999: no more reminders
        return None


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
