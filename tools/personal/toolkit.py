"""What every personal tool shares: the context, replies as `Command`s, dates, error handling,
and the tools each agent has its own copy of (memory, daily summary, transfer).

A tool answers with a `Command` that adds its `ToolMessage` (text for the model, the structured
result as the message's `artifact`) and updates the agent's `domain_context` (the last list
shown, the last item touched), so a later "mark the second one done" knows what "the second
one" is, with a model or without one.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import Any

import psycopg
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import BaseModel, Field, ValidationError

from tools.personal import memory
from tools.personal.context import Domain, HandoffDecision, PersonalContext
from tools.personal.dates import DateRange, Prefer, find_range, parse_datetime
from tools.personal.format import describe, when
from tools.personal.models import Event, EventFilter, Meal, MealFilter, Task, TaskFilter
from tools.personal.service import InvalidItem, NotFound
from tools.personal.webhooks import WebhookEvent

Runtime = ToolRuntime[PersonalContext, Any]


def ctx_of(runtime: Runtime) -> PersonalContext:
    """The turn's `PersonalContext` (a clear error when the caller forgot to pass it)."""
    ctx = runtime.context
    if not isinstance(ctx, PersonalContext):
        raise RuntimeError(
            "personal tools need a PersonalContext as the run's context: invoke the agent with "
            "context=PersonalContext(user_id=..., service=...)"
        )
    return ctx


def reply(
    runtime: Runtime,
    text: str,
    *,
    data: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    error: bool = False,
) -> Command[Any]:
    """The tool's answer: a ToolMessage (+ structured artifact) and a domain-context update."""
    message = ToolMessage(
        content=text,
        artifact=data or {},
        tool_call_id=runtime.tool_call_id or "",
        status="error" if error else "success",
    )
    update: dict[str, Any] = {"messages": [message]}
    if context:
        update["domain_context"] = context
    return Command(update=update)


async def guarded(runtime: Runtime, work: Awaitable[Command[Any]]) -> Command[Any]:
    """Await a tool's work; a domain error becomes an error ToolMessage the model can read."""
    try:
        return await work
    except NotFound as exc:
        return reply(runtime, f"Not found: {exc}.", data={"error": "not_found"}, error=True)
    except (InvalidItem, ValidationError, ValueError) as exc:
        text = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else _short(exc)
        return reply(runtime, f"Invalid: {text}", data={"error": "invalid"}, error=True)
    except psycopg.errors.DataError as exc:
        return reply(runtime, f"Invalid: {exc.diag.message_primary}", error=True)


def _short(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()
    )


def moment(value: str | None, ctx: PersonalContext, prefer: Prefer = "future") -> datetime | None:
    """A tool's date argument (ISO 8601 or words) as an aware datetime, or None."""
    if value is None or not value.strip():
        return None
    return parse_datetime(
        value, tz=ctx.timezone, now=ctx.clock(), prefer=prefer, default_hour=ctx.default_hour
    )


def period(value: str | None, ctx: PersonalContext, prefer: Prefer = "future") -> DateRange | None:
    """A tool's period argument ("this week", "yesterday", "2025-03-14") as `[start, end)`."""
    if value is None or not value.strip():
        return None
    found = find_range(value, tz=ctx.timezone, now=ctx.clock(), prefer=prefer)
    if found is None:
        raise ValueError(
            f"could not read {value!r} as a period: try 'today', 'yesterday', 'this week', "
            "'next month', 'the next 3 days' or a date"
        )
    return found


async def resolve_target(
    ctx: PersonalContext, kind: str, item_id: int | None, match: str | None
) -> int:
    """The id a tool acts on: `item_id`, or the one open item whose title contains `match`."""
    if item_id is not None:
        return item_id
    if not match or not match.strip():
        raise ValueError(f"name the {kind}: give its id (#n in lists) or words of its title")
    service, user = ctx.service, ctx.user_id
    page: Any
    if kind == "task":
        page = await service.list_tasks(user, TaskFilter(status=["open"], text=match), limit=5)
    elif kind == "event":
        page = await service.list_events(
            user, EventFilter(text=match, starts_from=ctx.clock() - timedelta(days=1)), limit=5
        )
    else:
        page = await service.list_meals(user, MealFilter(text=match), limit=5, newest_first=True)
    if page.total == 1:
        return int(page.items[0].id)
    if page.total == 0:
        raise ValueError(f"no {kind} matches '{match}'")
    options = "; ".join(f"#{i.id} {describe(i, ctx.clock())}" for i in page.items)
    raise ValueError(f"'{match}' matches {page.total} {kind}s ({options}): say which one by id")


def ref(item: Task | Meal | Event, now: datetime | None = None) -> dict[str, Any]:
    """How the domain context remembers an item."""
    moment_ = getattr(item, "due_at", None) or getattr(item, "starts_at", None)
    moment_ = moment_ or getattr(item, "eaten_at", None)
    return {
        "id": item.id,
        "label": describe(item, now),
        "title": getattr(item, "title", None) or getattr(item, "description", ""),
        "when": moment_.isoformat() if moment_ else None,
    }


def item_reply(
    runtime: Runtime, action: str, kind: str, item: Task | Meal | Event, now: datetime
) -> Command[Any]:
    """The answer of a create / update / complete / delete."""
    text = f"{action.capitalize()} {kind} #{item.id}: {describe(item, now)}"
    return reply(
        runtime,
        text,
        data={"action": action, "kind": kind, "items": [item.model_dump(mode="json")]},
        context={"last_item": ref(item, now), "last_action": action},
    )


