"""Natural-language dates in the user's zone: the conventions of tools/personal/dates.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.personal.support import NOW
from tools.personal.dates import find_range, find_when, parse_datetime

TZ = "Europe/Berlin"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("next Friday at 9", "2025-03-14T09:00:00+01:00"),
        ("Thursday 12:30", "2025-03-13T12:30:00+01:00"),
        ("tomorrow", "2025-03-13T09:00:00+01:00"),
        ("yesterday at 8pm", "2025-03-11T20:00:00+01:00"),
        ("this Wednesday", "2025-03-12T09:00:00+01:00"),
        ("next Wednesday", "2025-03-19T09:00:00+01:00"),
        ("last Friday at noon", "2025-03-07T12:00:00+01:00"),
        ("March 20 at 3pm", "2025-03-20T15:00:00+01:00"),
        ("on the 1st", "2025-04-01T09:00:00+02:00"),
        ("in 3 days", "2025-03-15T09:00:00+01:00"),
        ("at 3", "2025-03-12T15:00:00+01:00"),
        ("at 9", "2025-03-13T09:00:00+01:00"),  # 9:00 has passed today: tomorrow
        ("March 31 at 9:15", "2025-03-31T09:15:00+02:00"),  # after the DST change
    ],
)
def test_moments(text: str, expected: str) -> None:
    when = find_when(text, tz=TZ, now=NOW)
    assert when is not None and when.start.isoformat() == expected


def test_next_friday_on_a_friday_is_a_week_later() -> None:
    friday = datetime(2025, 3, 14, 8, 0, tzinfo=ZoneInfo(TZ))
    assert find_when("next Friday", tz=TZ, now=friday).start.date().day == 21  # type: ignore[union-attr]
    assert find_when("Friday", tz=TZ, now=friday).start.date().day == 14  # type: ignore[union-attr]


def test_ranges_and_zones() -> None:
    week = find_range("what's due this week?", tz=TZ, now=NOW)
    assert week is not None
    assert (week.start.isoformat(), week.end.isoformat()) == (
        "2025-03-10T00:00:00+01:00",
        "2025-03-17T00:00:00+01:00",
    )
    monday = find_range("what did I eat on Monday?", tz=TZ, now=NOW, prefer="past")
    assert monday is not None and monday.start.day == 10
    tokyo = find_range("today", tz="Asia/Tokyo", now=NOW)  # 18:00 in Tokyo: same day there
    assert tokyo is not None and tokyo.start.isoformat() == "2025-03-12T00:00:00+09:00"
    late = NOW.replace(hour=23, minute=30)  # already Thursday in Tokyo
    assert find_range("today", tz="Asia/Tokyo", now=late).start.day == 13  # type: ignore[union-attr]
    assert parse_datetime("2025-03-14T09:00", tz=TZ).utcoffset() == timedelta(hours=1)
    with pytest.raises(ValueError, match="could not read"):
        parse_datetime("when pigs fly", tz=TZ, now=NOW)
    with pytest.raises(ValueError, match="IANA"):
        find_when("tomorrow", tz="Mars/Olympus", now=NOW)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_arbitrary_text_never_breaks_the_parsers(text: str) -> None:
    when = find_when(text, tz=TZ, now=NOW)
    if when is not None:
        assert when.start.tzinfo is not None
        assert when.end is None or when.end > when.start
    span = find_range(text, tz=TZ, now=NOW)
    if span is not None:
        assert span.end > span.start
