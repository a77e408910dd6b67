"""The event operations: create, list, change and delete calendar events, semantic and hybrid
search, and the event-created / daily-summary webhooks of the owner's calendar."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, AwareDatetime, Field

from tools.operations import Arguments, OperationContext
from tools.personal.format import describe
from tools.personal.models import MAX_LIST_ITEMS, Event, EventCreate, EventFilter, EventUpdate
from tools.personal.operations.common import (
    DayArgs,
    ItemRef,
    Limit,
    Listing,
    Offset,
    Sent,
    Zone,
    changes,
    clock,
    engine,
    get_operation,
    moment,
    period,
    personal,
    refusals,
    reminder,
    resolve_target,
    search_operation,
    send_webhook,
    zoned,
)


class CreateEvent(Arguments):
    title: str = Field(min_length=1, max_length=200, description="e.g. 'Lunch with Sam'.")
    # POST /events's names first (shown to MCP clients); the agents' model sees starts / ends
    starts: str = Field(
        min_length=1,
        max_length=200,
        validation_alias=AliasChoices("starts_at", "starts"),
        description="Start: ISO 8601 or words ('Thursday 12:30').",
    )
    ends: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("ends_at", "ends"),
        description="End; default: one hour later.",
    )
    location: str = Field("", max_length=200)
    attendees: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    notes: str = Field("", max_length=4000)
    remind: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("remind_at", "remind"),
        description="When to remind the user: ISO 8601, words, or a lead before the start "
        "('an hour before'); a recurring event is reminded as long before each occurrence.",
    )
    rrule: str | None = Field(
        None,
        max_length=500,
        description="Recurrence as an RFC 5545 RRULE, e.g. 'FREQ=WEEKLY;BYDAY=MO;COUNT=10'.",
    )
    tz: Zone = None


@personal()
async def create_event(ctx: OperationContext, args: CreateEvent) -> Event:
    """Put an event on the user's calendar."""
    ctx = zoned(ctx, args.tz)
    with refusals():
        starts = moment(args.starts, ctx)  # None: refused by EventCreate
        data = EventCreate(
            title=args.title,
            starts_at=starts,
            ends_at=moment(args.ends, ctx),
            location=args.location,
            attendees=args.attendees,
            notes=args.notes,
            remind_at=reminder(args.remind, ctx, starts, what="start"),
            rrule=args.rrule,
        )
        return await engine(ctx).create_event(ctx.owner, data, tz=ctx.timezone)


class EventId(Arguments):
    event_id: int = Field(ge=1, le=2**62, description="The event's id (#n in lists).")


get_event = get_operation("event", Event, EventId)


class ListEvents(Arguments):
    """The filters of an event list; the defaults are GET /events's (by start, a page of
    PERSONAL_PAGE_SIZE): the route passes only what its caller gave."""

    starts: str | None = Field(
        None, max_length=100, description="Period: 'today', 'tomorrow', 'next week', a date."
    )
    attendee: str | None = Field(None, max_length=120)
    location: str | None = Field(None, max_length=120)
    text: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("text", "q"),  # GET /events's ?q=
    )
    upcoming: bool = Field(False, description="Only events that have not started yet.")
    starts_from: AwareDatetime | None = Field(None, description="Starting at or after (ISO).")
    starts_to: AwareDatetime | None = Field(None, description="Starting before (ISO 8601).")
    limit: Limit = None
    offset: Offset = 0


@personal(read_only=True)
async def list_events(ctx: OperationContext, args: ListEvents) -> Listing[Event]:
    """List the user's calendar events with structured filters (period, attendee, place)."""
    with refusals():
        now = clock(ctx)
        flt: dict[str, Any] = {
            "attendee": args.attendee,
            "location": args.location,
            "text": args.text,
            "starts_from": args.starts_from,
            "starts_to": args.starts_to,
        }
        parts: list[str] = []
        if span := period(args.starts, ctx):
            flt.update(starts_from=span.start, starts_to=span.end)
            parts.append(span.label)
        if args.upcoming:
            flt["starts_from"] = max(flt.get("starts_from") or now, now)
            parts.append("upcoming")
        if args.attendee:
            parts.append(f"with {args.attendee}")
        if args.location:
            parts.append(f"at {args.location}")
        page = await engine(ctx).list_events(
            ctx.owner, EventFilter(**flt), limit=args.limit, offset=args.offset
        )
        return Listing[Event].of_page("event", " ".join(parts) or "on the calendar", page)


class EventRef(ItemRef):
    event_id: int | None = Field(None, ge=1, le=2**62, description="The event's id (#n in lists).")
    match: str | None = Field(
        None, max_length=200, description="Or words of its title (one upcoming event)."
    )


