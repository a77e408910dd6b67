"""Serial runs on a thread: one at a time, in the order they were created, under the lock.

A thread is single-writer. A run submitted with ``serial`` (every Agent Server run) is indexed
as one of the thread's active runs; the worker that claims it waits until it is the oldest of
them, then holds the thread's lock (the same lock `/chat` takes, with the run id as token, so a
worker taking the run over after a crash gets it back) for as long as it runs, refreshing it
with each heartbeat. When the run is over the worker settles it: out of the active runs, the
lock released, the thread's status (idle, interrupted or error) recorded, and, for a
``rollback`` cancel, the checkpoints the run wrote deleted with the run itself.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from app.runs.store import RunStore, now_iso
from app.sessions import SessionStore

log = logging.getLogger(__name__)

__all__ = ["ThreadRuns"]


class ThreadRuns:
    """The thread side of serial runs (used by the worker)."""

    def __init__(
        self,
        runs: RunStore,
        sessions: SessionStore,
        checkpointer: BaseCheckpointSaver[Any] | None,
        *,
        lock_seconds: float,
    ) -> None:
        self.runs = runs
        self.sessions = sessions
        self.checkpointer = checkpointer
        self.lock_seconds = lock_seconds

    async def try_start(self, thread_id: str, run_id: str) -> bool:
        """Whether the run may start now: it is the thread's oldest active run (or there are
        none) and it got the thread's lock."""
        active = await self.runs.active_run_ids(thread_id)
        if active and active[0] != run_id:
            return False
        return await self.sessions.hold(thread_id, run_id, self.lock_seconds)

    async def keep(self, thread_id: str, run_id: str) -> bool:
        """Extend the lock (each heartbeat)."""
        return await self.sessions.hold(thread_id, run_id, self.lock_seconds)

    async def settle(
        self,
        record: dict[str, str],
        run_id: str,
        *,
        thread_status: str,
        error: str = "",
        rollback: bool = False,
        delete_thread: bool = False,
    ) -> None:
        """The run is over: record it on the thread and release the thread."""
        thread_id = record.get("thread_id", "")
        try:
            if rollback and self.checkpointer is not None:
                await self.checkpointer.adelete_for_runs([run_id])
                await self.runs.delete(run_id, thread_id)
            if delete_thread and self.checkpointer is not None:
                await self.checkpointer.adelete_thread(thread_id)
                await self.sessions.delete(thread_id)
            elif thread_status:
                await self.sessions.set_status(thread_id, thread_status, now_iso(), error)
        finally:
            await self.runs.settle(run_id, thread_id)
            await self.sessions.unhold(thread_id, run_id)