def list_reply(
    runtime: Runtime,
    kind: str,
    items: list[Any],
    now: datetime,
    *,
    label: str,
    total: int | None = None,
    scores: list[float] | None = None,
) -> Command[Any]:
    """The answer of a list or search: numbered, remembered as the last list shown."""
    if not items:
        return reply(
            runtime,
            f"No {kind}s {label}.",
            data={"action": "list", "kind": kind, "items": [], "label": label, "total": 0},
            context={"last_list": [], "last_list_label": label},
        )
    lines = [f"{i}. [#{item.id}] {describe(item, now)}" for i, item in enumerate(items, 1)]
    shown = f"{len(items)} of {total}" if total is not None and total > len(items) else ""
    head = f"{kind.capitalize()}s {label}" + (f" ({shown})" if shown else "") + ":"
    data: dict[str, Any] = {
        "action": "list",
        "kind": kind,
        "label": label,
        "total": total if total is not None else len(items),
        "items": [item.model_dump(mode="json") for item in items],
    }
    if scores is not None:
        data["scores"] = scores
    return reply(
        runtime,
        "\n".join([head, *lines]),
        data=data,
        context={"last_list": [ref(item, now) for item in items], "last_list_label": label},
    )


# --- tools every personal agent has (each agent gets its own instances) ----------------------


class RememberArgs(BaseModel):
    """Arguments of `remember_fact`."""

    fact: str = Field(
        min_length=1,
        max_length=memory.MAX_FACT_CHARS,
        description="A lasting fact about the user, e.g. 'is vegetarian', 'works 9-5 in Berlin'.",
    )


def make_remember_tool() -> BaseTool:
    """`remember_fact`: keep a long-term fact about the user (shared across sessions)."""

    @tool(args_schema=RememberArgs)
    async def remember_fact(fact: str, runtime: Runtime) -> Command[Any]:
        """Remember a lasting fact or preference about the user for future conversations."""

        async def work() -> Command[Any]:
            ctx = ctx_of(runtime)
            store = ctx.memory or runtime.store
            if store is None:
                return reply(runtime, "Long-term memory is not configured.", error=True)
            await memory.remember(store, ctx.user_id, fact)
            return reply(
                runtime,
                f"Noted: {fact.strip()}.",
                data={"action": "remember", "fact": fact.strip()},
            )

        return await guarded(runtime, work())

    return remember_fact


class SummaryArgs(BaseModel):
    """Arguments of `send_daily_summary`."""

    day: str = Field("today", max_length=100, description="The day: 'today', 'yesterday', a date.")


async def send_event(
    runtime: Runtime, event_type: str, data: dict[str, Any], what: str
) -> Command[Any]:
    """POST a webhook event and report the deliveries."""
    ctx = ctx_of(runtime)
    if ctx.webhooks is None or not ctx.webhooks.enabled:
        return reply(
            runtime,
            "No webhook URL is configured (PERSONAL_WEBHOOK_URLS), so nothing was sent.",
            data={"action": "webhook", "event": event_type, "deliveries": []},
            error=True,
        )
    event = WebhookEvent(type=event_type, user_id=ctx.user_id, data=data)
    deliveries = await ctx.webhooks.send(event)
    ok = sum(d.delivered for d in deliveries)
    text = f"Sent {what} to {ok} of {len(deliveries)} webhook(s)."
    failed = [d for d in deliveries if not d.delivered]
    if failed:
        text += " Failed: " + "; ".join(f"{d.url} ({d.error})" for d in failed)
    return reply(
        runtime,
        text,
        data={
            "action": "webhook",
            "event": event_type,
            "event_id": event.id,
            "deliveries": [d.model_dump() for d in deliveries],
        },
        error=ok == 0,
    )


class TransferArgs(BaseModel):
    """Arguments of a transfer tool."""

    reason: str = Field("", max_length=300, description="Why the other agent should take over.")
    request: str = Field(
        "", max_length=1000, description="What the other agent should do, in the user's words."
    )


_TRANSFER_HELP: dict[Domain, str] = {
    "task": "to-dos, reminders, deadlines and their status",
    "food": "meals eaten, calories and nutrition",
    "event": "the calendar: appointments, meetings and events",
}


def make_transfer_tool(source: Domain, target: Domain) -> BaseTool:
    """`transfer_to_<target>`: hand the turn to another personal agent (ends this agent's turn;
    the root graph routes the recorded `HandoffDecision`)."""

    @tool(f"transfer_to_{target}", args_schema=TransferArgs, return_direct=True)
    async def transfer(reason: str, request: str, runtime: Runtime) -> Command[Any]:
        """Hand the request over to another agent."""
        ctx = runtime.state.get("domain_context", {}) if isinstance(runtime.state, dict) else {}
        decision = HandoffDecision(
            should_handoff=True,
            target_agent=target,
            reason=reason or f"the {target} agent handles {_TRANSFER_HELP[target]}",
            context={"from": source, "request": request, **handoff_subject(ctx)},
        )
        message = ToolMessage(
            content=f"Handing over to the {target} agent.",
            tool_call_id=runtime.tool_call_id or "",
            artifact={"action": "handoff", "handoff": decision.model_dump()},
        )
        return Command(update={"messages": [message], "handoff": decision.model_dump()})

    transfer.description = (
        f"Hand the request to the {target} agent, which handles {_TRANSFER_HELP[target]}. Use it "
        f"when the user asks for something outside the {source} agent's domain."
    )
    return transfer


def handoff_subject(domain_context: dict[str, Any]) -> dict[str, Any]:
    """What a receiving agent needs about "it": the last item's title and time, if any."""
    last = domain_context.get("last_item") or {}
    out: dict[str, Any] = {}
    if last.get("title"):
        out["subject"] = last["title"]
    if last.get("when"):
        out["when"] = last["when"]
    return out


def when_text(value: datetime | None, now: datetime) -> str:
    """Re-export of the display format for tool modules."""
    return when(value, now)
