"""The event agent's tools: create, list, update and delete calendar events, semantic and hybrid
search, and the event-created / daily-summary webhooks. `event_tools()` makes the agent's list."""

from __future__ import annotations

from typing import Any

from langchain.tools import tool
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import BaseModel, Field

from tools.personal.context import Domain
from tools.personal.format import describe
from tools.personal.models import MAX_LIST_ITEMS, EventCreate, EventFilter, EventUpdate
from tools.personal.toolkit import (
    Runtime,
    SummaryArgs,
    ctx_of,
    guarded,
    item_reply,
    list_reply,
    make_remember_tool,
    make_transfer_tool,
    moment,
    period,
    resolve_target,
    send_event,
)

DOMAIN: Domain = "event"


class CreateEventArgs(BaseModel):
    title: str = Field(min_length=1, max_length=200, description="e.g. 'Lunch with Sam'.")
    starts: str = Field(
        min_length=1, max_length=200, description="Start: ISO 8601 or words ('Thursday 12:30')."
    )
    ends: str | None = Field(None, max_length=200, description="End; default: one hour later.")
    location: str = Field("", max_length=200)
    attendees: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    notes: str = Field("", max_length=4000)


@tool(args_schema=CreateEventArgs)
async def create_event(
    title: str,
    starts: str,
    ends: str | None = None,
    location: str = "",
    attendees: list[str] | None = None,
    notes: str = "",
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Put an event on the user's calendar."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        start = moment(starts, ctx)
        assert start is not None
        event = await ctx.service.create_event(
            ctx.user_id,
            EventCreate(
                title=title,
                starts_at=start,
                ends_at=moment(ends, ctx),
                location=location,
                attendees=attendees or [],
                notes=notes,
            ),
            tz=ctx.timezone,
        )
        return item_reply(runtime, "created", "event", event, ctx.clock())

    return await guarded(runtime, work())


class ListEventsArgs(BaseModel):
    starts: str | None = Field(
        None, max_length=100, description="Period: 'today', 'tomorrow', 'next week', a date."
    )
    attendee: str | None = Field(None, max_length=120)
    location: str | None = Field(None, max_length=120)
    text: str | None = Field(None, max_length=200)
    upcoming: bool = Field(False, description="Only events that have not started yet.")
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=100_000)


