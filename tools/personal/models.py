"""Pydantic models of the personal data: tasks, meals and events, their inputs and their filters.

The same models serve the agents' tools and the REST endpoints: `*Create` validates a new row,
`*Update` a partial change (only the fields the caller set are written), `*Filter` the structured
filters of a list, and `Task` / `Meal` / `Event` are what the engine returns. Every datetime is
timezone-aware; a row keeps the IANA zone its times were given in (`tz`) and is returned in it.
Sizes are bounded here because every field can come from an untrusted client or a model.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from tools.personal.recurrence import MAX_RRULE_CHARS, check_rrule

Kind = Literal["task", "meal", "event"]
Priority = Literal["low", "normal", "high", "urgent"]
TaskStatus = Literal["open", "done", "cancelled"]
MealType = Literal["breakfast", "lunch", "dinner", "snack"]

#: Rank of each priority, for "at least high" filters and sorting.
PRIORITY_RANK: dict[str, int] = {"low": 0, "normal": 1, "high": 2, "urgent": 3}

MAX_TAGS = 20
MAX_LIST_ITEMS = 50

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Notes = Annotated[str, StringConstraints(strip_whitespace=True, max_length=4000)]
Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Query = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError("needs a UTC offset or time zone (e.g. 2025-03-14T09:00:00+01:00)")
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]


def _tag(value: str) -> str:
    tag = value.strip().lower().lstrip("#")
    if not tag or len(tag) > 40 or any(ch.isspace() for ch in tag):
        raise ValueError("a tag is 1-40 characters without spaces")
    return tag


Tag = Annotated[str, AfterValidator(_tag)]


def _unique(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


Tags = Annotated[list[Tag], AfterValidator(_unique)]


RRule = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_RRULE_CHARS),
    AfterValidator(check_rrule),
]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- tasks -----------------------------------------------------------------------------------


class TaskCreate(_Input):
    """A new task."""

    title: Title = Field(description="What to do, e.g. 'Renew my passport'.")
    notes: Notes = Field("", description="Free-text details.")
    due_at: AwareDatetime | None = Field(None, description="When it is due (with offset).")
    priority: Priority = Field("normal", description="low, normal, high or urgent.")
    tags: Tags = Field(default_factory=list, max_length=MAX_TAGS, description="Labels.")
    remind_at: AwareDatetime | None = Field(
        None, description="When to remind the owner (notification stream and webhooks)."
    )


class TaskUpdate(_Input):
    """A partial change to a task: only the fields that are set are written."""

    title: Title | None = None
    notes: Notes | None = None
    due_at: AwareDatetime | None = None
    priority: Priority | None = None
    status: TaskStatus | None = None
    tags: Tags | None = Field(None, max_length=MAX_TAGS)
    remind_at: AwareDatetime | None = None


class Task(BaseModel):
    """A stored task."""

    id: int
    user_id: str
    title: str
    notes: str
    due_at: datetime | None
    priority: Priority
    status: TaskStatus
    tags: list[str]
    created_at: datetime
    completed_at: datetime | None
    tz: str
    remind_at: datetime | None = None


class TaskFilter(_Input):
    """Structured filters of a task list (all optional, combined with AND)."""

    status: list[TaskStatus] | None = Field(None, description="Any of these statuses.")
    min_priority: Priority | None = Field(None, description="At least this priority.")
    priority: list[Priority] | None = Field(None, description="Exactly one of these.")
    tags: list[Tag] | None = Field(None, max_length=MAX_TAGS, description="Has all these tags.")
    due_from: AwareDatetime | None = Field(None, description="Due at or after.")
    due_to: AwareDatetime | None = Field(None, description="Due before.")
    completed_from: AwareDatetime | None = None
    completed_to: AwareDatetime | None = None
    text: Query | None = Field(None, description="Title or notes contain this text.")


# --- meals -----------------------------------------------------------------------------------


class MealCreate(_Input):
    """A logged meal."""

    eaten_at: AwareDatetime = Field(description="When it was eaten (with offset).")
    meal_type: MealType = Field(description="breakfast, lunch, dinner or snack.")
    description: Title = Field(description="What it was, e.g. 'oatmeal with banana'.")
    items: list[Short] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    calories: int | None = Field(None, ge=0, le=20_000, description="kcal.")
    protein_g: float | None = Field(None, ge=0, le=2_000)
    carbs_g: float | None = Field(None, ge=0, le=2_000)
    fat_g: float | None = Field(None, ge=0, le=2_000)


class MealUpdate(_Input):
    """A partial change to a meal."""

    eaten_at: AwareDatetime | None = None
    meal_type: MealType | None = None
    description: Title | None = None
    items: list[Short] | None = Field(None, max_length=MAX_LIST_ITEMS)
    calories: int | None = Field(None, ge=0, le=20_000)
    protein_g: float | None = Field(None, ge=0, le=2_000)
    carbs_g: float | None = Field(None, ge=0, le=2_000)
    fat_g: float | None = Field(None, ge=0, le=2_000)


class Meal(BaseModel):
    """A stored meal."""

    id: int
    user_id: str
    eaten_at: datetime
    meal_type: MealType
    description: str
    items: list[str]
    calories: int | None
    protein_g: float | None
    carbs_g: float | None
    fat_g: float | None
    created_at: datetime
    tz: str


class MealFilter(_Input):
    """Structured filters of a meal list."""

    meal_type: list[MealType] | None = Field(None, description="Any of these meal types.")
    eaten_from: AwareDatetime | None = Field(None, description="Eaten at or after.")
    eaten_to: AwareDatetime | None = Field(None, description="Eaten before.")
    min_calories: int | None = Field(None, ge=0, le=20_000)
    max_calories: int | None = Field(None, ge=0, le=20_000)
    text: Query | None = Field(None, description="Description or items contain this text.")


class NutritionTotals(BaseModel):
    """Sums over the meals of a period (None parts count as 0; `meals` says how many)."""

    start: datetime
    end: datetime
    meals: int
    calories: int
    protein_g: float
    carbs_g: float
    fat_g: float
    by_day: dict[str, int] = Field(default_factory=dict, description="kcal per local day.")


# --- events ----------------------------------------------------------------------------------


class EventCreate(_Input):
    """A calendar event."""

    title: Title = Field(description="e.g. 'Lunch with Sam'.")
    starts_at: AwareDatetime = Field(description="Start (with offset).")
    ends_at: AwareDatetime | None = Field(None, description="End; unset = one hour.")
    location: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] = ""
    attendees: list[Short] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    notes: Notes = ""
    remind_at: AwareDatetime | None = Field(
        None,
        description="When to remind the owner of the (first) occurrence; a recurring event is "
        "reminded as long before each occurrence.",
    )
    rrule: RRule | None = Field(
        None, description="Recurrence (RFC 5545 RRULE, e.g. 'FREQ=WEEKLY;BYDAY=MO;COUNT=10')."
    )

    @model_validator(mode="after")
    def _end_after_start(self) -> EventCreate:
        if self.ends_at is not None and self.ends_at <= self.starts_at:
            raise ValueError("ends_at must be after starts_at")
        if self.remind_at is not None and self.remind_at > self.starts_at:
            raise ValueError("remind_at must be at or before starts_at")
        return self


class EventUpdate(_Input):
    """A partial change to an event (a moved start keeps the event's duration)."""

    title: Title | None = None
    starts_at: AwareDatetime | None = None
    ends_at: AwareDatetime | None = None
    location: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None
    attendees: list[Short] | None = Field(None, max_length=MAX_LIST_ITEMS)
    notes: Notes | None = None
    remind_at: AwareDatetime | None = None
    rrule: RRule | None = None


class Event(BaseModel):
    """A stored event."""

    id: int
    user_id: str
    title: str
    starts_at: datetime
    ends_at: datetime | None
    location: str
    attendees: list[str]
    notes: str
    created_at: datetime
    tz: str
    remind_at: datetime | None = None
    rrule: str | None = None


class EventFilter(_Input):
    """Structured filters of an event list."""

    starts_from: AwareDatetime | None = Field(None, description="Starting at or after.")
    starts_to: AwareDatetime | None = Field(None, description="Starting before.")
    attendee: Short | None = Field(None, description="Has this attendee (case-insensitive).")
    location: Short | None = Field(None, description="Location contains this text.")
    text: Query | None = Field(None, description="Title or notes contain this text.")


# --- pages and hits --------------------------------------------------------------------------

ItemT = TypeVar("ItemT", Task, Meal, Event)


class Page(BaseModel, Generic[ItemT]):
    """One page of a list: `items`, the `total` matching rows, and where the next page starts."""

    items: list[ItemT]
    total: int
    offset: int
    limit: int
    next_offset: int | None


class Hit(BaseModel, Generic[ItemT]):
    """A search result: the item and its score (0..1, higher is better) and how it was found."""

    item: ItemT
    score: float
    dense_rank: int | None = None
    lexical_rank: int | None = None
    duplicates: int = Field(0, description="Other items with the same text folded into this one.")


def item_text(kind: Kind, row: dict[str, Any]) -> str:
    """The text of an item that is embedded and searched."""
    if kind == "task":
        parts = [row["title"], row.get("notes") or "", " ".join(row.get("tags") or [])]
    elif kind == "meal":
        parts = [row["meal_type"], row["description"], ", ".join(row.get("items") or [])]
    else:
        people = ", ".join(row.get("attendees") or [])
        parts = [row["title"], row.get("location") or "", people, row.get("notes") or ""]
    return " | ".join(part for part in parts if part)
