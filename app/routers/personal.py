"""REST for the personal data the task, food and event agents manage: `/tasks`, `/meals`,
`/events` (list with filters and pages, create, read, change, delete).

Every route calls the personal operations (`tools.personal.operations`), the same ones the
agents bind as tools. Every row belongs to the API key's owner (the same owner id the chat
agents act for): a list shows only the caller's rows, and an id of another owner's row answers
404, exactly like an id that does not exist. Bodies are strict (unknown fields 422) and bounded
by the models of `tools.personal.models`; datetimes need a UTC offset. When Postgres cannot be
reached the answer is 503 naming it.

The create / read / change / delete routes have one shape for the three kinds and are made by
:func:`_item_routes` from a table; the lists differ in their filters and are written out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Response, status
from pydantic import BaseModel, ValidationError

from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, error_responses
from app.operations import OperationContextDep
from tools.operations import Operation, OperationContext, argument_problems
from tools.personal.models import (
    Event,
    EventCreate,
    EventUpdate,
    Kind,
    Meal,
    MealCreate,
    MealType,
    MealUpdate,
    Page,
    Priority,
    Task,
    TaskCreate,
    TaskStatus,
    TaskUpdate,
)
from tools.personal.operations import events, meals, tasks
from tools.personal.service import MAX_OFFSET

router = APIRouter(tags=["personal"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

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


def _given(**values: Any) -> dict[str, Any]:
    """A list route's query values that its caller gave (None: not given): the operation's
    defaults are the only ones, the same over REST, MCP and for a tool."""
    return {name: value for name, value in values.items() if value is not None}


async def _call(op: Operation[Any, Any], ctx: OperationContext, **values: Any) -> Any:
    """Run ``op`` on the route's values (a value the operation refuses is 422 naming it)."""
    try:
        payload = op.parse(values)
    except ValidationError as exc:
        reasons = "; ".join(argument_problems(exc, op.input_model)[:5])
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, reasons) from None
    return await op(ctx, payload)


# --- lists -----------------------------------------------------------------------------------


@router.get("/tasks", response_model=Page[Task])
async def list_tasks(
    ctx: OperationContextDep,
    status_: Annotated[list[TaskStatus] | None, Query(alias="status", max_length=3)] = None,
    min_priority: Annotated[Priority | None, Query(description="At least this priority.")] = None,
    tag: Annotated[list[str] | None, Query(max_length=20, description="Has all these.")] = None,
    due_from: Moment = None,
    due_to: Moment = None,
    q: Text = None,
    limit: Limit = None,
    offset: Offset = 0,
) -> Any:
    """The caller's tasks, by due date (tasks without one last), one page at a time (default:
    every status, PERSONAL_PAGE_SIZE rows)."""
    found = await _call(tasks.list_tasks, ctx, **_given(
        status=status_, min_priority=min_priority, tags=tag, due_from=due_from, due_to=due_to,
        text=q, limit=limit, offset=offset))  # fmt: skip
    return found.page()


