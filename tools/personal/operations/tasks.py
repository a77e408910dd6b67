"""The task operations: create, list, change, complete, delete, semantic and hybrid search, and
the reminder / daily-summary webhooks of the owner's to-do list."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import AliasChoices, AwareDatetime, Field

from tools.operations import Arguments, OperationContext
from tools.personal.format import describe
from tools.personal.models import (
    MAX_TAGS,
    Priority,
    Task,
    TaskCreate,
    TaskFilter,
    TaskStatus,
    TaskUpdate,
)
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


def _open() -> list[TaskStatus]:
    return ["open"]


class CreateTask(Arguments):
    title: str = Field(min_length=1, max_length=200, description="What to do.")
    due: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("due_at", "due"),  # POST /tasks's name first
        description="When it is due: ISO 8601 or words ('next Friday at 9').",
    )
    priority: Priority = "normal"
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    notes: str = Field("", max_length=4000)
    remind: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("remind_at", "remind"),
        description="When to remind the user: ISO 8601, words ('tomorrow at 8'), or a lead "
        "before the due time ('an hour before', '2 days before').",
    )
    tz: Zone = None


@personal()
async def create_task(ctx: OperationContext, args: CreateTask) -> Task:
    """Create a task or reminder for the user (`remind_at`: when the reminder fires)."""
    ctx = zoned(ctx, args.tz)
    with refusals():
        due = moment(args.due, ctx)
        data = TaskCreate(
            title=args.title,
            due_at=due,
            priority=args.priority,
            tags=args.tags,
            notes=args.notes,
            remind_at=reminder(args.remind, ctx, due),
        )
        return await engine(ctx).create_task(ctx.owner, data, tz=ctx.timezone)


class TaskId(Arguments):
    task_id: int = Field(ge=1, le=2**62, description="The task's id (#n in lists).")


get_task = get_operation("task", Task, TaskId)


class ListTasks(Arguments):
    """The filters of a task list; the defaults are GET /tasks's (every status, a page of
    PERSONAL_PAGE_SIZE): the route passes only what its caller gave."""

    status: list[TaskStatus] | None = Field(
        None, max_length=3, description="Statuses to show (default: every status)."
    )
    due: str | None = Field(
        None, max_length=100, description="Due within a period: 'today', 'this week', 'next month'."
    )
    overdue: bool = Field(False, description="Only tasks whose due time has passed.")
    min_priority: Priority | None = None
    tags: list[str] | None = Field(
        None,
        max_length=MAX_TAGS,
        validation_alias=AliasChoices("tags", "tag"),  # GET /tasks's ?tag= too
        description="Has all these tags.",
    )
    completed: str | None = Field(
        None, max_length=100, description="Completed within a period ('yesterday', 'this week')."
    )
    text: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("text", "q"),  # GET /tasks's ?q= too
        description="Title or notes contain this.",
    )
    due_from: AwareDatetime | None = Field(None, description="Due at or after (ISO 8601).")
    due_to: AwareDatetime | None = Field(None, description="Due before (ISO 8601).")
    limit: Limit = None
    offset: Offset = 0


@personal(read_only=True)
async def list_tasks(ctx: OperationContext, args: ListTasks) -> Listing[Task]:
    """List the user's tasks with structured filters (status, due period, priority, tags)."""
    with refusals():
        now = clock(ctx)
        flt: dict[str, Any] = {
            "status": args.status or None,
            "min_priority": args.min_priority,
            "tags": args.tags or None,
            "text": args.text,
            "due_from": args.due_from,
            "due_to": args.due_to,
        }
        parts: list[str] = []
        if due := period(args.due, ctx):
            flt.update(due_from=due.start, due_to=due.end)
            parts.append(f"due {due.label}")
        if args.overdue:
            flt["due_to"] = min(flt.get("due_to") or now, now)
            parts.append("overdue")
        if done := period(args.completed, ctx, prefer="past"):
            status = args.status
            flt.update(
                completed_from=done.start,
                completed_to=done.end,
                status=status if status and status != ["open"] else ["done"],
            )
            parts.append(f"completed {done.label}")
        if args.min_priority:
            parts.append(f"of priority {args.min_priority} or more")
        if args.tags:
            parts.append("tagged " + ", ".join(args.tags))
        if args.text:
            parts.append(f"matching '{args.text}'")
        statuses = flt.get("status")
        prefix = "/".join(statuses) if statuses else "all"
        page = await engine(ctx).list_tasks(
            ctx.owner, TaskFilter(**flt), limit=args.limit, offset=args.offset
        )
        label = prefix + (" " + ", ".join(parts) if parts else "")
        return Listing[Task].of_page("task", label.strip(), page)


class TaskRef(ItemRef):
    task_id: int | None = Field(None, ge=1, le=2**62, description="The task's id (#n in lists).")


