"""Natural-language dates and times in the user's time zone ("next Friday at 9", "this week").

`find_when(text, ...)` finds the date and time phrases in a sentence, resolves them to an aware
datetime in the user's zone, and says where they were (so the rest can become a title).
`find_range(text, ...)` resolves a period ("yesterday", "this week", "next month", "on Friday")
to `[start, end)`. `parse_datetime(value, ...)` reads what a tool receives: ISO 8601 first,
else natural language.

Conventions (stated once, tested):
- "next Friday" is the coming Friday (1-7 days ahead); "this Friday" or "Friday" is the coming
  one including today; "last Friday" is 1-7 days back. A bare weekday is taken in the past when
  the caller prefers the past (the food agent: "what did I eat on Monday?").
- Weeks start on Monday. "this week" is Monday 00:00 to next Monday 00:00 in the user's zone.
- A time without am/pm from 1 to 6 ("at 3") is afternoon; 7 to 12 is morning/noon; 13-23 as is.
- A day without a time gets the caller's default hour.
Other phrases ("March 20", "in 3 days", "2 days ago", "the 20th", "2025-03-20") go to
`dateparser` with the user's zone and "now" as its relative base.

Over 400 lines because it is one grammar: the phrase patterns and the resolvers of dates, times and
periods share their word tables and conventions, and splitting them would scatter the rules stated
above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

import dateparser

Prefer = Literal["future", "past"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD = r"(?:mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)"  # noqa: E501
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_NUM = r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fourteen)"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fourteen": 14,
}  # fmt: skip

# Date phrases, most specific first; each is resolved by `_resolve_date`.
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("iso", r"\b(\d{4}-\d{2}-\d{2})\b"),
        ("dayafter", r"\b(?:the\s+)?day\s+after\s+tomorrow\b"),
        ("relday", r"\b(today|tonight|tomorrow|yesterday)\b"),
        ("weekday", rf"\b(?:on\s+)?(?:(next|this|last|coming)\s+)?({_WD})\b\.?"),
        ("monthday", rf"\b(?:on\s+)?({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b"),  # noqa: E501
        ("daymonth", rf"\b(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b(?:\s+(\d{{4}}))?"),  # noqa: E501
        ("ordinal", r"\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)\b"),
        ("in", rf"\bin\s+({_NUM})\s+(days?|weeks?|months?)\b"),
        ("ago", rf"\b({_NUM})\s+(days?|weeks?)\s+ago\b"),
        ("nextweek", r"\b(next|this|last)\s+(week|month|weekend)\b"),
    )
)  # fmt: skip

_TIME_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("span", r"\bfrom\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:to|until|till|-)\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b"),  # noqa: E501
        ("clock", r"\b(?:at\s+|@\s*)?(\d{1,2}):(\d{2})\s*(am|pm)?\b"),
        ("ampm", r"\b(?:at\s+|@\s*)?(\d{1,2})\s*(am|pm|a\.m\.|p\.m\.)"),
        ("at", r"\b(?:at|@)\s*(\d{1,2})\b(?!\s*(?:%|kcal|cal|g\b|days?|weeks?|people|min))"),
        ("word", r"\b(?:at\s+)?(noon|midday|midnight)\b|\b(?:in\s+the\s+|this\s+)(morning|afternoon|evening)\b"),  # noqa: E501
    )
)  # fmt: skip

_WORD_HOURS = {"noon": 12, "midday": 12, "midnight": 0, "morning": 9, "afternoon": 15,
               "evening": 19, "tonight": 20}  # fmt: skip


@dataclass(frozen=True, slots=True)
class When:
    """A resolved moment: `start` (aware), an optional `end` (a "from 10 to 11" span), whether
    a time of day was given, and the character spans of the phrases that said so."""

    start: datetime
    end: datetime | None
    has_time: bool
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class DateRange:
    """A period `[start, end)` in the user's zone, and the phrase it came from."""

    start: datetime
    end: datetime
    label: str
    span: tuple[int, int]


