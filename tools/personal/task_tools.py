"""The task agent's tools: create, list, update, complete, delete, semantic and hybrid search,
and the reminder / daily-summary webhooks. `task_tools()` makes the agent's list."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from langchain.tools import tool
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import BaseModel, Field

from tools.personal.context import Domain
from tools.personal.format import describe
from tools.personal.models import MAX_TAGS, Priority, TaskCreate, TaskFilter, TaskStatus, TaskUpdate
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

DOMAIN: Domain = "task"


def _open() -> list[TaskStatus]:
    return ["open"]


class CreateTaskArgs(BaseModel):
    title: str = Field(min_length=1, max_length=200, description="What to do.")
    due: str | None = Field(
        None, max_length=200, description="When it is due: ISO 8601 or words ('next Friday at 9')."
    )
    priority: Priority = "normal"
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    notes: str = Field("", max_length=4000)


@tool(args_schema=CreateTaskArgs)
async def create_task(
    title: str, due: str | None, priority: Priority, tags: list[str], notes: str, runtime: Runtime
) -> Command[Any]:
    """Create a task or reminder for the user."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        data = TaskCreate(
            title=title, due_at=moment(due, ctx), priority=priority, tags=tags, notes=notes
        )
        task = await ctx.service.create_task(ctx.user_id, data, tz=ctx.timezone)
        return item_reply(runtime, "created", "task", task, ctx.clock())

    return await guarded(runtime, work())


class ListTasksArgs(BaseModel):
    status: list[TaskStatus] | None = Field(
        default_factory=_open, description="Statuses to show (default: open)."
    )
    due: str | None = Field(
        None, max_length=100, description="Due within a period: 'today', 'this week', 'next month'."
    )
    overdue: bool = Field(False, description="Only tasks whose due time has passed.")
    min_priority: Priority | None = None
    tags: list[str] | None = Field(None, max_length=MAX_TAGS, description="Has all these tags.")
    completed: str | None = Field(
        None, max_length=100, description="Completed within a period ('yesterday', 'this week')."
    )
    text: str | None = Field(None, max_length=200, description="Title or notes contain this.")
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=100_000)


@tool(args_schema=ListTasksArgs)
async def list_tasks(
    status: list[TaskStatus] | None,
    due: str | None,
    overdue: bool,
    min_priority: Priority | None,
    tags: list[str] | None,
    completed: str | None,
    text: str | None,
    limit: int,
    offset: int,
    runtime: Runtime,
) -> Command[Any]:
    """List the user's tasks with structured filters (status, due period, priority, tags)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        now = ctx.clock()
        flt: dict[str, Any] = {
            "status": status or None,
            "min_priority": min_priority,
            "tags": tags or None,
            "text": text,
        }
        label_parts: list[str] = []
        if due_range := period(due, ctx):
            flt.update(due_from=due_range.start, due_to=due_range.end)
            label_parts.append(f"due {due_range.label}")
        if overdue:
            flt["due_to"] = min(flt.get("due_to") or now, now)
            label_parts.append("overdue")
        if done_range := period(completed, ctx, prefer="past"):
            flt.update(
                completed_from=done_range.start,
                completed_to=done_range.end,
                status=status if status and status != ["open"] else ["done"],
            )
            label_parts.append(f"completed {done_range.label}")
        if min_priority:
            label_parts.append(f"of priority {min_priority} or more")
        if tags:
            label_parts.append("tagged " + ", ".join(tags))
        if text:
            label_parts.append(f"matching '{text}'")
        statuses = flt.get("status")
        prefix = "/".join(statuses) if statuses else "all"
        page = await ctx.service.list_tasks(
            ctx.user_id, TaskFilter(**flt), limit=limit, offset=offset
        )
        label = prefix + (" " + ", ".join(label_parts) if label_parts else "")
        return list_reply(runtime, "task", page.items, now, label=label.strip(), total=page.total)

    return await guarded(runtime, work())


class UpdateTaskArgs(BaseModel):
    task_id: int | None = Field(None, ge=1, description="The task's id (#n in lists).")
    match: str | None = Field(
        None, max_length=200, description="Or words of its title (must match one open task)."
    )
    title: str | None = Field(None, min_length=1, max_length=200)
    due: str | None = Field(None, max_length=200, description="New due time (ISO or words).")
    priority: Priority | None = None
    status: TaskStatus | None = None
    tags: list[str] | None = Field(None, max_length=MAX_TAGS)
    notes: str | None = Field(None, max_length=4000)


@tool(args_schema=UpdateTaskArgs)
async def update_task(
    task_id: int | None,
    match: str | None,
    title: str | None,
    due: str | None,
    priority: Priority | None,
    status: TaskStatus | None,
    tags: list[str] | None,
    notes: str | None,
    runtime: Runtime,
) -> Command[Any]:
    """Change a task: title, due time, priority, status, tags or notes."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "title": title,
                "priority": priority,
                "status": status,
                "tags": tags,
                "notes": notes,
            }.items()
            if v is not None
        }
        if due is not None:
            changes["due_at"] = moment(due, ctx)
        if not changes:
            raise ValueError(
                "nothing to change: give a new title, due, priority, status, tags or notes"
            )
        target = await resolve_target(ctx, "task", task_id, match)
        task = await ctx.service.update_task(ctx.user_id, target, TaskUpdate(**changes))
        return item_reply(runtime, "updated", "task", task, ctx.clock())

    return await guarded(runtime, work())


