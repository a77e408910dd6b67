"""Request and response bodies of the Agent Server API (the subset Switchyard speaks).

Field names and meanings follow langgraph-api's OpenAPI (``openapi.json`` in the langgraph-api
wheel) and what ``langgraph-sdk`` (Python and JS) sends; every field is bounded. Request models
forbid unknown fields, so a typo is a 422 naming the field instead of a silently ignored option.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.sessions import SESSION_ID_PATTERN

ThreadId = Annotated[
    str,
    Field(
        pattern=SESSION_ID_PATTERN,
        description="A thread id: 8-64 letters, digits, '_' or '-' (UUIDs fit).",
    ),
]
Name = Annotated[str, Field(min_length=1, max_length=128)]
#: Free-form metadata: at most 64 keys (the body's size bounds the rest).
Metadata = Annotated[dict[str, Any], Field(max_length=64)]
CheckpointId = Annotated[str, Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")]
StreamMode = Literal[
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "debug",
    "tasks",
    "checkpoints",
    "events",
]
Nodes = Literal["*"] | Annotated[list[Name], Field(max_length=64)]
ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
RunStatus = Literal["pending", "running", "error", "success", "timeout", "interrupted"]
MultitaskStrategy = Literal["reject", "interrupt", "rollback", "enqueue"]
SortOrder = Literal["asc", "desc"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- shared ---------------------------------------------------------------------------------
class Checkpoint(Strict):
    """A checkpoint of a thread (its namespace: '' for the root graph)."""

    thread_id: ThreadId | None = None
    checkpoint_ns: Annotated[str, Field(max_length=1024)] = ""
    checkpoint_id: CheckpointId | None = None
    checkpoint_map: Metadata | None = None


class Config(BaseModel):
    """Run config: tags, recursion limit, configurable (option names in it become context)."""

    model_config = ConfigDict(extra="ignore")

    tags: Annotated[list[Name], Field(max_length=32)] | None = None
    recursion_limit: Annotated[int, Field(ge=1, le=10_000)] | None = None
    configurable: Metadata | None = None


class Send(Strict):
    """Run ``node`` with ``input``."""

    node: Name
    input: Any = None


class Command(Strict):
    """Resume an interrupt, update the state and/or go to nodes."""

    update: (
        Metadata
        | Annotated[
            list[Annotated[list[Any], Field(min_length=2, max_length=2)]], Field(max_length=64)
        ]
        | None
    ) = None  # noqa: E501
    resume: Any = None
    goto: (
        Send
        | Annotated[list[Send], Field(max_length=64)]
        | Name
        | Annotated[list[Name], Field(max_length=64)]
        | None
    ) = None  # noqa: E501


# --- runs -----------------------------------------------------------------------------------
class RunCreate(Strict):
    """Payload for creating a run (background, streaming or waiting; on a thread or not)."""

    assistant_id: Name = Field(description="The assistant id, or the graph / agent name.")
    input: Any = Field(None, description="The graph input: {'messages': [...], ...}.")
    command: Command | None = None
    metadata: Metadata | None = None
    config: Config | None = None
    context: Metadata | None = Field(None, description="Per-run options of the agents.")
    webhook: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    interrupt_before: Nodes | None = None
    interrupt_after: Nodes | None = None
    stream_mode: StreamMode | Annotated[list[StreamMode], Field(max_length=9)] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    feedback_keys: Annotated[list[Name], Field(max_length=16)] | None = None
    multitask_strategy: MultitaskStrategy = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    after_seconds: Annotated[float, Field(ge=0, le=86_400)] | None = None
    checkpoint_during: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    checkpoint: Checkpoint | None = None
    checkpoint_id: CheckpointId | None = None
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] | None = None
    strict_resume: bool | None = None
    langsmith_tracer: Metadata | None = None


class RunsCancel(Strict):
    """Cancel runs by thread and ids, or every run of the caller with a status."""

    thread_id: ThreadId | None = None
    run_ids: Annotated[list[ThreadId], Field(max_length=1000)] | None = None
    status: Literal["pending", "running", "all"] | None = None


class Run(BaseModel):  # type: ignore[no-redef]  # a field named `kwargs` vs the plugin's __init__
    """A run."""

    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str
    updated_at: str
    status: RunStatus
    metadata: dict[str, Any]
    kwargs: dict[str, Any] = Field(description="What the run was asked to do.")
    multitask_strategy: MultitaskStrategy


# --- threads --------------------------------------------------------------------------------
class StateUpdate(Strict):
    """One update of a superstep."""

    values: Metadata | list[Any] | None = None
    command: Command | None = None
    as_node: Name


class Superstep(Strict):
    updates: Annotated[list[StateUpdate], Field(min_length=1, max_length=64)]


class ThreadTTL(Strict):
    """When a thread is swept: ``ttl`` minutes from now (create or patch)."""

    strategy: Literal["delete", "keep_latest"] = Field(
        "delete", description="delete: the whole thread; keep_latest: all but its latest state."
    )
    ttl: float = Field(gt=0, le=10 * 525_600, description="Minutes from now.")


class ThreadCreate(Strict):
    """Payload for creating a thread."""

    thread_id: ThreadId | None = None
    metadata: Metadata | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    ttl: ThreadTTL | None = None
    supersteps: Annotated[list[Superstep], Field(max_length=100)] | None = None


class ThreadPatch(Strict):
    """Metadata to merge into the thread's."""

    metadata: Metadata | None = None
    ttl: ThreadTTL | None = None