class UpdateEvent(EventRef):
    """The fields given are changed (a new start keeps the length unless a new end is given)."""

    title: str | None = Field(None, min_length=1, max_length=200)
    starts: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("starts_at", "starts"),  # PATCH /events/{id}'s first
        description="New start; keeps the length.",
    )
    ends: str | None = Field(None, max_length=200, validation_alias=AliasChoices("ends_at", "ends"))
    location: str | None = Field(None, max_length=200)
    attendees: list[str] | None = Field(None, max_length=MAX_LIST_ITEMS)
    notes: str | None = Field(None, max_length=4000)
    remind: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("remind_at", "remind"),
        description="New reminder time: ISO 8601, words, or a lead before the start "
        "('an hour before'); a recurring event is reminded as long before each occurrence.",
    )
    rrule: str | None = Field(
        None,
        max_length=500,
        description="Recurrence as an RFC 5545 RRULE, e.g. 'FREQ=WEEKLY;BYDAY=MO;COUNT=10'.",
    )
    clear: list[
        Literal[
            "title", "starts", "starts_at", "ends", "ends_at", "location", "attendees", "notes",
            "remind", "remind_at", "rrule",
        ]
    ] = Field(
        default_factory=list, max_length=11, description="Fields to empty, e.g. ['ends_at']."
    )  # fmt: skip


@personal()
async def update_event(ctx: OperationContext, args: UpdateEvent) -> Event:
    """Change or move an event (a new start keeps its length unless a new end is given)."""
    with refusals():
        dates = {"starts": "starts_at", "ends": "ends_at"}
        found = changes(args, ctx, keys={"event_id", "match", "remind"}, dates=dates)
        if "remind" in found:  # clear=["remind"]
            found["remind_at"] = found.pop("remind")
        if not found and args.remind is None:
            raise ValueError("nothing to change")
        target = await resolve_target(ctx, "event", args.event_id, args.match)
        if args.remind is not None:
            anchor = found.get("starts_at")
            if anchor is None:
                anchor = (await engine(ctx).get_event(ctx.owner, target)).starts_at
            found["remind_at"] = reminder(args.remind, ctx, anchor, what="start")
        return await engine(ctx).update_event(ctx.owner, target, EventUpdate(**found))


@personal()
async def delete_event(ctx: OperationContext, args: EventRef) -> Event:
    """Remove an event from the calendar (by id, or by words of its title)."""
    with refusals():
        target = await resolve_target(ctx, "event", args.event_id, args.match)
        return await engine(ctx).delete_event(ctx.owner, target)


search_events = search_operation(
    "event",
    Event,
    description="Find the user's events by meaning ('events about the conference').",
    query_help="What the events are about.",
    label="about",
)


class HybridSearchEvents(Arguments):
    query: str = Field(min_length=1, max_length=500, description="What the events are about.")
    starts: str | None = Field(None, max_length=100, description="Within this period.")
    attendee: str | None = Field(None, max_length=120)
    limit: int = Field(10, ge=1, le=100)


@personal(read_only=True)
async def hybrid_search_events(ctx: OperationContext, args: HybridSearchEvents) -> Listing[Event]:
    """Filter events (period, attendee), then rank them by meaning
    ('meetings with Anna next week about the budget')."""
    with refusals():
        flt: dict[str, Any] = {"attendee": args.attendee}
        if span := period(args.starts, ctx):
            flt.update(starts_from=span.start, starts_to=span.end)
        hits = await engine(ctx).hybrid_search(
            ctx.owner, "event", args.query, EventFilter(**flt), limit=args.limit
        )
        return Listing[Event].of_hits("event", f"about '{args.query}'", hits)


@personal()
async def announce_event(ctx: OperationContext, args: EventId) -> Sent:
    """Send an 'event created' webhook for an event (e.g. to an n8n workflow)."""
    with refusals():
        event = await engine(ctx).get_event(ctx.owner, args.event_id)
        data = {"event": event.model_dump(mode="json"), "text": describe(event, clock(ctx))}
        return await send_webhook(ctx, "event.created", data, f"event #{event.id}")


@personal()
async def send_event_summary(ctx: OperationContext, args: DayArgs) -> Sent:
    """Send a 'daily summary' webhook with the day's events."""
    with refusals():
        span = period(args.day, ctx)
        assert span is not None
        page = await engine(ctx).list_events(
            ctx.owner, EventFilter(starts_from=span.start, starts_to=span.end), limit=100
        )
        data = {
            "domain": "event",
            "day": span.start.date().isoformat(),
            "events": [e.model_dump(mode="json") for e in page.items],
        }
        return await send_webhook(ctx, "daily.summary", data, f"the calendar of {span.label}")


EVENT_OPERATIONS = (
    create_event,
    get_event,
    list_events,
    update_event,
    delete_event,
    search_events,
    hybrid_search_events,
    announce_event,
    send_event_summary,
)