def zone(tz: str) -> ZoneInfo:
    """The zone named `tz` (ValueError names the fix)."""
    try:
        return ZoneInfo(tz)
    except Exception:
        raise ValueError(f"{tz!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None


def local_now(tz: str, now: datetime | None = None) -> datetime:
    """`now` (or the current time) in zone `tz`."""
    current = now or datetime.now(ZoneInfo("UTC"))
    if current.tzinfo is None:
        raise ValueError("`now` must be timezone-aware")
    return current.astimezone(zone(tz))


def at(day: date, hour: int, minute: int, tz: ZoneInfo) -> datetime:
    """`day` at hour:minute in `tz` (the zone's offset on that day, DST included)."""
    return datetime.combine(day, time(hour, minute), tzinfo=tz)


def _number(token: str) -> int:
    return int(token) if token.isdigit() else _NUMBERS[token.lower()]


def _weekday_index(token: str) -> int:
    token = token.lower()
    return next(i for i, name in enumerate(WEEKDAYS) if name.startswith(token[:3]))


def _weekday(today: date, target: int, qualifier: str | None, prefer: Prefer) -> date:
    ahead = (target - today.weekday()) % 7
    q = (qualifier or "").lower()
    if q in ("next", "coming"):
        return today + timedelta(days=ahead or 7)
    if q == "last":
        return today - timedelta(days=(today.weekday() - target) % 7 or 7)
    if q == "this" or prefer == "future":
        return today + timedelta(days=ahead)
    return today - timedelta(days=(today.weekday() - target) % 7)


def _dateparser(phrase: str, now: datetime, prefer: Prefer) -> date | None:
    parsed = dateparser.parse(
        phrase,
        languages=["en"],
        settings={
            "PREFER_DATES_FROM": prefer,
            "RELATIVE_BASE": now.replace(tzinfo=None),
            "TIMEZONE": str(now.tzinfo),
            "RETURN_AS_TIMEZONE_AWARE": True,
            "PREFER_DAY_OF_MONTH": "first",
        },
    )
    return parsed.date() if parsed is not None else None


def _resolve_date(kind: str, match: re.Match[str], now: datetime, prefer: Prefer) -> date | None:
    today = now.date()
    if kind == "relday":
        word = match.group(1).lower()
        return today + timedelta(days={"tomorrow": 1, "yesterday": -1}.get(word, 0))
    if kind == "dayafter":
        return today + timedelta(days=2)
    if kind == "weekday":
        return _weekday(today, _weekday_index(match.group(2)), match.group(1), prefer)
    if kind == "nextweek":
        which, unit = match.group(1).lower(), match.group(2).lower()
        start, _ = _period(today, which, unit)
        return start
    if kind == "ordinal":
        return _day_of_month(today, int(match.group(1)), prefer)
    phrase = match.group(0)
    if kind == "in":
        phrase = f"in {_number(match.group(1))} {match.group(2)}"
    elif kind == "ago":
        phrase = f"{_number(match.group(1))} {match.group(2)} ago"
    return _dateparser(re.sub(r"^\s*on\s+", "", phrase, flags=re.IGNORECASE), now, prefer)


def _day_of_month(today: date, day: int, prefer: Prefer) -> date | None:
    """Day `day` of this month, or of the next (previous) month when it has passed (is ahead)."""
    first = today.replace(day=1)
    months = [first, (first + timedelta(days=32)).replace(day=1)]
    if prefer == "past":
        months = [first, (first - timedelta(days=1)).replace(day=1)]
    for month in months:
        try:
            candidate = month.replace(day=day)
        except ValueError:
            continue
        if (candidate >= today) if prefer == "future" else (candidate <= today):
            return candidate
    return None


def _hour(value: str, meridiem: str | None, *, bare_pm: bool = True) -> int:
    hour = int(value)
    mer = (meridiem or "").lower().replace(".", "")
    if mer == "pm" and hour < 12:
        hour += 12
    elif mer == "am" and hour == 12:
        hour = 0
    elif not mer and bare_pm and 1 <= hour <= 6:
        hour += 12
    if not 0 <= hour <= 23:
        raise ValueError(f"{value} is not an hour of the day")
    return hour


def _find_time(text: str) -> tuple[tuple[int, int], tuple[int, int] | None, tuple[int, int]] | None:
    """((hour, minute), optional end (hour, minute), span) of the first time phrase."""
    for kind, pattern in _TIME_PATTERNS:
        for match in pattern.finditer(text):
            try:
                if kind == "span":
                    end_mer = match.group(6)
                    start_mer = match.group(3) or end_mer
                    start = (_hour(match.group(1), start_mer), int(match.group(2) or 0))
                    end = (_hour(match.group(4), end_mer), int(match.group(5) or 0))
                    return start, end, match.span()
                if kind == "clock":
                    minute = int(match.group(2))
                    if minute > 59:
                        continue
                    hour = _hour(match.group(1), match.group(3), bare_pm=False)
                    return (hour, minute), None, match.span()
                if kind in ("ampm", "at"):
                    group = match.group(2) if kind == "ampm" else None
                    return (_hour(match.group(1), group), 0), None, match.span()
                word = (match.group(1) or match.group(2)).lower()
                return (_WORD_HOURS[word], 0), None, match.span()
            except ValueError:
                continue
    return None


def find_date(
    text: str, now: datetime, prefer: Prefer = "future"
) -> tuple[date, tuple[int, int]] | None:
    """The first date phrase in `text` (resolved in `now`'s zone) and its span."""
    best: tuple[int, date, tuple[int, int]] | None = None
    for order, (kind, pattern) in enumerate(_DATE_PATTERNS):
        for match in pattern.finditer(text):
            if kind == "weekday" and not _weekday_word(match.group(2)):
                continue
            resolved = _resolve_date(kind, match, now, prefer)
            if resolved is None:
                continue
            # Leftmost phrase wins; at one position the more specific pattern does.
            key = match.start() * 100 + order
            if best is None or key < best[0]:
                best = (key, resolved, match.span())
            break
    return (best[1], best[2]) if best else None


def _weekday_word(token: str) -> bool:
    # "sat", "sun", "wed" alone are also ordinary words; only accept them capitalised or long.
    return len(token) > 3 or token[0].isupper()


def find_when(
    text: str,
    *,
    tz: str,
    now: datetime | None = None,
    prefer: Prefer = "future",
    default_hour: int = 9,
) -> When | None:
    """The moment a sentence names ("next Friday at 9", "Thursday 12:30", "tomorrow"), or None.

    A time alone ("at 3pm") means today at that time (tomorrow if it has passed and the caller
    prefers the future).
    """
    current = local_now(tz, now)
    found_date = find_date(text, current, prefer)
    masked = text
    if found_date:
        a, b = found_date[1]
        masked = text[:a] + " " * (b - a) + text[b:]
    found_time = _find_time(masked)
    if found_date is None and found_time is None:
        if re.search(r"\btonight\b", text, re.IGNORECASE):
            found_time = ((20, 0), None, (0, 0))
        else:
            return None
    spans: list[tuple[int, int]] = []
    day = current.date()
    if found_date:
        day = found_date[0]
        spans.append(found_date[1])
        if re.search(r"\btonight\b", text[slice(*found_date[1])], re.IGNORECASE) and not found_time:
            found_time = ((20, 0), None, found_date[1])
    tzinfo = current.tzinfo
    assert isinstance(tzinfo, ZoneInfo)
    if found_time:
        (hour, minute), end, span = found_time
        if span != (0, 0) and span not in spans:
            spans.append(span)
        start = at(day, hour, minute, tzinfo)
        if found_date is None and prefer == "future" and start < current:
            start += timedelta(days=1)
        stop = None
        if end is not None:
            stop = at(start.date(), end[0], end[1], tzinfo)
            if stop <= start:
                stop += timedelta(hours=12) if stop + timedelta(hours=12) > start else timedelta(1)
        return When(start, stop, True, tuple(sorted(spans)))
    return When(at(day, default_hour, 0, tzinfo), None, False, tuple(spans))


def _period(today: date, which: str, unit: str) -> tuple[date, date]:
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        shift = {"this": 0, "next": 7, "last": -7}[which]
        return monday + timedelta(days=shift), monday + timedelta(days=shift + 7)
    if unit == "weekend":
        saturday = monday + timedelta(days=5 + {"this": 0, "next": 7, "last": -7}[which])
        return saturday, saturday + timedelta(days=2)
    first = today.replace(day=1)
    if which == "next":
        first = (first + timedelta(days=32)).replace(day=1)
    elif which == "last":
        first = (first - timedelta(days=1)).replace(day=1)
    return first, (first + timedelta(days=32)).replace(day=1)


_RANGE_WORDS = re.compile(
    rf"\b(?:(this|next|last|coming|past)\s+(week|month|weekend)|(this|next|last|coming|past)\s+"
    rf"({_NUM})\s+(days|weeks))\b",
    re.IGNORECASE,
)


def find_range(
    text: str, *, tz: str, now: datetime | None = None, prefer: Prefer = "future"
) -> DateRange | None:
    """The period a sentence names, as `[start, end)` in the user's zone, or None.

    Weeks, weekends and months ("this week", "next month", "last weekend"), spans of days
    ("the next 3 days", "past 2 weeks"), or one day ("yesterday", "on Friday", "March 20").
    """
    current = local_now(tz, now)
    tzinfo = current.tzinfo
    assert isinstance(tzinfo, ZoneInfo)
    today = current.date()
    match = _RANGE_WORDS.search(text)
    if match:
        if match.group(2):
            which = match.group(1).lower().replace("coming", "next").replace("past", "last")
            first, stop = _period(today, which, match.group(2).lower())
        else:
            count = _number(match.group(4)) * (7 if match.group(5).lower() == "weeks" else 1)
            if match.group(3).lower() in ("last", "past"):
                first, stop = today - timedelta(days=count - 1), today + timedelta(days=1)
            else:
                first, stop = today, today + timedelta(days=count)
        return DateRange(
            at(first, 0, 0, tzinfo), at(stop, 0, 0, tzinfo), match.group(0).lower(), match.span()
        )
    found = find_date(text, current, prefer)
    if found is None:
        return None
    day, span = found
    return DateRange(
        at(day, 0, 0, tzinfo),
        at(day + timedelta(days=1), 0, 0, tzinfo),
        text[span[0] : span[1]].strip().lower(),
        span,
    )


def parse_datetime(
    value: str,
    *,
    tz: str,
    now: datetime | None = None,
    prefer: Prefer = "future",
    default_hour: int = 9,
) -> datetime:
    """A datetime a tool received: ISO 8601 (a missing offset means the user's zone), or natural
    language resolved in the user's zone. ValueError says what was not understood."""
    text = value.strip()
    if not text or len(text) > 200:
        raise ValueError("a date is 1-200 characters")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is not None:
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=zone(tz))
        return parsed
    when = find_when(text, tz=tz, now=now, prefer=prefer, default_hour=default_hour)
    if when is not None:
        return when.start
    current = local_now(tz, now)
    day = _dateparser(text, current, prefer)
    if day is None:
        raise ValueError(
            f"could not read {value!r} as a date: use ISO 8601 (2025-03-14T09:00) or words "
            "such as 'next Friday at 9' or 'tomorrow 18:30'"
        )
    tzinfo = current.tzinfo
    assert isinstance(tzinfo, ZoneInfo)
    return at(day, default_hour, 0, tzinfo)