class UpdateTask(TaskRef):
    """The fields given are changed (an empty ``due`` clears the due time)."""

    title: str | None = Field(None, min_length=1, max_length=200)
    due: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("due_at", "due"),  # PATCH /tasks/{id}'s name first
        description="New due time (ISO or words).",
    )
    priority: Priority | None = None
    status: TaskStatus | None = None
    tags: list[str] | None = Field(None, max_length=MAX_TAGS)
    notes: str | None = Field(None, max_length=4000)
    remind: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("remind_at", "remind"),
        description="New reminder time: ISO 8601, words ('tomorrow at 8'), or a lead "
        "before the due time ('an hour before', '2 days before').",
    )
    clear: list[
        Literal[
            "due", "due_at", "title", "priority", "status", "tags", "notes", "remind", "remind_at"
        ]
    ] = Field(
        default_factory=list, max_length=8, description="Fields to empty, e.g. ['remind_at']."
    )


@personal()
async def update_task(ctx: OperationContext, args: UpdateTask) -> Task:
    """Change a task: title, due time, priority, status, tags or notes."""
    with refusals():
        found = changes(args, ctx, keys={"task_id", "match", "remind"}, dates={"due": "due_at"})
        if "remind" in found:  # clear=["remind"]
            found["remind_at"] = found.pop("remind")
        if not found and args.remind is None:
            raise ValueError(
                "nothing to change: give a new title, due, priority, status, tags, notes or "
                "remind_at"
            )
        target = await resolve_target(ctx, "task", args.task_id, args.match)
        if args.remind is not None:
            anchor = found.get("due_at") or (await engine(ctx).get_task(ctx.owner, target)).due_at
            found["remind_at"] = reminder(args.remind, ctx, anchor)
        return await engine(ctx).update_task(ctx.owner, target, TaskUpdate(**found))


@personal()
async def complete_task(ctx: OperationContext, args: TaskRef) -> Task:
    """Mark a task as done (by id, or by words of its title)."""
    with refusals():
        target = await resolve_target(ctx, "task", args.task_id, args.match)
        return await engine(ctx).complete_task(ctx.owner, target)


@personal()
async def delete_task(ctx: OperationContext, args: TaskRef) -> Task:
    """Delete a task for good (by id, or by words of its title)."""
    with refusals():
        target = await resolve_target(ctx, "task", args.task_id, args.match)
        return await engine(ctx).delete_task(ctx.owner, target)


search_tasks = search_operation(
    "task",
    Task,
    description="Find the user's tasks by meaning ('tasks about the tax return'), any status.",
    query_help="What the tasks are about.",
    label="about",
)


class HybridSearchTasks(Arguments):
    query: str = Field(min_length=1, max_length=500, description="What the tasks are about.")
    status: list[TaskStatus] | None = Field(default_factory=_open)
    min_priority: Priority | None = None
    tags: list[str] | None = Field(None, max_length=MAX_TAGS)
    due: str | None = Field(None, max_length=100, description="Due within this period.")
    limit: int = Field(10, ge=1, le=100)


@personal(read_only=True)
async def hybrid_search_tasks(ctx: OperationContext, args: HybridSearchTasks) -> Listing[Task]:
    """Filter tasks (status, priority, tags, due period), then rank them by meaning
    ('high-priority tasks about the move')."""
    with refusals():
        flt: dict[str, Any] = {
            "status": args.status or None,
            "min_priority": args.min_priority,
            "tags": args.tags or None,
        }
        if due := period(args.due, ctx):
            flt.update(due_from=due.start, due_to=due.end)
        hits = await engine(ctx).hybrid_search(
            ctx.owner, "task", args.query, TaskFilter(**flt), limit=args.limit
        )
        label = f"about '{args.query}'" + (
            f" of priority {args.min_priority} or more" if args.min_priority else ""
        )
        return Listing[Task].of_hits("task", label, hits)


@personal()
async def send_task_reminder(ctx: OperationContext, args: TaskId) -> Sent:
    """Send a 'reminder due' webhook for a task (e.g. to an n8n workflow)."""
    with refusals():
        task = await engine(ctx).get_task(ctx.owner, args.task_id)
        data = {"task": task.model_dump(mode="json"), "text": describe(task, clock(ctx))}
        return await send_webhook(ctx, "reminder.due", data, f"a reminder for #{task.id}")


@personal()
async def send_task_summary(ctx: OperationContext, args: DayArgs) -> Sent:
    """Send a 'daily summary' webhook: tasks due that day, overdue ones and those completed."""
    with refusals():
        span = period(args.day, ctx, prefer="past")
        assert span is not None
        service, user = engine(ctx), ctx.owner
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
        return await send_webhook(ctx, "daily.summary", data, f"the task summary of {span.label}")


TASK_OPERATIONS = (
    create_task,
    get_task,
    list_tasks,
    update_task,
    complete_task,
    delete_task,
    search_tasks,
    hybrid_search_tasks,
    send_task_reminder,
    send_task_summary,
)
