"""Request and response bodies of the Agent Server API's crons (``/runs/crons``).

Field names follow langgraph-api's OpenAPI (``CronCreate``, ``ThreadCronCreate``, ``CronPatch``,
``CronSearch``, ``CronCountRequest``, ``Cron``) and what langgraph-sdk's ``client.crons`` sends.
The run fields of a cron (``input`` ... ``durability``) are what each firing's run is created
with (:class:`app.agent_server.models.RunCreate`), so they are validated alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from app.agent_server.models import (
    Config,
    Metadata,
    MultitaskStrategy,
    Name,
    Nodes,
    SortOrder,
    StreamMode,
    Strict,
    ThreadId,
)

Schedule = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        description="A cron expression (5 fields, e.g. '*/5 * * * *'), read in `timezone`.",
    ),
]
TimeZone = Annotated[
    str, Field(min_length=1, max_length=64, description="IANA time zone (default UTC).")
]
CronSortBy = Literal[
    "cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"
]
CronField = Literal[
    "cron_id", "assistant_id", "thread_id", "on_run_completed", "end_time", "schedule",
    "timezone", "created_at", "updated_at", "user_id", "payload", "next_run_date", "metadata",
    "enabled",
]  # fmt: skip
#: The run fields of a cron: stored as its payload, sent with each firing's run.
RUN_FIELDS = (
    "assistant_id", "input", "metadata", "config", "context", "webhook", "interrupt_before",
    "interrupt_after", "multitask_strategy", "stream_mode", "stream_subgraphs",
    "stream_resumable", "durability", "checkpoint_during",
)  # fmt: skip


class CronRun(Strict):
    """What each firing runs (shared by create and patch)."""

    input: Any = Field(None, description="The graph input of each run.")
    metadata: Metadata | None = Field(None, description="Metadata of the cron and its runs.")
    config: Config | None = None
    context: Metadata | None = Field(None, description="Per-run options of the agents.")
    webhook: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    interrupt_before: Nodes | None = None
    interrupt_after: Nodes | None = None
    stream_mode: StreamMode | Annotated[list[StreamMode], Field(max_length=9)] | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    checkpoint_during: bool | None = None
    end_time: datetime | None = Field(None, description="No firing after this time.")
    timezone: TimeZone | None = None
    enabled: bool | None = Field(None, description="Disabled crons do not fire (default true).")


class CronCreate(CronRun):
    """``POST /runs/crons``: each firing is a stateless run (a new thread)."""

    assistant_id: Name = Field(description="The assistant id, or the graph / agent name.")
    schedule: Schedule
    on_run_completed: Literal["delete", "keep"] = Field(
        "delete", description="The run's thread afterwards: deleted, or kept (yours to delete)."
    )
    multitask_strategy: MultitaskStrategy | None = None


class ThreadCronCreate(CronRun):
    """``POST /threads/{thread_id}/runs/crons``: each firing is a run on that thread."""

    assistant_id: Name = Field(description="The assistant id, or the graph / agent name.")
    schedule: Schedule
    multitask_strategy: MultitaskStrategy = "enqueue"


class CronPatch(CronRun):
    """``PATCH /runs/crons/{cron_id}``: the fields given change; ``metadata`` is merged;
    ``end_time: null`` clears the end time (an absent field changes nothing)."""

    schedule: Schedule | None = None
    on_run_completed: Literal["delete", "keep"] | None = None


class CronSearch(Strict):
    assistant_id: Name | None = None
    thread_id: ThreadId | None = None
    enabled: bool | None = None
    metadata: Metadata | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    sort_by: CronSortBy = "created_at"
    sort_order: SortOrder = "desc"
    select: Annotated[list[CronField], Field(max_length=16)] | None = None


class CronCount(Strict):
    assistant_id: Name | None = None
    thread_id: ThreadId | None = None
    metadata: Metadata | None = None


class Cron(BaseModel):
    """A cron as the Agent Server API shows it."""

    cron_id: str
    assistant_id: str | None = None
    thread_id: str | None = None
    on_run_completed: Literal["delete", "keep"] | None = None
    end_time: str | None = None
    schedule: str
    timezone: str | None = None
    created_at: str
    updated_at: str
    user_id: str | None = None
    payload: dict[str, Any]
    next_run_date: str | None = None
    metadata: dict[str, Any]
    enabled: bool