ThreadField = Literal[
    "thread_id",
    "created_at",
    "updated_at",
    "state_updated_at",
    "metadata",
    "config",
    "status",
    "values",
    "interrupts",
]


class ThreadSearch(Strict):
    """Filters, order and page of a thread search."""

    ids: Annotated[list[ThreadId], Field(max_length=1000)] | None = None
    metadata: Metadata | None = None
    values: Metadata | None = None
    status: ThreadStatus | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    sort_by: (
        Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"] | None
    ) = None  # noqa: E501
    sort_order: SortOrder | None = None
    select: Annotated[list[ThreadField], Field(max_length=16)] | None = None
    extract: (
        Annotated[dict[Name, Annotated[str, Field(max_length=256)]], Field(max_length=10)] | None
    ) = None  # noqa: E501


class ThreadCount(Strict):
    metadata: Metadata | None = None
    values: Metadata | None = None
    status: ThreadStatus | None = None


class ThreadPrune(Strict):
    thread_ids: Annotated[list[ThreadId], Field(min_length=1, max_length=1000)]
    strategy: Literal["delete", "keep_latest"] = "delete"


class ThreadPruneResult(BaseModel):
    pruned_count: int


class Thread(BaseModel):
    """A thread (fields outside ``select`` are left out)."""

    thread_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    state_updated_at: str | None = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    status: ThreadStatus | None = None
    values: dict[str, Any] | None = None
    interrupts: dict[str, Any] | None = None
    error: Any = None
    extracted: dict[str, Any] | None = None


StateSelect = Annotated[
    str,
    Field(
        pattern=r"^(values(\.[A-Za-z0-9_]{1,64})?|next|tasks|checkpoint|metadata|created_at|parent_checkpoint|interrupts)$"
    ),
]  # noqa: E501


class StateUpdateRequest(Strict):
    """Update a thread's state as if ``as_node`` had run."""

    values: Metadata | list[Any] | None = None
    checkpoint: Checkpoint | None = None
    checkpoint_id: CheckpointId | None = None
    as_node: Name | None = None


class StateAtCheckpoint(Strict):
    checkpoint: Checkpoint
    subgraphs: bool = False
    select: Annotated[list[StateSelect], Field(max_length=16)] | None = None


class HistoryRequest(Strict):
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    before: CheckpointId | Checkpoint | None = None
    metadata: Metadata | None = None
    checkpoint: Checkpoint | None = None
    select: Annotated[list[StateSelect], Field(max_length=16)] | None = None


class ThreadState(BaseModel):
    """A thread's state at one checkpoint."""

    values: dict[str, Any] | list[Any] | None = None
    next: list[str] | None = None
    tasks: list[dict[str, Any]] | None = None
    checkpoint: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    created_at: str | None = None
    parent_checkpoint: dict[str, Any] | None = None
    interrupts: list[dict[str, Any]] | None = None
    checkpoint_id: str | None = None
    parent_checkpoint_id: str | None = None


class StateUpdateResult(BaseModel):
    checkpoint: dict[str, Any]


# --- assistants -----------------------------------------------------------------------------
AssistantField = Literal[
    "assistant_id",
    "graph_id",
    "name",
    "description",
    "config",
    "context",
    "created_at",
    "updated_at",
    "metadata",
    "version",
]


class AssistantSearch(Strict):
    metadata: Metadata | None = None
    graph_id: Name | None = None
    name: Name | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    sort_by: Literal["assistant_id", "created_at", "updated_at", "name", "graph_id"] | None = None
    sort_order: SortOrder | None = None
    select: Annotated[list[AssistantField], Field(max_length=10)] | None = None


class AssistantCount(Strict):
    metadata: Metadata | None = None
    graph_id: Name | None = None
    name: Name | None = None


class AssistantCreate(Strict):
    """Accepted for compatibility: assistants here are fixed by the deployment."""

    assistant_id: Name | None = None
    graph_id: Name | None = None
    config: Config | None = None
    context: Metadata | None = None
    metadata: Metadata | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    name: Name | None = None
    description: Annotated[str, Field(max_length=4096)] | None = None


class AssistantPatch(Strict):
    graph_id: Name | None = None
    config: Config | None = None
    context: Metadata | None = None
    metadata: Metadata | None = None
    name: Name | None = None
    description: Annotated[str, Field(max_length=4096)] | None = None


class AssistantVersions(Strict):
    metadata: Metadata | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0


class AssistantLatest(Strict):
    version: Annotated[int, Field(ge=1, le=1_000_000)]


class Assistant(BaseModel):
    """An assistant: a graph with a configuration (here: the graph, or one agent of it)."""

    assistant_id: str | None = None
    graph_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    metadata: dict[str, Any] | None = None
    version: int | None = None
    name: str | None = None
    description: str | None = None


class GraphSchemas(BaseModel):
    graph_id: str | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    state_schema: dict[str, Any] | None = None
    config_schema: dict[str, Any] | None = None
    context_schema: dict[str, Any] | None = None


class Info(BaseModel):
    """What the server is and supports (what Studio and the SDK ask first)."""

    version: str
    langgraph_py_version: str
    flags: dict[str, Any]
    host: dict[str, Any]