@router.get("/meals", response_model=Page[Meal])
async def list_meals(
    ctx: OperationContextDep,
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
    found = await _call(meals.list_meals, ctx, **_given(
        meal_type=meal_type, eaten_from=eaten_from, eaten_to=eaten_to,
        min_calories=min_calories, max_calories=max_calories, text=q, limit=limit,
        offset=offset))  # fmt: skip
    return found.page()


@router.get("/events", response_model=Page[Event])
async def list_events(
    ctx: OperationContextDep,
    starts_from: Moment = None,
    starts_to: Moment = None,
    attendee: Annotated[str | None, Query(min_length=1, max_length=120)] = None,
    location: Annotated[str | None, Query(min_length=1, max_length=120)] = None,
    q: Text = None,
    limit: Limit = None,
    offset: Offset = 0,
) -> Any:
    """The caller's events, by start, one page at a time."""
    found = await _call(events.list_events, ctx, **_given(
        starts_from=starts_from, starts_to=starts_to, attendee=attendee, location=location,
        text=q, limit=limit, offset=offset))  # fmt: skip
    return found.page()


# --- create / read / change / delete: one shape for the three kinds ---------------------------


@dataclass(frozen=True)
class ItemRoutes:
    """What the item routes of one kind need: its path, models and operations."""

    kind: Kind
    path: str
    id_field: str
    item: type[BaseModel]
    create_body: type[BaseModel]
    update_body: type[BaseModel]
    create: Operation[Any, Any]
    get: Operation[Any, Any]
    update: Operation[Any, Any]
    delete: Operation[Any, Any]
    #: The REST body's datetimes and the operation's argument each one becomes.
    dates: dict[str, str]
    create_doc: str
    update_doc: str


KINDS = (
    ItemRoutes("task", "/tasks", "task_id", Task, TaskCreate, TaskUpdate, tasks.create_task,
               tasks.get_task, tasks.update_task, tasks.delete_task,
               {"due_at": "due", "remind_at": "remind"},
               "Create a task for the caller.",
               "Change the fields given (status `done` completes the task)."),
    ItemRoutes("meal", "/meals", "meal_id", Meal, MealCreate, MealUpdate, meals.log_meal,
               meals.get_meal, meals.update_meal, meals.delete_meal, {"eaten_at": "eaten_at"},
               "Log a meal for the caller.", "Change the fields given."),
    ItemRoutes("event", "/events", "event_id", Event, EventCreate, EventUpdate,
               events.create_event, events.get_event, events.update_event, events.delete_event,
               {"starts_at": "starts", "ends_at": "ends", "remind_at": "remind"},
               "Put an event on the caller's calendar (without an end it lasts "
               "PERSONAL_EVENT_MINUTES).",
               "Change the fields given (a moved start keeps the event's length)."),
)  # fmt: skip


def _arguments(spec: ItemRoutes, body: BaseModel, *, change: bool) -> dict[str, Any]:
    """A REST body as the operation's arguments: its datetimes as ISO 8601 and, in a change,
    the fields given as null in ``clear`` (in a new item a null is the default)."""
    values = body.model_dump(exclude_unset=change)
    nulls = [field for field, value in values.items() if value is None]
    for field in nulls:
        del values[field]
    for field, argument in spec.dates.items():
        if field in values:
            values[argument] = values.pop(field).isoformat()
    if change and nulls:
        values["clear"] = [spec.dates.get(field, field) for field in nulls]
    return values


def _route(
    func: Callable[..., Any], name: str, doc: str, params: list[tuple[str, Any]], returns: Any
) -> Callable[..., Any]:
    """``func`` with the name, docstring and typed signature FastAPI reads (a query parameter
    named ``tz`` is optional)."""
    func.__name__ = func.__qualname__ = name
    func.__doc__ = doc
    keyword = inspect.Parameter.KEYWORD_ONLY
    func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(p, keyword, annotation=t, default=None if p == "tz" else empty)
            for p, t in params
        ],
        return_annotation=returns,
    )
    return func


empty = inspect.Parameter.empty


def _item_routes(spec: ItemRoutes) -> None:
    """The create, read, change and delete routes of one kind."""
    kind, one = spec.kind, f"{spec.path}/{{{spec.id_field}}}"

    async def create(**kw: Any) -> Any:
        # ?tz= is the operation's own argument (validated there, as over MCP)
        values = {**_arguments(spec, kw["body"], change=False), **_given(tz=kw["tz"])}
        return await _call(spec.create, kw["ctx"], **values)

    async def get(**kw: Any) -> Any:
        return await _call(spec.get, kw["ctx"], **{spec.id_field: kw[spec.id_field]})

    async def update(**kw: Any) -> Any:
        changes = _arguments(spec, kw["body"], change=True)
        op = spec.update if changes else spec.get  # an empty change answers the item as it is
        return await _call(op, kw["ctx"], **{spec.id_field: kw[spec.id_field]}, **changes)

    async def delete(**kw: Any) -> Response:
        await _call(spec.delete, kw["ctx"], **{spec.id_field: kw[spec.id_field]})
        return Response(status_code=204)

    key = (spec.id_field, ItemId)
    router.post(spec.path, response_model=spec.item, status_code=201,
                responses=error_responses(413))(_route(
        create, f"create_{kind}", spec.create_doc,
        [("body", spec.create_body), ("ctx", OperationContextDep), ("tz", Zone)],
        Any))  # fmt: skip
    router.get(one, response_model=spec.item, responses=ITEM_ERRORS)(
        _route(get, f"get_{kind}", f"One of the caller's {kind}s.",
               [key, ("ctx", OperationContextDep)], Any))  # fmt: skip
    router.patch(one, response_model=spec.item, responses=WRITE_ERRORS)(
        _route(update, f"update_{kind}", spec.update_doc,
               [key, ("body", spec.update_body), ("ctx", OperationContextDep)], Any))  # fmt: skip
    router.delete(one, status_code=204, responses=ITEM_ERRORS)(
        _route(delete, f"delete_{kind}", f"Delete one of the caller's {kind}s.",
               [key, ("ctx", OperationContextDep)], Response))  # fmt: skip


for _spec in KINDS:
    _item_routes(_spec)
