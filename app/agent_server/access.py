"""Finding what a caller may see: its threads, their runs, the deployment's assistants.

Thread ids are the caller's own (:mod:`app.thread_ids`): an id names the caller's thread, or
none, whatever other keys did with the same id, so another key's thread is neither found nor
in the way; a run is found through its thread. A client-chosen id whose stored key has
checkpoints that no record of the caller's owns (left by a record that expired) is refused with
the 404 of a thread that does not exist, never attached to the record.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import HTTPException, status
from langchain_core.runnables import RunnableConfig

from app.agent_server.ids import AssistantDef, assistants_of, thread_defaults
from app.agent_server.state import thread_interrupts
from app.security import Caller
from app.serde import jsonable
from app.services import Services
from app.sessions import SessionInfo
from app.thread_ids import thread_key

__all__ = [
    "assistant",
    "assistants",
    "claim_thread",
    "live_status",
    "owned_run",
    "owned_thread",
    "thread_view",
]

STARTED_AT = "2025-01-01T00:00:00+00:00"
"""The assistants' creation time: they are part of the deployment, not created at run time."""


def not_found(what: str, hint: str) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, f"{what} not found. {hint}")


def assistants(services: Services) -> list[AssistantDef]:
    return assistants_of([(a.name, a.description) for a in services.registry])


def assistant(services: Services, assistant_id: str) -> AssistantDef:
    """The assistant with this id, or this graph / agent name (404 otherwise)."""
    for found in assistants(services):
        if assistant_id in (found.assistant_id, found.name):
            return found
    raise not_found(
        f"Assistant {assistant_id!r}",
        "Use 'switchyard' (the graph), an agent's name, or an id from POST /assistants/search.",
    )


def assistant_view(found: AssistantDef) -> dict[str, Any]:
    return {
        "assistant_id": found.assistant_id,
        "graph_id": "switchyard",
        "config": {},
        "context": {},
        "created_at": STARTED_AT,
        "updated_at": STARTED_AT,
        "metadata": found.metadata,
        "version": 1,
        "name": found.name,
        "description": found.description,
    }


async def owned_thread(services: Services, thread_id: str, who: Caller) -> SessionInfo:
    """The caller's thread ``thread_id`` (404 when it has none of that id)."""
    info = await services.sessions.get_owned(who.owner, thread_id)
    if info is None:
        raise not_found(
            f"Thread {thread_id!r}",
            "Create it with POST /threads (or a run with if_not_exists='create').",
        )
    return info


def unavailable(thread_id: str) -> HTTPException:
    """The answer to a client-chosen id the caller cannot have: the same 404 as for a thread
    that does not exist, whatever the reason (it says neither that nor whose it is)."""
    return not_found(
        f"Thread {thread_id!r}",
        "This thread_id is not available to this API key: choose another one, or omit "
        "thread_id to get a server-generated one.",
    )


async def claim_thread(
    services: Services,
    who: Caller,
    user_id: str,
    created_at: str,
    thread_id: str,
    metadata: dict[str, Any] | None = None,
) -> tuple[SessionInfo, bool]:
    """A client-chosen ``thread_id`` for ``who``: (its record, created now?).

    Only the caller's own threads are looked at (another key's thread of the same id is
    another thread). 404 (:func:`unavailable`) when checkpoints exist under the caller's key
    without a record: the record expired, and a new one must not adopt what is left.
    """
    key = thread_key(who.owner, thread_id)
    existing = await services.sessions.get(key)
    if existing is None:
        config: RunnableConfig = {"configurable": {"thread_id": key, "checkpoint_ns": ""}}
        if await services.checkpointer.aget_tuple(config) is not None:
            raise unavailable(thread_id)
        existing, created = await services.sessions.create_if_absent(
            who.owner, user_id, created_at, thread_id=thread_id, metadata=metadata
        )
    else:
        created = False
    if existing.owner != who.owner:  # never for a key made of the caller's owner id
        raise unavailable(thread_id)
    return existing, created


async def owned_run(
    services: Services, thread_id: str, run_id: str, who: Caller
) -> tuple[SessionInfo, dict[str, str]]:
    info = await owned_thread(services, thread_id, who)
    record = await services.runs.get(run_id)
    if (
        record is None
        or record.get("thread_id") != info.key
        or record.get("owner") != who.owner
        or record.get("kind") != "agent"
    ):
        raise not_found(f"Run {run_id!r} of thread {thread_id!r}", "List runs with GET .../runs.")
    return info, record


async def live_status(services: Services, info: SessionInfo) -> str:
    """busy while a turn or a run holds the thread or runs are waiting; else how the last run
    left it (idle, interrupted, error)."""
    running, active = await asyncio.gather(
        services.sessions.is_running(info.key),
        services.runs.active_run_ids(info.key),
    )
    return "busy" if running or active else info.status


async def thread_view(
    services: Services,
    info: SessionInfo,
    *,
    with_values: bool = True,
    status_now: str | None = None,
) -> dict[str, Any]:
    """A ``Thread``: ids, times, metadata, status, and the values and interrupts of its
    latest checkpoint."""
    view: dict[str, Any] = {
        "thread_id": info.session_id,
        "created_at": info.created_at,
        "updated_at": info.updated_at or info.created_at,
        "state_updated_at": info.updated_at or info.created_at,
        "metadata": {**thread_defaults(), **info.metadata},
        "config": {},
        "status": status_now or await live_status(services, info),
        "values": {},
        "interrupts": {},
        "error": info.error or None,
    }
    if with_values:
        snapshot = await services.graph.aget_state({"configurable": {"thread_id": info.key}})
        view["values"] = jsonable(snapshot.values or {})
        view["interrupts"] = thread_interrupts(snapshot)
    return view
