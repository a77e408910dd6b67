"""Turning an Agent Server run request into a background run of the one graph.

Every run, whether the caller streams it, waits for it or leaves it in the background, and
whether it runs on a thread or on a temporary one (stateless), is a serial run of the run
facility (:mod:`app.runs`): validated here, queued, run by a worker in any API process, its
events written to the run's Redis stream, which the HTTP endpoints tail. So a run outlives
its HTTP request and its process: a run left by a dead process is taken over and resumed from
its last checkpoint.

A run with ``after_seconds`` is stored at once (pending, visible, cancellable, first in its
thread's queue) and queued by the scheduler when due (:mod:`app.agent_server.jobs`).

Double texting (a run sent while the thread is busy) follows ``multitask_strategy``:
``reject`` answers 409; ``enqueue`` runs it after the thread's earlier runs; ``interrupt``
cancels them (their checkpoints stay) and ``rollback`` cancels them and deletes what they
saved, then runs it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, status

from app.agent_server.access import assistant, claim_thread, not_found
from app.agent_server.ids import GRAPH_ID, AssistantDef
from app.agent_server.inputs import (
    check_command,
    check_nodes,
    graph_input,
    run_options,
    unprocessable,
)
from app.agent_server.jobs import delay_run
from app.agent_server.models import Checkpoint, RunCreate
from app.quotas import (
    check_metadata,
    check_run_config,
    check_run_input,
    check_run_quota,
    check_thread_quota,
)
from app.runs.spec import Durability, RunSpec
from app.runs.store import now_iso
from app.runs.webhooks import WebhookRejected, check_webhook_url
from app.security import ANONYMOUS, Caller
from app.services import Services
from app.sessions import SessionInfo
from app.thread_ids import client_thread_id

__all__ = ["Submitted", "cancel_run", "check_run_sizes", "submit_run"]


@dataclass
class Submitted:
    """A queued run: its id, its thread, and what the HTTP endpoints need to follow it."""

    run_id: str
    thread_key: str
    """The thread's stored key (:mod:`app.thread_ids`); ``thread_id`` is the caller's id."""
    record: dict[str, str]
    resumable: bool
    modes: list[str]

    @property
    def thread_id(self) -> str:
        return client_thread_id(self.thread_key)


def _durability(body: RunCreate) -> Durability:
    if body.durability is not None:
        return body.durability
    if body.checkpoint_during is False:
        return "exit"
    return "sync"  # each step saved before the next: what recovery resumes from


def _checkpoint(body: RunCreate) -> Checkpoint | None:
    if body.checkpoint is not None and body.checkpoint.checkpoint_id:
        return body.checkpoint
    if body.checkpoint_id:
        return Checkpoint(checkpoint_id=body.checkpoint_id)
    configured = ((body.config.configurable or {}) if body.config else {}).get("checkpoint_id")
    if isinstance(configured, str) and configured:
        return Checkpoint(checkpoint_id=configured[:64])
    return None


def check_run_sizes(services: Services, body: RunCreate) -> None:
    """413 when a part of the run request is above its size setting (before anything runs)."""
    settings = services.settings
    check_metadata(settings, body.metadata)
    check_run_input(settings, body.input, "input")
    if body.command is not None:
        check_run_input(settings, body.command.model_dump(mode="json"), "command")
    if body.config is not None:
        check_run_config(settings, body.config.model_dump(mode="json"), "config")
    check_run_config(settings, body.context, "context")


async def _validated(
    services: Services, body: RunCreate, thread: SessionInfo, found: AssistantDef
) -> tuple[RunSpec, Any, dict[str, Any]]:
    graph = services.graph
    limit = services.settings.api.max_message_chars
    if body.after_seconds and body.after_seconds > services.settings.runs.record_ttl_seconds:
        raise unprocessable(
            "after_seconds is longer than RUN_RECORD_TTL_SECONDS (the pending run would be "
            "forgotten before it starts); ask for less, or raise the setting"
        )
    if body.command is not None and body.input is not None:
        raise unprocessable("send input or command, not both")
    check_nodes(graph, body.interrupt_before, "interrupt_before")
    check_nodes(graph, body.interrupt_after, "interrupt_after")
    command = check_command(graph, body.command, limit) if body.command is not None else None
    run_input = graph_input(
        body.input,
        thread_id=thread.session_id,
        user_id=thread.user_id or "anonymous",
        agents=services.registry.names,
        target_agent=found.agent,
        max_chars=limit,
    )
    options = run_options(services.options_model, body.context, body.config)
    checkpoint = _checkpoint(body)
    if checkpoint is not None:
        if checkpoint.checkpoint_ns:
            raise unprocessable(
                "checkpoint.checkpoint_ns must be '' (runs start from a checkpoint of the root "
                "graph)"
            )
        config = {
            "configurable": {
                "thread_id": thread.key,
                "checkpoint_ns": "",
                "checkpoint_id": checkpoint.checkpoint_id,
            }
        }
        if await services.checkpointer.aget_tuple(config) is None:  # type: ignore[arg-type]
            raise not_found(
                f"Checkpoint {checkpoint.checkpoint_id!r} of thread {thread.session_id!r}",
                "Pick one from POST /threads/{thread_id}/history.",
            )
    if body.webhook is not None:
        try:
            await check_webhook_url(body.webhook, services.settings)
        except WebhookRejected as exc:
            raise unprocessable(f"webhook: {exc}") from None
    modes = body.stream_mode if isinstance(body.stream_mode, list) else [body.stream_mode]
    config_in = body.config
    spec = RunSpec(
        kind="agent",
        stream_modes=list(dict.fromkeys(modes)),
        subgraphs=body.stream_subgraphs,
        command=command,
        checkpoint={"checkpoint_id": checkpoint.checkpoint_id, "checkpoint_ns": ""}
        if checkpoint
        else None,
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        durability=_durability(body),
        recursion_limit=(config_in.recursion_limit if config_in else None) or 100,
        tags=list((config_in.tags if config_in else None) or []),
        metadata={
            **(body.metadata or {}),
            "graph_id": GRAPH_ID,
            "assistant_id": found.assistant_id,
            "thread_id": thread.session_id,
        },
        webhook=body.webhook,
        resumable=body.stream_resumable,
    )
    return spec, run_input, options


async def _make_room(services: Services, body: RunCreate, thread: SessionInfo) -> None:
    """Apply the multitask strategy when the thread is busy."""
    active = await services.runs.active_run_ids(thread.key)
    if not active and not await services.sessions.is_running(thread.key):
        return
    strategy = body.multitask_strategy
    if strategy == "reject":
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"Thread {thread.session_id!r} is busy with another run; retry when it is done, or "
            "send multitask_strategy 'enqueue', 'interrupt' or 'rollback'.",
        )
    if strategy in ("interrupt", "rollback"):
        for run_id in active:
            await cancel_run(services, run_id, thread.key, strategy)


async def cancel_run(services: Services, run_id: str, thread_key: str, action: str) -> str:
    """Cancel a run of the thread stored at ``thread_key``: "cancelled" (it had not started),
    "cancelling" (its worker stops it within a heartbeat) or its status (already over)."""
    verdict = await services.runs.cancel(run_id, action)
    if verdict == "cancelled":  # never started: end its stream and settle it here
        await services.runs.emit(run_id, "cancelled", {"status": "cancelled"})
        await services.runs.settle(run_id, thread_key)
        if action == "rollback":
            await services.runs.delete(run_id, thread_key)
    return verdict


async def submit_run(
    services: Services,
    who: Caller,
    body: RunCreate,
    *,
    thread_id: str | None,
    run_id: str | None = None,
) -> Submitted:
    """Validate and queue a run on ``thread_id`` (None: stateless, on a temporary thread).

    ``run_id`` (default: a new one) lets a caller that may submit twice (a cron's re-delivered
    firing) make the second submission find the first run instead."""
    found = assistant(services, body.assistant_id)
    check_run_sizes(services, body)
    await check_run_quota(services, who.owner)
    user = who.owner if who.owner != ANONYMOUS else "anonymous"
    stateless = thread_id is None
    if thread_id is None:
        await check_thread_quota(services, who.owner)
        thread = await services.sessions.create(
            who.owner, user, now_iso(), thread_id=str(uuid.uuid4()), metadata={"temporary": True}
        )
    else:
        existing = await services.sessions.get_owned(who.owner, thread_id)
        if existing is None and body.if_not_exists == "create":
            await check_thread_quota(services, who.owner)
            existing, _ = await claim_thread(services, who, user, now_iso(), thread_id)
        if existing is None:
            raise not_found(
                f"Thread {thread_id!r}",
                "Create it with POST /threads, or send if_not_exists='create'.",
            )
        thread = existing
    try:
        spec, run_input, options = await _validated(services, body, thread, found)
    except HTTPException:
        if stateless:
            await services.sessions.delete(thread.key)
        raise
    spec.temporary = stateless and body.on_completion != "keep"
    if not stateless:
        await _make_room(services, body, thread)
    metadata = {**thread.metadata, "graph_id": GRAPH_ID, "assistant_id": found.assistant_id}
    await services.sessions.update(thread, metadata=metadata, updated_at=now_iso())
    run_id = run_id or str(uuid.uuid4())
    delayed = bool(body.after_seconds)
    if delayed:
        # scheduled before the run is stored: a crash in between leaves a firing that finds
        # no run (nothing happens), never a pending run that nothing releases
        await delay_run(services, who.owner, run_id, body.after_seconds or 0.0)
    kwargs = body.model_dump(
        exclude_none=True, exclude={"assistant_id", "metadata", "multitask_strategy"}
    )
    meta = {
        "assistant_id": found.assistant_id,
        "multitask_strategy": body.multitask_strategy,
        "metadata": body.metadata or {},
        "kwargs": kwargs,
        "resumable": body.stream_resumable,
        "stream_mode": spec.stream_modes,
    }
    await services.runs.submit(
        owner=who.owner,
        thread_id=thread.key,
        run_input=run_input,
        options=options,
        agent=found.agent,
        meta=meta,
        run_id=run_id,
        spec=spec.as_dict(),
        kind="agent",
        serial=True,
        delayed=delayed,
    )
    record = await services.runs.get(run_id) or {}
    return Submitted(run_id, thread.key, record, body.stream_resumable, spec.stream_modes)
