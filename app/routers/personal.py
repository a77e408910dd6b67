"""REST for the personal data the task, food and event agents manage: `/tasks`, `/meals`,
`/events` (list with filters and pages, create, read, change, delete).

Every row belongs to the API key's owner (the same owner id the chat agents act for): a list
shows only the caller's rows, and an id of another owner's row answers 404, exactly like an id
that does not exist. Bodies are strict (unknown fields 422) and bounded by the models of
`tools.personal.models`; datetimes need a UTC offset. When Postgres cannot be reached the answer
is 503 naming it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, TypeVar

import psycopg
from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status
from pydantic import BaseModel, ValidationError

from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, DependencyUnavailable, error_responses
from app.security import CallerDep
from app.services import get_services
from tools.personal.models import (
    Event,
    EventCreate,
    EventFilter,
    EventUpdate,
    Kind,
    Meal,
    MealCreate,
    MealFilter,
    MealType,
    MealUpdate,
    Page,
    Priority,
    Task,
    TaskCreate,
    TaskFilter,
    TaskStatus,
    TaskUpdate,
)
from tools.personal.service import (
    MAX_OFFSET,
    InvalidItem,
    NotFound,
    PersonalService,
    check_timezone,
)

router = APIRouter(tags=["personal"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

F = TypeVar("F", bound=BaseModel)

#: Largest id accepted in a path (ids are Postgres bigints).
MAX_ID = 2**62
ItemId = Annotated[int, Path(ge=1, le=MAX_ID, description="The item's id.")]
Limit = Annotated[
    int | None,
    Query(ge=1, le=1000, description="Rows per page (default PERSONAL_PAGE_SIZE, at most "
          "PERSONAL_MAX_PAGE_SIZE)."),
]  # fmt: skip
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Rows to skip.")]
Text = Annotated[
    str | None, Query(min_length=1, max_length=500, description="Text the item contains.")
]
Moment = Annotated[datetime | None, Query(description="ISO 8601 with a UTC offset.")]
Zone = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=64,
        description="IANA time zone the item's times are shown in (default PERSONAL_TIMEZONE).",
    ),
]
ITEM_ERRORS = error_responses(404)
WRITE_ERRORS = error_responses(404, 413)


def _service(request: Request) -> PersonalService:
    try:
        return get_services(request).agents.resource(PersonalService)
    except LookupError:
        raise DependencyUnavailable("postgres", "the personal data store is not open") from None


@asynccontextmanager
async def _answering(kind: Kind) -> AsyncIterator[None]:
    """Domain errors as HTTP answers: 404 for a missing (or another owner's) item, 422 for a
    value the data refuses (a NUL character, an event ending before it starts, a bad page)."""
    try:
        yield
    except NotFound:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"No {kind} with this id.") from None
    except (InvalidItem, ValueError, psycopg.DataError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, text) from None


def _filter(model: type[F], **values: Any) -> F:
    """The filter of a list from its query parameters (422 names what is wrong)."""
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, reasons) from None


def _zone(tz: str | None) -> str | None:
    if tz is None:
        return None
    try:
        return check_timezone(tz)
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


# --- tasks -----------------------------------------------------------------------------------


@router.get("/tasks", response_model=Page[Task])
async def list_tasks(
    request: Request,
    who: CallerDep,
    status_: Annotated[list[TaskStatus] | None, Query(alias="status", max_length=3)] = None,
    min_priority: Annotated[Priority | None, Query(description="At least this priority.")] = None,
    tag: Annotated[list[str] | None, Query(max_length=20, description="Has all these.")] = None,
    due_from: Moment = None,
    due_to: Moment = None,
    q: Text = None,
    limit: Limit = None,
    offset: Offset = 0,
) -> Any:
    """The caller's tasks, by due date (tasks without one last), one page at a time."""
    flt = _filter(TaskFilter, status=status_, min_priority=min_priority, tags=tag,
                  due_from=due_from, due_to=due_to, text=q)  # fmt: skip
    async with _answering("task"):
        return await _service(request).list_tasks(who.owner, flt, limit=limit, offset=offset)


@router.post("/tasks", response_model=Task, status_code=201, responses=error_responses(413))
async def create_task(body: TaskCreate, request: Request, who: CallerDep, tz: Zone = None) -> Any:
    """Create a task for the caller."""
    async with _answering("task"):
        return await _service(request).create_task(who.owner, body, tz=_zone(tz))


@router.get("/tasks/{task_id}", response_model=Task, responses=ITEM_ERRORS)
async def get_task(task_id: ItemId, request: Request, who: CallerDep) -> Any:
    """One of the caller's tasks."""
    async with _answering("task"):
        return await _service(request).get_task(who.owner, task_id)


@router.patch("/tasks/{task_id}", response_model=Task, responses=WRITE_ERRORS)
async def update_task(task_id: ItemId, body: TaskUpdate, request: Request, who: CallerDep) -> Any:
    """Change the fields given (status `done` completes the task)."""
    async with _answering("task"):
        return await _service(request).update_task(who.owner, task_id, body)


@router.delete("/tasks/{task_id}", status_code=204, responses=ITEM_ERRORS)
async def delete_task(task_id: ItemId, request: Request, who: CallerDep) -> Response:
    """Delete one of the caller's tasks."""
    async with _answering("task"):
        await _service(request).delete_task(who.owner, task_id)
    return Response(status_code=204)


# --- meals -----------------------------------------------------------------------------------


@router.get("/meals", response_model=Page[Meal])
async def list_meals(
    request: Request,
    who: CallerDep,
    meal_type: Annotated[list[MealType] | None, Query(max_length=4)] = None,
    eaten_from: Moment = None,
    eaten_to: Moment = None,
    min_calories: Annotated[int | None, Query(ge=0, le=20_000)] = None,
    max_calories: Annotated[int | None, Query(ge=0, le=20_000)] = None,
    q: Text = None,
    limit: Limit = None,
    offset: Offset = 0,
) -> Any:
    """The caller's meals, newest first, one page at a time."""
    flt = _filter(MealFilter, meal_type=meal_type, eaten_from=eaten_from, eaten_to=eaten_to,
                  min_calories=min_calories, max_calories=max_calories, text=q)  # fmt: skip
    async with _answering("meal"):
        return await _service(request).list_meals(
            who.owner, flt, limit=limit, offset=offset, newest_first=True
        )


@router.post("/meals", response_model=Meal, status_code=201, responses=error_responses(413))
async def create_meal(body: MealCreate, request: Request, who: CallerDep, tz: Zone = None) -> Any:
    """Log a meal for the caller."""
    async with _answering("meal"):
        return await _service(request).create_meal(who.owner, body, tz=_zone(tz))


@router.get("/meals/{meal_id}", response_model=Meal, responses=ITEM_ERRORS)
async def get_meal(meal_id: ItemId, request: Request, who: CallerDep) -> Any:
    """One of the caller's meals."""
    async with _answering("meal"):
        return await _service(request).get_meal(who.owner, meal_id)


@router.patch("/meals/{meal_id}", response_model=Meal, responses=WRITE_ERRORS)
async def update_meal(meal_id: ItemId, body: MealUpdate, request: Request, who: CallerDep) -> Any:
    """Change the fields given."""
    async with _answering("meal"):
        return await _service(request).update_meal(who.owner, meal_id, body)


@router.delete("/meals/{meal_id}", status_code=204, responses=ITEM_ERRORS)
async def delete_meal(meal_id: ItemId, request: Request, who: CallerDep) -> Response:
    """Delete one of the caller's meals."""
    async with _answering("meal"):
        await _service(request).delete_meal(who.owner, meal_id)
    return Response(status_code=204)


# --- events ----------------------------------------------------------------------------------


@router.get("/events", response_model=Page[Event])
async def list_events(
    request: Request,
    who: CallerDep,
    starts_from: Moment = None,
    starts_to: Moment = None,
    attendee: Annotated[str | None, Query(min_length=1, max_length=120)] = None,
    location: Annotated[str | None, Query(min_length=1, max_length=120)] = None,
    q: Text = None,
    limit: Limit = None,
    offset: Offset = 0,
) -> Any:
    """The caller's events, by start, one page at a time."""
    flt = _filter(EventFilter, starts_from=starts_from, starts_to=starts_to,
                  attendee=attendee, location=location, text=q)  # fmt: skip
    async with _answering("event"):
        return await _service(request).list_events(who.owner, flt, limit=limit, offset=offset)


@router.post("/events", response_model=Event, status_code=201, responses=error_responses(413))
async def create_event(body: EventCreate, request: Request, who: CallerDep, tz: Zone = None) -> Any:
    """Put an event on the caller's calendar (without an end it lasts PERSONAL_EVENT_MINUTES)."""
    async with _answering("event"):
        return await _service(request).create_event(who.owner, body, tz=_zone(tz))


@router.get("/events/{event_id}", response_model=Event, responses=ITEM_ERRORS)
async def get_event(event_id: ItemId, request: Request, who: CallerDep) -> Any:
    """One of the caller's events."""
    async with _answering("event"):
        return await _service(request).get_event(who.owner, event_id)


@router.patch("/events/{event_id}", response_model=Event, responses=WRITE_ERRORS)
async def update_event(
    event_id: ItemId, body: EventUpdate, request: Request, who: CallerDep
) -> Any:
    """Change the fields given (a moved start keeps the event's length)."""
    async with _answering("event"):
        return await _service(request).update_event(who.owner, event_id, body)


@router.delete("/events/{event_id}", status_code=204, responses=ITEM_ERRORS)
async def delete_event(event_id: ItemId, request: Request, who: CallerDep) -> Response:
    """Delete one of the caller's events."""
    async with _answering("event"):
        await _service(request).delete_event(who.owner, event_id)
    return Response(status_code=204)
