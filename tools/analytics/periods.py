"""Time phrases to date ranges, deterministically, relative to a reference date ("today").

`find_periods(text, today)` finds every period a question names, with its span: years ("in
2025"), quarters ("Q3 2024", "third quarter of 2024", "Q3"), halves ("H1 2025"), months ("June
2025", "in June"), ISO dates and months, ranges ("from March to June 2025", "between 2024-01-01
and 2024-03-31"), "since <any of those>", and relative periods ("last quarter", "last month",
"this year", "year to date", "last 6 months", "past 90 days"). Relative periods count back from
`today`: complete months/quarters/years before it; days and weeks end the day before it. A
period without a year ("Q3", "in June", "since March") is the latest one that starts before
`today`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from tools.analytics.outputs import PeriodModel

MONTHS: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1,
    "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")  # fmt: skip
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
            "4th": 4}  # fmt: skip

_MON = r"(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")"
_MON_SAFE = r"(" + "|".join(sorted((m for m in MONTHS if m != "may"), key=len, reverse=True)) + r")"
_YEAR = r"((?:19|20)\d{2})"
_ISO = r"(\d{4}-\d{2}-\d{2})"


@dataclass(frozen=True)
class Period:
    """The dates [start, end) and a label for people."""

    start: date
    end: date
    label: str

    def model(self) -> PeriodModel:
        return PeriodModel(label=self.label, start=self.start.isoformat(), end=self.end.isoformat())

    @property
    def month_aligned(self) -> bool:
        return self.start.day == 1 and self.end.day == 1

    def previous(self) -> Period:
        """The period of the same length just before (whole months when month-aligned)."""
        if self.month_aligned:
            months = _months_between(self.start, self.end)
            start = add_months(self.start, -months)
            return Period(start, self.start, _label_for(start, self.start))
        days = (self.end - self.start).days
        start = self.start - timedelta(days)
        return Period(start, self.start, _label_for(start, self.start))

    def year_earlier(self) -> Period:
        """The same dates one year before."""
        start, end = add_months(self.start, -12), add_months(self.end, -12)
        return Period(start, end, _label_for(start, end))


@dataclass(frozen=True)
class PeriodMatch:
    period: Period
    span: tuple[int, int]


def add_months(day: date, months: int) -> date:
    """`day` moved by whole months (the day clamped to the month's length)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = (date(year + (month == 11), (month + 1) % 12 + 1, 1) - timedelta(1)).day
    return date(year, month + 1, min(day.day, last))


def _months_between(start: date, end: date) -> int:
    return (end.year - start.year) * 12 + end.month - start.month


def _label_for(start: date, end: date) -> str:
    """A natural label for [start, end): a year, half, quarter, month, day or a range."""
    if start.day == 1 and end.day == 1:
        months = _months_between(start, end)
        if months == 12 and start.month == 1:
            return str(start.year)
        if months == 6 and start.month in (1, 7):
            return f"H{1 if start.month == 1 else 2} {start.year}"
        if months == 3 and start.month % 3 == 1:
            return f"Q{(start.month - 1) // 3 + 1} {start.year}"
        if months == 1:
            return f"{MONTH_NAMES[start.month - 1]} {start.year}"
        last = add_months(end, -1)
        return (
            f"{MONTH_NAMES[start.month - 1]} {start.year} - "
            f"{MONTH_NAMES[last.month - 1]} {last.year}"
        )
    if (end - start).days == 1:
        return start.isoformat()
    return f"{start.isoformat()} - {(end - timedelta(1)).isoformat()}"


def _period(start: date, end: date, label: str | None = None) -> Period:
    return Period(start, end, label or _label_for(start, end))


def month(year: int, number: int) -> Period:
    start = date(year, number, 1)
    return _period(start, add_months(start, 1))


def quarter(year: int, number: int) -> Period:
    start = date(year, 3 * number - 2, 1)
    return _period(start, add_months(start, 3))


def year_period(year: int) -> Period:
    return _period(date(year, 1, 1), date(year + 1, 1, 1))


def _latest(make: Callable[[int], Period], today: date) -> Period:
    """The latest of make(year) that starts before today."""
    for year in (today.year, today.year - 1):
        candidate = make(year)
        if candidate.start < today:
            return candidate
    return make(today.year - 1)


def _point(token: str, today: date) -> Period | None:
    """A single named period: ISO date or month, 'q3 2024', 'march 2025', 'march', '2025'."""
    token = token.strip()
    if m := re.fullmatch(_ISO, token):
        day = date.fromisoformat(m[1])
        return _period(day, day + timedelta(1))
    if m := re.fullmatch(r"(\d{4})-(\d{2})", token):
        return month(int(m[1]), int(m[2])) if 1 <= int(m[2]) <= 12 else None
    if m := re.fullmatch(r"q([1-4])(?:\s+(?:of\s+)?" + _YEAR + r")?", token):
        n = int(m[1])
        return quarter(int(m[2]), n) if m[2] else _latest(lambda y: quarter(y, n), today)
    if m := re.fullmatch(_MON + r"(?:\s+(?:of\s+)?" + _YEAR + r")?", token):
        n = MONTHS[m[1]]
        return month(int(m[2]), n) if m[2] else _latest(lambda y: month(y, n), today)
    if m := re.fullmatch(_YEAR, token):
        return year_period(int(m[1]))
    return None


_POINT = (
    r"("
    + _ISO
    + r"|\d{4}-\d{2}|q[1-4](?:\s+(?:of\s+)?"
    + _YEAR
    + r")?|"
    + _MON
    + r"(?:\s+(?:of\s+)?"
    + _YEAR
    + r")?|"
    + _YEAR
    + r")"
)


Rule = Callable[[re.Match[str]], Period | None]

_UNIT_MONTHS = {"month": 1, "quarter": 3, "year": 12}


def _rules(today: date) -> list[tuple[str, Rule]]:
    def iso_range(m: re.Match[str]) -> Period | None:
        a, b = date.fromisoformat(m[1]), date.fromisoformat(m[2])
        return _period(a, b + timedelta(1)) if b >= a else None

    def month_range(m: re.Match[str]) -> Period | None:
        m1, y1, m2, y2 = MONTHS[m[1]], m[2], MONTHS[m[3]], m[4]
        end_year = (
            int(y2)
            if y2
            else (int(y1) if y1 else _latest(lambda y: month(y, m2), today).start.year)
        )
        start_year = int(y1) if y1 else (end_year if m1 <= m2 else end_year - 1)
        start, end = date(start_year, m1, 1), add_months(date(end_year, m2, 1), 1)
        return _period(start, end) if end > start else None

    def since(m: re.Match[str]) -> Period | None:
        point = _point(m[1], today)
        if point is None or point.start >= today:
            return None
        return _period(point.start, today, f"since {point.label}")

    def rolling(m: re.Match[str]) -> Period | None:
        n, unit = int(m[1]), m[2]
        if not 1 <= n <= 1000:
            return None
        if unit in ("day", "week"):
            days = n * (7 if unit == "week" else 1)
            return _period(today - timedelta(days), today, f"last {n} {unit}s")
        months = n * _UNIT_MONTHS[unit]
        end = date(today.year, today.month, 1)
        if unit == "quarter":
            end = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
        if unit == "year":
            end = date(today.year, 1, 1)
        return _period(add_months(end, -months), end)

    def relative(m: re.Match[str]) -> Period | None:
        which, unit = m[1], m[2]
        this_month = date(today.year, today.month, 1)
        starts = {
            "month": this_month,
            "quarter": date(today.year, 3 * ((today.month - 1) // 3) + 1, 1),
            "year": date(today.year, 1, 1),
        }
        start = starts[unit]
        length = _UNIT_MONTHS[unit]
        if which in ("this", "current"):
            whole = _label_for(start, add_months(start, length))
            return _period(start, today, f"{whole} to date")
        return _period(add_months(start, -length), start)

    def to_date(m: re.Match[str]) -> Period | None:
        unit = {"ytd": "year", "qtd": "quarter", "mtd": "month"}.get(m[1], m[1])
        return relative(re.fullmatch(r"(this) (\w+)", f"this {unit}"))  # type: ignore[arg-type]

    def half(m: re.Match[str]) -> Period | None:
        groups = [g for g in m.groups() if g]
        year = int(next(g for g in groups if re.fullmatch(r"\d{4}", g)))
        which = next(g for g in groups if not re.fullmatch(r"\d{4}", g))
        n = 1 if which in ("h1", "first", "1st") else 2
        start = date(year, 1 if n == 1 else 7, 1)
        return _period(start, add_months(start, 6))

    def quarter_words(m: re.Match[str]) -> Period | None:
        return quarter(int(m[2]), ORDINALS[m[1]])

    def quarter_year_first(m: re.Match[str]) -> Period | None:
        return quarter(int(m[1]), int(m[2]))

    def point(m: re.Match[str]) -> Period | None:
        return _point(m[1], today)

    def month_in_context(m: re.Match[str]) -> Period | None:
        return _point(m[2], today)

    return [
        (r"\b(?:from|between)\s+" + _ISO + r"\s+(?:to|and|until|through|-)\s+" + _ISO, iso_range),
        (
            r"\b(?:from|between)\s+"
            + _MON
            + r"(?:\s+"
            + _YEAR
            + r")?\s+(?:to|and|until|through|-)\s+"
            + _MON
            + r"(?:\s+"
            + _YEAR
            + r")?\b",
            month_range,
        ),
        (r"\bsince\s+(?:the\s+start\s+of\s+|the\s+beginning\s+of\s+)?" + _POINT + r"\b", since),
        (
            r"\b(?:last|past|previous|prior|trailing)\s+(\d+)\s+(day|week|month|quarter|year)s?\b",
            rolling,
        ),
        (r"\b(last|previous|prior|this|current)\s+(month|quarter|year)\b", relative),
        (r"\b(ytd|qtd|mtd)\b", to_date),
        (r"\b(year|quarter|month)\s+to\s+date\b", to_date),
        (
            r"\b(?:(h[12])\s+" + _YEAR + r"|" + _YEAR + r"\s+(h[12])|(first|second|1st|2nd)\s+half"
            r"\s+(?:of\s+)?" + _YEAR + r")\b",
            half,
        ),
        (
            r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?" + _YEAR + r"\b",
            quarter_words,
        ),
        (r"\b" + _YEAR + r"\s*-?\s*q([1-4])\b", quarter_year_first),
        (r"\b(q[1-4](?:\s+(?:of\s+)?" + _YEAR + r")?)\b", point),
        (r"\b(" + _MON + r"\s+(?:of\s+)?" + _YEAR + r")\b", point),
        (r"\b(" + _ISO + r")\b", point),
        (r"\b(\d{4}-\d{2})\b(?!-)", point),
        (
            r"\b(in|during|for|of|since|until|through|and|to|vs|versus)\s+(" + _MON + r")\b",
            month_in_context,
        ),
        (r"\b(" + _MON_SAFE + r")\b", point),
        (r"\b(?:fy\s?)?(" + _YEAR + r")\b", point),
    ]


def find_periods(text: str, today: date) -> list[PeriodMatch]:
    """Every period named in `text` (lower-cased), in order of appearance, spans not overlapping."""
    work = text.lower()
    found: list[PeriodMatch] = []
    for pattern, build in _rules(today):
        for m in re.finditer(pattern, work):
            period = build(m)
            if period is None:
                continue
            # "in june": keep "in" for other rules, consume only the month
            span = m.span(2) if build.__name__ == "month_in_context" else m.span()
            found.append(PeriodMatch(period, span))
            work = work[: span[0]] + " " * (span[1] - span[0]) + work[span[1] :]
    return sorted(found, key=lambda match: match.span[0])


def parse_period(text: str, today: date) -> Period:
    """Exactly one period from `text` (e.g. 'Q3 2025', 'August 2025', '2025', 'last quarter')."""
    matches = find_periods(text, today)
    if len(matches) != 1:
        raise ValueError(
            f"cannot read one period from {text!r} ({len(matches)} found). Use e.g. '2025', "
            "'Q3 2025', 'H1 2025', 'August 2025', '2025-08', 'last quarter', 'last month', "
            "'since March 2025' or 'from 2025-01-01 to 2025-03-31'."
        )
    return matches[0].period


def parse_comparison(text: str | None, period: Period, today: date) -> Period:
    """The period to compare `period` with: 'previous period' (default), 'same period last
    year', or any period `parse_period` reads."""
    phrase = (text or "").strip().lower()
    if phrase in (
        "",
        "previous",
        "previous period",
        "prior period",
        "period before",
        "preceding period",
        "pop",
        "period over period",
    ):
        return period.previous()
    if re.search(
        r"\b(same period (last|previous|prior) year|year over year|yoy|prior year|"
        r"last year|previous year|year earlier|a year (before|earlier|ago))\b",
        phrase,
    ):
        return period.year_earlier()
    return parse_period(phrase, today)
