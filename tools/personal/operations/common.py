"""What every personal operation shares: the owner's clock and dates in words, the refusals,
the item a request names (by id or by words), the result models of lists, totals and webhooks.

A caller's :class:`~tools.operations.OperationContext` carries the owner and the time zone its
dates in words are read in; an agent also pins the clock (``extra["now"]``, for tests and
replays) and the hour a bare date means (``extra["default_hour"]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Annotated, Any, Generic

import psycopg
from pydantic import AfterValidator, BaseModel, Field, ValidationError, create_model

from tools.operations import (
    Arguments,
    NotFound,
    Operation,
    OperationContext,
    OperationError,
    operation,
)
from tools.personal.dates import DateRange, Prefer, find_range, local_now, parse_datetime
from tools.personal.format import describe
from tools.personal.models import EventFilter, Hit, ItemT, Kind, MealFilter, Page, TaskFilter
from tools.personal.service import MAX_OFFSET, InvalidItem, PersonalService, check_timezone
from tools.personal.service import NotFound as NoSuchItem
from tools.personal.webhooks import Delivery, EventType, WebhookEvent, WebhookSender

CAPABILITY = "personal"


def personal(*, read_only: bool = False, name: str | None = None) -> Any:
    """``@operation`` of the personal capability."""
    return operation(CAPABILITY, read_only=read_only, name=name)


class Refusal(OperationError):
    """A refusal with two wordings: ``str()`` for a route, ``reply`` for the model.

    ``artifact`` is the structured result a tool shows alongside the reply.
    """

    def __init__(
        self, message: str, *, reply: str, artifact: dict[str, Any] | None = None, status: int
    ) -> None:
        super().__init__(message, status=status)
        self.reply = reply
        self.artifact = artifact


class Missing(Refusal, NotFound):
    """The owner has no such item (404; another owner's item is not found either)."""


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _short(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()
    )


def invalid(text: str) -> Refusal:
    """A value the operation cannot use (422), the same words for a route and the model."""
    return Refusal(text, reply=f"Invalid: {text}", artifact={"error": "invalid"}, status=422)


@contextmanager
def refusals() -> Iterator[None]:
    """The engine's errors as refusals: 404 for a missing (or another owner's) item, 422 for a
    value the data refuses (a NUL character, an event ending before it starts, a bad date)."""
    try:
        yield
    except NoSuchItem as exc:
        raise Missing(
            f"No {exc.kind} with this id.",
            reply=f"Not found: {exc}.",
            artifact={"error": "not_found"},
            status=404,
        ) from None
    except ValidationError as exc:
        raise Refusal(
            _first_line(exc),
            reply=f"Invalid: {_short(exc)}",
            artifact={"error": "invalid"},
            status=422,
        ) from None
    except (InvalidItem, ValueError) as exc:
        raise invalid(_first_line(exc)) from None
    except psycopg.DataError as exc:
        reply = f"Invalid: {exc.diag.message_primary}"
        raise Refusal(_first_line(exc), reply=reply, status=422) from None


#: The caller's IANA time zone for one call (REST's ``?tz=``): its dates in words are read in
#: it and the new item's times shown in it (None: the caller's, PERSONAL_TIMEZONE).
Zone = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=64,
        description="IANA time zone (e.g. Europe/Berlin) the dates in words are read in and "
        "the item's times are shown in; default: PERSONAL_TIMEZONE.",
    ),
    AfterValidator(lambda tz: None if tz is None else check_timezone(tz)),
]


def zoned(ctx: OperationContext, tz: str | None) -> OperationContext:
    """``ctx`` in the zone a call names (``tz``), or as it is."""
    return ctx if tz is None else replace(ctx, timezone=tz)


def engine(ctx: OperationContext) -> PersonalService:
    """The personal data engine (EngineNotOpen when the component did not start)."""
    return ctx.engine(PersonalService)


def clock(ctx: OperationContext) -> datetime:
    """The current time in the caller's zone (``extra["now"]`` pins it)."""
    return local_now(ctx.timezone, ctx.extra.get("now"))


def moment(value: str | None, ctx: OperationContext, prefer: Prefer = "future") -> datetime | None:
    """A date argument (ISO 8601 or words) as an aware datetime, or None."""
    if value is None or not value.strip():
        return None
    # an agent pins the hour it was built with; a route or MCP call takes the setting's
    hour = int(ctx.extra.get("default_hour", engine(ctx).limits.default_hour))
    return parse_datetime(value, tz=ctx.timezone, now=clock(ctx), prefer=prefer, default_hour=hour)