class TaskIdArgs(BaseModel):
    task_id: int = Field(ge=1, description="The task's id (#n in lists).")


class TaskRefArgs(BaseModel):
    task_id: int | None = Field(None, ge=1, description="The task's id (#n in lists).")
    match: str | None = Field(
        None, max_length=200, description="Or words of its title (must match one open task)."
    )


@tool(args_schema=TaskRefArgs)
async def complete_task(
    task_id: int | None = None, match: str | None = None, *, runtime: Runtime
) -> Command[Any]:
    """Mark a task as done (by id, or by words of its title)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        target = await resolve_target(ctx, "task", task_id, match)
        task = await ctx.service.complete_task(ctx.user_id, target)
        return item_reply(runtime, "completed", "task", task, ctx.clock())

    return await guarded(runtime, work())


@tool(args_schema=TaskRefArgs)
async def delete_task(
    task_id: int | None = None, match: str | None = None, *, runtime: Runtime
) -> Command[Any]:
    """Delete a task for good (by id, or by words of its title)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        target = await resolve_target(ctx, "task", task_id, match)
        task = await ctx.service.delete_task(ctx.user_id, target)
        return item_reply(runtime, "deleted", "task", task, ctx.clock())

    return await guarded(runtime, work())


class SearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the tasks are about.")
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=SearchArgs)
async def search_tasks(query: str, limit: int, runtime: Runtime) -> Command[Any]:
    """Find the user's tasks by meaning ('tasks about the tax return'), any status."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        hits = await ctx.service.search(ctx.user_id, "task", query, limit=limit)
        return list_reply(
            runtime,
            "task",
            [h.item for h in hits],
            ctx.clock(),
            label=f"about '{query}'",
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


class HybridTaskArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the tasks are about.")
    status: list[TaskStatus] | None = Field(default_factory=_open)
    min_priority: Priority | None = None
    tags: list[str] | None = Field(None, max_length=MAX_TAGS)
    due: str | None = Field(None, max_length=100, description="Due within this period.")
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=HybridTaskArgs)
async def hybrid_search_tasks(
    query: str,
    status: list[TaskStatus] | None,
    min_priority: Priority | None,
    tags: list[str] | None,
    due: str | None,
    limit: int,
    runtime: Runtime,
) -> Command[Any]:
    """Filter tasks (status, priority, tags, due period), then rank them by meaning
    ('high-priority tasks about the move')."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        flt: dict[str, Any] = {
            "status": status or None,
            "min_priority": min_priority,
            "tags": tags or None,
        }
        if due_range := period(due, ctx):
            flt.update(due_from=due_range.start, due_to=due_range.end)
        hits = await ctx.service.hybrid_search(
            ctx.user_id, "task", query, TaskFilter(**flt), limit=limit
        )
        label = f"about '{query}'" + (
            f" of priority {min_priority} or more" if min_priority else ""
        )
        return list_reply(
            runtime,
            "task",
            [h.item for h in hits],
            ctx.clock(),
            label=label,
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


@tool(args_schema=TaskIdArgs)
async def send_task_reminder(task_id: int, runtime: Runtime) -> Command[Any]:
    """Send a 'reminder due' webhook for a task (e.g. to an n8n workflow)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        task = await ctx.service.get_task(ctx.user_id, task_id)
        data = {"task": task.model_dump(mode="json"), "text": describe(task, ctx.clock())}
        return await send_event(runtime, "reminder.due", data, f"a reminder for #{task.id}")

    return await guarded(runtime, work())


@tool("send_daily_summary", args_schema=SummaryArgs)
async def send_task_summary(day: str, runtime: Runtime) -> Command[Any]:
    """Send a 'daily summary' webhook: tasks due that day, overdue ones and those completed."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        span = period(day, ctx, prefer="past")
        assert span is not None
        service, user = ctx.service, ctx.user_id
        due = await service.list_tasks(
            user, TaskFilter(status=["open"], due_from=span.start, due_to=span.end), limit=100
        )
        overdue = await service.list_tasks(
            user, TaskFilter(status=["open"], due_to=span.start), limit=100
        )
        done = await service.list_tasks(
            user,
            TaskFilter(completed_from=span.start, completed_to=span.start + timedelta(days=1)),
            limit=100,
        )
        data = {
            "domain": "task",
            "day": span.start.date().isoformat(),
            "due": [t.model_dump(mode="json") for t in due.items],
            "overdue": [t.model_dump(mode="json") for t in overdue.items],
            "completed": [t.model_dump(mode="json") for t in done.items],
        }
        return await send_event(runtime, "daily.summary", data, f"the task summary of {span.label}")

    return await guarded(runtime, work())


def task_tools(*, transfers: bool = True) -> list[BaseTool]:
    """The task agent's tools (with transfer tools to the food and event agents)."""
    tools: list[BaseTool] = [
        create_task,
        list_tasks,
        update_task,
        complete_task,
        delete_task,
        search_tasks,
        hybrid_search_tasks,
        send_task_reminder,
        send_task_summary,
        make_remember_tool(),
    ]
    if transfers:
        tools += [make_transfer_tool(DOMAIN, "event"), make_transfer_tool(DOMAIN, "food")]
    return tools
