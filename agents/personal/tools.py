"""The personal agents' tools: the personal operations bound for an agent, plus the two tools
only an agent has (remember a fact, transfer to another personal agent).

An operation is bound with :meth:`~tools.operations.Operation.as_tool` and one shared wrapper
(:func:`bind`): the tool answers with a `Command` that adds its `ToolMessage` (text for the
model, the structured result as the message's `artifact`) and updates the agent's
`domain_context` (the last list shown, the last item touched), so a later "mark the second one
done" knows what "the second one" is, with a model or without one. What the model reads is the
operation's result put in words by a render function per result type (an item, a list, nutrition
totals, a webhook sent); a refusal is an error `ToolMessage` in the refusal's own words.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command
from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_core import PydanticUndefined

from agents.personal.context import Domain, HandoffDecision, PersonalContext
from tools.operations import EngineNotOpen, Operation, OperationContext, OperationError
from tools.personal import memory
from tools.personal.format import describe, totals_text
from tools.personal.models import Event, Meal, Task
from tools.personal.operations import events, meals, tasks
from tools.personal.operations.common import Listing, Refusal, Sent
from tools.personal.operations.meals import Totals
from tools.personal.service import PersonalService
from tools.personal.webhooks import WebhookSender

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


@dataclass(frozen=True)
class TurnEngines:
    """The engines of one turn: those its `PersonalContext` carries."""

    ctx: PersonalContext

    def engine(self, kind: type[Any]) -> Any:
        found = {PersonalService: self.ctx.service, WebhookSender: self.ctx.webhooks}.get(kind)
        if found is None:
            raise EngineNotOpen(f"the {kind.__name__} is not open for this turn")
        return found


def operation_context(runtime: Runtime) -> OperationContext:
    """The operations' caller of a tool call: the turn's user, zone, clock and engines."""
    ctx = ctx_of(runtime)
    extra = {"now": ctx.now, "default_hour": ctx.default_hour}
    return OperationContext(
        owner=ctx.user_id, engines=TurnEngines(ctx), timezone=ctx.timezone, extra=extra
    )


@dataclass
class Reply:
    """What a tool answers: the model's text, the structured artifact, the context update."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] | None = None
    error: bool = False

    def command(self, runtime: Runtime) -> Command[Any]:
        message = ToolMessage(
            content=self.text,
            artifact=self.data,
            tool_call_id=runtime.tool_call_id or "",
            status="error" if self.error else "success",
        )
        update: dict[str, Any] = {"messages": [message]}
        if self.context:
            update["domain_context"] = self.context
        return Command(update=update)


Render = Callable[[Any, datetime], Reply]


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


def item(action: str, kind: str) -> Render:
    """The reply of a create / update / complete / delete."""

    def render(found: Task | Meal | Event, now: datetime) -> Reply:
        return Reply(
            f"{action.capitalize()} {kind} #{found.id}: {describe(found, now)}",
            data={"action": action, "kind": kind, "items": [found.model_dump(mode="json")]},
            context={"last_item": ref(found, now), "last_action": action},
        )

    return render


def listing(found: Listing[Any], now: datetime) -> Reply:
    """The reply of a list or search: numbered, remembered as the last list shown."""
    kind, label, items = found.kind, found.label, found.items
    if not items:
        return Reply(
            f"No {kind}s {label}.",
            data={"action": "list", "kind": kind, "items": [], "label": label, "total": 0},
            context={"last_list": [], "last_list_label": label},
        )
    lines = [f"{i}. [#{one.id}] {describe(one, now)}" for i, one in enumerate(items, 1)]
    shown = f"{len(items)} of {found.total}" if found.total > len(items) else ""
    head = f"{kind.capitalize()}s {label}" + (f" ({shown})" if shown else "") + ":"
    data: dict[str, Any] = {
        "action": "list",
        "kind": kind,
        "label": label,
        "total": found.total,
        "items": [one.model_dump(mode="json") for one in items],
    }
    if found.scores is not None:
        data["scores"] = found.scores
    return Reply(
        "\n".join([head, *lines]),
        data=data,
        context={"last_list": [ref(one, now) for one in items], "last_list_label": label},
    )


def totals(found: Totals, now: datetime) -> Reply:
    """The reply of nutrition totals."""
    return Reply(
        totals_text(found.totals, found.label),
        data={
            "action": "totals",
            "kind": "meal",
            "label": found.label,
            "totals": found.totals.model_dump(mode="json"),
        },
        context={"last_totals": {"label": found.label, "calories": found.totals.calories}},
    )


def sent(found: Sent, now: datetime) -> Reply:
    """The reply of a webhook: where it arrived (an error when nowhere)."""
    if not found.configured:
        return Reply(
            "No webhook URL is configured (PERSONAL_WEBHOOK_URLS), so nothing was sent.",
            data={"action": "webhook", "event": found.event, "deliveries": []},
            error=True,
        )
    deliveries = found.deliveries
    ok = sum(d.delivered for d in deliveries)
    text = f"Sent {found.what} to {ok} of {len(deliveries)} webhook(s)."
    failed = [d for d in deliveries if not d.delivered]
    if failed:
        text += " Failed: " + "; ".join(f"{d.url} ({d.error})" for d in failed)
    data = {
        "action": "webhook",
        "event": found.event,
        "event_id": found.event_id,
        "deliveries": [d.model_dump() for d in deliveries],
    }
    return Reply(text, data=data, error=ok == 0)