_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10,
            "fifteen": 15, "thirty": 30, "half an": 0.5}  # fmt: skip
_UNITS = {"minute": 1, "min": 1, "hour": 60, "hr": 60, "day": 1440, "week": 10080}
_BEFORE = re.compile(
    r"^(?P<n>\d+(?:\.\d+)?|half an|an?|one|two|three|four|five|ten|fifteen|thirty)\s*"
    r"(?P<unit>minute|min|hour|hr|day|week)s?\s+(?:before|earlier|ahead|in advance)$",
    re.IGNORECASE,
)


def reminder(
    value: str | None, ctx: OperationContext, anchor: datetime | None, what: str = "due time"
) -> datetime | None:
    """A ``remind_at`` argument as an aware datetime: ISO 8601 or words ('tomorrow at 8'), or
    a lead before ``anchor`` (the due time or start: 'an hour before', '2 days before').
    ValueError for a time in the past, or a lead without an anchor."""
    if value is None or not value.strip():
        return None
    lead = _BEFORE.match(" ".join(value.strip().split()))
    if lead is not None:
        if anchor is None:
            raise ValueError(f"'{value}' needs a {what}: give one, or a time for the reminder")
        count = lead.group("n").lower()
        amount = _NUMBERS[count] if count in _NUMBERS else float(count)
        found: datetime | None = anchor - timedelta(
            minutes=amount * _UNITS[lead.group("unit").lower()]
        )
    else:
        found = moment(value, ctx)
    if found is not None and found < clock(ctx):
        raise ValueError(f"the reminder time {found.isoformat()} is in the past; give a later one")
    return found


def period(value: str | None, ctx: OperationContext, prefer: Prefer = "future") -> DateRange | None:
    """A period argument ("this week", "yesterday", "2025-03-14") as ``[start, end)``."""
    if value is None or not value.strip():
        return None
    found = find_range(value, tz=ctx.timezone, now=clock(ctx), prefer=prefer)
    if found is None:
        raise ValueError(
            f"could not read {value!r} as a period: try 'today', 'yesterday', 'this week', "
            "'next month', 'the next 3 days' or a date"
        )
    return found


async def resolve_target(
    ctx: OperationContext, kind: Kind, item_id: int | None, match: str | None
) -> int:
    """The id an operation acts on: ``item_id``, or the one item whose title contains ``match``
    (an open task, an event from yesterday on, any meal)."""
    if item_id is not None:
        return item_id
    if not match or not match.strip():
        raise ValueError(f"name the {kind}: give its id (#n in lists) or words of its title")
    service, user, now = engine(ctx), ctx.owner, clock(ctx)
    page: Page[Any]
    if kind == "task":
        page = await service.list_tasks(user, TaskFilter(status=["open"], text=match), limit=5)
    elif kind == "event":
        page = await service.list_events(
            user, EventFilter(text=match, starts_from=now - timedelta(days=1)), limit=5
        )
    else:
        page = await service.list_meals(user, MealFilter(text=match), limit=5, newest_first=True)
    if page.total == 1:
        return int(page.items[0].id)
    if page.total == 0:
        raise ValueError(f"no {kind} matches '{match}'")
    options = "; ".join(f"#{i.id} {describe(i, now)}" for i in page.items)
    raise ValueError(f"'{match}' matches {page.total} {kind}s ({options}): say which one by id")


#: Rows per page of a list (None: PERSONAL_PAGE_SIZE; at most PERSONAL_MAX_PAGE_SIZE).
Limit = Annotated[
    int | None,
    Field(
        ge=1,
        le=1000,
        description="Rows per page (default PERSONAL_PAGE_SIZE, at most PERSONAL_MAX_PAGE_SIZE).",
    ),
]
#: Rows to skip.
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET, description="Rows to skip.")]


def changes(
    args: BaseModel,
    ctx: OperationContext,
    *,
    keys: set[str],
    dates: dict[str, str],
    prefer: Prefer = "future",
) -> dict[str, Any]:
    """The columns an update changes: the arguments given (None = unchanged; ``keys`` name the
    item, not a change), its dates in words as datetimes (``dates``: argument -> column; an
    empty one clears it), and the fields named in ``clear`` emptied."""
    given = args.model_dump(exclude={*keys, *dates, "clear"})
    out: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    for argument, column in dates.items():
        value = getattr(args, argument)
        if value is not None:
            out[column] = moment(value, ctx, prefer)
    for name in getattr(args, "clear", None) or ():
        out[dates.get(name, name)] = None
    return out


