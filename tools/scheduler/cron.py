"""Cron expressions and time zones: UTC inside, the job's zone only to read its expression."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter


class ScheduleError(ValueError):
    """A schedule the scheduler cannot use (the message names the fix)."""


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` (ScheduleError naming the fix when unknown)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"unknown time zone {name!r}: use an IANA name such as 'UTC' or 'Europe/Berlin'"
        ) from None


def check_cron(expression: str) -> str:
    """``expression`` when croniter reads it (5 fields, or 6 with seconds); else ScheduleError."""
    expression = expression.strip()
    if not croniter.is_valid(expression):
        raise ScheduleError(
            f"invalid cron expression {expression!r}: use five fields 'minute hour day month "
            "weekday' (e.g. '*/5 * * * *', '0 9 * * MON-FRI')"
        )
    return expression


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is refused (which zone it meant is unknown)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ScheduleError(
            "a naive datetime has no time zone: pass an aware one (e.g. datetime.now(UTC))"
        )
    return moment.astimezone(UTC)


def next_fire(expression: str, timezone: str, after: datetime) -> datetime:
    """The first time strictly after ``after`` that ``expression`` names, read in ``timezone``
    (so '0 9 * * *' in Europe/Berlin is 09:00 Berlin time across DST), returned in UTC."""
    start = utc(after).astimezone(zone(timezone))
    try:
        found = croniter(check_cron(expression), start).get_next(datetime)
    except (CroniterBadCronError, CroniterBadDateError) as exc:
        raise ScheduleError(f"cron expression {expression!r}: {exc}") from None
    return utc(found)


def to_ms(moment: datetime) -> int:
    return int(utc(moment).timestamp() * 1000)


def from_ms(ms: int | float | str) -> datetime:
    return datetime.fromtimestamp(int(ms) / 1000, UTC)