def refused(exc: OperationError | ValidationError) -> Reply:
    """A refusal as the model reads it."""
    if isinstance(exc, Refusal):
        return Reply(exc.reply, data=exc.artifact or {}, error=True)
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
        )
        return Reply(f"Invalid: {problems}", data={"error": "invalid"}, error=True)
    return Reply(f"Error: {exc}", error=True)


def _keep(value: Any) -> Any:
    return value


#: What an agent's list shows when its model (or interpreter) names nothing, where that differs
#: from the operation's defaults (REST's: every status, newest meals first): the to-do list is
#: the open tasks, and a food diary is read in the order it was eaten.
AGENT_DEFAULTS: dict[str, dict[str, tuple[Any, str]]] = {
    "list_tasks": {"status": (["open"], "Statuses to show (default: open).")},
    "list_meals": {"newest_first": (False, "The latest meals first (default: oldest first).")},
}


def with_defaults(
    op: Operation[Any, Any], defaults: dict[str, tuple[Any, str]]
) -> Operation[Any, Any]:
    """`op` with other defaults (and their descriptions) for some of its fields: the agent's view
    of it; its fields, bounds and refusal of unknown ones are the operation's."""
    if not defaults:
        return op
    fields: dict[str, Any] = {}
    for field_name, (value, description) in defaults.items():
        info = copy.copy(op.input_model.model_fields[field_name])
        info.default, info.default_factory = PydanticUndefined, (lambda v=value: copy.deepcopy(v))
        info.description = description
        fields[field_name] = (info.annotation, info)
    model = create_model(op.input_model.__name__, __base__=op.input_model, **fields)
    return replace(op, input_model=model)


def bind(op: Operation[Any, Any], render: Render, *, name: str | None = None) -> BaseTool:
    """`op` as an agent tool answering with a `Command` (the one wrapper every tool shares)."""
    op = with_defaults(op, AGENT_DEFAULTS.get(op.name, {}))
    if name is not None:
        op = replace(op, name=name)
    inner = op.as_tool(operation_context, render=_keep, on_error=_keep)
    run = inner.coroutine
    assert run is not None

    async def call(runtime: Runtime, **kwargs: Any) -> Command[Any]:
        out = await run(runtime, **kwargs)
        if isinstance(out, OperationError | ValidationError):
            return refused(out).command(runtime)
        return render(out, ctx_of(runtime).clock()).command(runtime)

    # the runtime is injected by its annotation: give LangChain the class itself
    call.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": Command}
    return StructuredTool.from_function(
        coroutine=call,
        name=op.name,
        description=inner.description,
        args_schema=op.tool_args_model(),  # the input model (unknown fields refused) + runtime
        infer_schema=False,
    )


#: Each agent's operations, in the order its tools are listed, with their replies.
BINDINGS: dict[Domain, tuple[tuple[Operation[Any, Any], Render, str | None], ...]] = {
    "task": (
        (tasks.create_task, item("created", "task"), None),
        (tasks.list_tasks, listing, None),
        (tasks.update_task, item("updated", "task"), None),
        (tasks.complete_task, item("completed", "task"), None),
        (tasks.delete_task, item("deleted", "task"), None),
        (tasks.search_tasks, listing, None),
        (tasks.hybrid_search_tasks, listing, None),
        (tasks.send_task_reminder, sent, None),
        (tasks.send_task_summary, sent, "send_daily_summary"),
    ),
    "food": (
        (meals.log_meal, item("logged", "meal"), None),
        (meals.list_meals, listing, None),
        (meals.update_meal, item("updated", "meal"), None),
        (meals.delete_meal, item("deleted", "meal"), None),
        (meals.nutrition_totals, totals, None),
        (meals.search_meals, listing, None),
        (meals.hybrid_search_meals, listing, None),
        (meals.send_food_summary, sent, "send_daily_summary"),
    ),
    "event": (
        (events.create_event, item("created", "event"), None),
        (events.list_events, listing, None),
        (events.update_event, item("updated", "event"), None),
        (events.delete_event, item("deleted", "event"), None),
        (events.search_events, listing, None),
        (events.hybrid_search_events, listing, None),
        (events.announce_event, sent, None),
        (events.send_event_summary, sent, "send_daily_summary"),
    ),
}

#: The agents each one can transfer to, in the order its transfer tools are listed.
PEERS: dict[Domain, tuple[Domain, Domain]] = {
    "task": ("event", "food"),
    "food": ("task", "event"),
    "event": ("task", "food"),
}


def agent_tools(name: Domain, *, transfers: bool = True) -> list[BaseTool]:
    """The tools of the personal agent `name` (each call makes new instances)."""
    found = [bind(op, render, name=alias) for op, render, alias in BINDINGS[name]]
    found.append(make_remember_tool())
    if transfers:
        found += [make_transfer_tool(name, target) for target in PEERS[name]]
    return found


# --- the tools only an agent has -------------------------------------------------------------


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
        ctx = ctx_of(runtime)
        store = ctx.memory or runtime.store
        if store is None:
            return Reply("Long-term memory is not configured.", error=True).command(runtime)
        try:
            await memory.remember(store, ctx.user_id, fact)
        except ValueError as exc:
            return Reply(
                f"Invalid: {str(exc).splitlines()[0]}", data={"error": "invalid"}, error=True
            ).command(runtime)
        data = {"action": "remember", "fact": fact.strip()}
        return Reply(f"Noted: {fact.strip()}.", data=data).command(runtime)

    return remember_fact


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