class ItemRef(Arguments):
    """An item by id, or by words of its title."""

    match: str | None = Field(None, max_length=200, description="Or words of its title.")


class Listing(BaseModel, Generic[ItemT]):
    """A list or a search: the items (best first for a search), what they are and the page."""

    kind: Kind
    label: str = Field(description="What the list shows, e.g. 'open due this week'.")
    items: list[ItemT]
    total: int
    offset: int = 0
    limit: int | None = None
    next_offset: int | None = None
    scores: list[float] | None = Field(None, description="A search's cosine score per item.")

    @classmethod
    def of_page(cls, kind: Kind, label: str, page: Page[Any]) -> Listing[Any]:
        return cls(
            kind=kind,
            label=label,
            items=page.items,
            total=page.total,
            offset=page.offset,
            limit=page.limit,
            next_offset=page.next_offset,
        )

    @classmethod
    def of_hits(cls, kind: Kind, label: str, hits: list[Hit[Any]]) -> Listing[Any]:
        items = [h.item for h in hits]
        return cls(
            kind=kind, label=label, items=items, total=len(items), scores=[h.score for h in hits]
        )

    def page(self) -> Page[ItemT]:
        """The REST page of a list."""
        return Page[Any](
            items=self.items,
            total=self.total,
            offset=self.offset,
            limit=self.limit or len(self.items),
            next_offset=self.next_offset,
        )


def get_operation(kind: Kind, item: type[BaseModel], ids: type[BaseModel]) -> Operation[Any, Any]:
    """``get_<kind>``: one of the owner's items by id (``ids`` holds ``<kind>_id``)."""

    async def run(ctx: OperationContext, args: BaseModel) -> Any:
        with refusals():
            return await engine(ctx).get(ctx.owner, kind, getattr(args, f"{kind}_id"))

    return Operation(
        name=f"get_{kind}",
        capability=CAPABILITY,
        description=f"One of the user's {kind}s, by id.",
        input_model=ids,
        output_model=item,
        run=run,
        read_only=True,
    )


def search_operation(
    kind: Kind, item: type[BaseModel], *, description: str, query_help: str, label: str
) -> Operation[Any, Any]:
    """``search_<kind>s``: the owner's items nearest in meaning to a query, any status
    (``label``: how the list is named, "about" or "like" the query)."""
    args_model = create_model(
        f"Search{kind.capitalize()}s",
        __base__=Arguments,
        query=(str, Field(min_length=1, max_length=500, description=query_help)),
        limit=(int, Field(10, ge=1, le=100)),
    )

    async def run(ctx: OperationContext, args: Any) -> Listing[Any]:
        with refusals():
            hits = await engine(ctx).search(ctx.owner, kind, args.query, limit=args.limit)
            return Listing[item].of_hits(kind, f"{label} '{args.query}'", hits)  # type: ignore[valid-type]

    return Operation(
        name=f"search_{kind}s",
        capability=CAPABILITY,
        description=description,
        input_model=args_model,
        output_model=Listing[item],  # type: ignore[valid-type]
        run=run,
        read_only=True,
    )


class DayArgs(Arguments):
    """Arguments of a daily summary."""

    day: str = Field("today", max_length=100, description="The day: 'today', 'yesterday', a date.")


class Sent(BaseModel):
    """What a webhook operation sent, and where it arrived."""

    event: EventType
    what: str = Field(description="What was sent, e.g. 'a reminder for #3'.")
    configured: bool = Field(description="Whether any webhook URL is configured.")
    event_id: str | None = None
    deliveries: list[Delivery] = Field(default_factory=list)


async def send_webhook(
    ctx: OperationContext, event_type: EventType, data: dict[str, Any], what: str
) -> Sent:
    """POST a webhook event for the caller; nothing is sent without a configured URL."""
    try:
        sender: WebhookSender | None = ctx.engine(WebhookSender)
    except OperationError:
        sender = None
    if sender is None or not sender.enabled:
        return Sent(event=event_type, what=what, configured=False)
    event = WebhookEvent(type=event_type, user_id=ctx.owner, data=data)
    deliveries = await sender.send(event)
    return Sent(
        event=event_type, what=what, configured=True, event_id=event.id, deliveries=deliveries
    )