@tool(args_schema=ListEventsArgs)
async def list_events(
    starts: str | None = None,
    attendee: str | None = None,
    location: str | None = None,
    text: str | None = None,
    upcoming: bool = False,
    limit: int = 20,
    offset: int = 0,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """List the user's calendar events with structured filters (period, attendee, place)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        now = ctx.clock()
        flt: dict[str, Any] = {"attendee": attendee, "location": location, "text": text}
        parts: list[str] = []
        if span := period(starts, ctx):
            flt.update(starts_from=span.start, starts_to=span.end)
            parts.append(span.label)
        if upcoming:
            flt["starts_from"] = max(flt.get("starts_from") or now, now)
            parts.append("upcoming")
        if attendee:
            parts.append(f"with {attendee}")
        if location:
            parts.append(f"at {location}")
        page = await ctx.service.list_events(
            ctx.user_id, EventFilter(**flt), limit=limit, offset=offset
        )
        return list_reply(
            runtime,
            "event",
            page.items,
            now,
            label=" ".join(parts) or "on the calendar",
            total=page.total,
        )

    return await guarded(runtime, work())


class UpdateEventArgs(BaseModel):
    event_id: int | None = Field(None, ge=1, description="The event's id (#n in lists).")
    match: str | None = Field(
        None, max_length=200, description="Or words of its title (one upcoming event)."
    )
    title: str | None = Field(None, min_length=1, max_length=200)
    starts: str | None = Field(None, max_length=200, description="New start; keeps the length.")
    ends: str | None = Field(None, max_length=200)
    location: str | None = Field(None, max_length=200)
    attendees: list[str] | None = Field(None, max_length=MAX_LIST_ITEMS)
    notes: str | None = Field(None, max_length=4000)


@tool(args_schema=UpdateEventArgs)
async def update_event(
    event_id: int | None = None,
    match: str | None = None,
    title: str | None = None,
    starts: str | None = None,
    ends: str | None = None,
    location: str | None = None,
    attendees: list[str] | None = None,
    notes: str | None = None,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Change or move an event (a new start keeps its length unless a new end is given)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "title": title,
                "location": location,
                "attendees": attendees,
                "notes": notes,
            }.items()
            if v is not None
        }
        if starts is not None:
            changes["starts_at"] = moment(starts, ctx)
        if ends is not None:
            changes["ends_at"] = moment(ends, ctx)
        if not changes:
            raise ValueError("nothing to change")
        target = await resolve_target(ctx, "event", event_id, match)
        event = await ctx.service.update_event(ctx.user_id, target, EventUpdate(**changes))
        return item_reply(runtime, "updated", "event", event, ctx.clock())

    return await guarded(runtime, work())


class EventIdArgs(BaseModel):
    event_id: int = Field(ge=1, description="The event's id (#n in lists).")


class EventRefArgs(BaseModel):
    event_id: int | None = Field(None, ge=1, description="The event's id (#n in lists).")
    match: str | None = Field(
        None, max_length=200, description="Or words of its title (one upcoming event)."
    )


@tool(args_schema=EventRefArgs)
async def delete_event(
    event_id: int | None = None, match: str | None = None, *, runtime: Runtime
) -> Command[Any]:
    """Remove an event from the calendar (by id, or by words of its title)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        target = await resolve_target(ctx, "event", event_id, match)
        event = await ctx.service.delete_event(ctx.user_id, target)
        return item_reply(runtime, "deleted", "event", event, ctx.clock())

    return await guarded(runtime, work())


class SearchEventsArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the events are about.")
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=SearchEventsArgs)
async def search_events(query: str, limit: int = 10, *, runtime: Runtime) -> Command[Any]:
    """Find the user's events by meaning ('events about the conference')."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        hits = await ctx.service.search(ctx.user_id, "event", query, limit=limit)
        return list_reply(
            runtime,
            "event",
            [h.item for h in hits],
            ctx.clock(),
            label=f"about '{query}'",
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


class HybridEventsArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the events are about.")
    starts: str | None = Field(None, max_length=100, description="Within this period.")
    attendee: str | None = Field(None, max_length=120)
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=HybridEventsArgs)
async def hybrid_search_events(
    query: str,
    starts: str | None = None,
    attendee: str | None = None,
    limit: int = 10,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Filter events (period, attendee), then rank them by meaning
    ('meetings with Anna next week about the budget')."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        flt: dict[str, Any] = {"attendee": attendee}
        if span := period(starts, ctx):
            flt.update(starts_from=span.start, starts_to=span.end)
        hits = await ctx.service.hybrid_search(
            ctx.user_id, "event", query, EventFilter(**flt), limit=limit
        )
        return list_reply(
            runtime,
            "event",
            [h.item for h in hits],
            ctx.clock(),
            label=f"about '{query}'",
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


@tool(args_schema=EventIdArgs)
async def announce_event(event_id: int, *, runtime: Runtime) -> Command[Any]:
    """Send an 'event created' webhook for an event (e.g. to an n8n workflow)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        event = await ctx.service.get_event(ctx.user_id, event_id)
        data = {"event": event.model_dump(mode="json"), "text": describe(event, ctx.clock())}
        return await send_event(runtime, "event.created", data, f"event #{event.id}")

    return await guarded(runtime, work())


@tool("send_daily_summary", args_schema=SummaryArgs)
async def send_event_summary(day: str = "today", *, runtime: Runtime) -> Command[Any]:
    """Send a 'daily summary' webhook with the day's events."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        span = period(day, ctx)
        assert span is not None
        page = await ctx.service.list_events(
            ctx.user_id, EventFilter(starts_from=span.start, starts_to=span.end), limit=100
        )
        data = {
            "domain": "event",
            "day": span.start.date().isoformat(),
            "events": [e.model_dump(mode="json") for e in page.items],
        }
        return await send_event(runtime, "daily.summary", data, f"the calendar of {span.label}")

    return await guarded(runtime, work())


def event_tools(*, transfers: bool = True) -> list[BaseTool]:
    """The event agent's tools (with transfer tools to the task and food agents)."""
    tools: list[BaseTool] = [
        create_event,
        list_events,
        update_event,
        delete_event,
        search_events,
        hybrid_search_events,
        announce_event,
        send_event_summary,
        make_remember_tool(),
    ]
    if transfers:
        tools += [make_transfer_tool(DOMAIN, "task"), make_transfer_tool(DOMAIN, "food")]
    return tools
