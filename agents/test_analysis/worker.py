"""The background-analysis worker: a Redis Streams consumer in every API process.

Queue semantics come from Redis Streams consumer groups, not from code here:

- ``XREADGROUP >`` hands each queued analysis to exactly one worker; the entry stays in the
  group's pending list (PEL), owned by that worker, until it is ``XACK``-ed at the end;
- while the run lasts, a heartbeat re-``XCLAIM``-s the entry (``JUSTID``, idle time 0) so a
  live worker's claim never looks stale, and checks the analysis's cancel flag;
- ``XAUTOCLAIM`` takes over entries idle longer than the claim timeout: their worker died
  (SIGKILL, OOM, a lost node). The new owner resumes the thread from its last checkpoint
  with ``astream(None, ...)``, so LangGraph redoes only the tasks without a saved write (the
  unfinished LLM batches);
- a heartbeat that finds the entry owned by someone else stops its run (it was taken over);
- on a graceful stop the worker cancels its runs and sets their entries' idle time past the
  claim timeout, so another worker takes them over at once.

Runs use ``durability="sync"``: each step's checkpoint is saved before the next step starts,
and every finished task's writes are saved as it finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import uuid
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from redis.exceptions import RedisError, ResponseError

from agents.test_analysis.jobs import GROUP, QUEUE, JobStore, stream_entries
from agents.test_analysis.runs import analysis_input, persisted_batches, result_of, run_config
from agents.test_analysis.state import STAGES
from config import Settings
from graph.turns import describe_failure

__all__ = ["AnalysisWorker"]

log = logging.getLogger(__name__)

# KEYS: queue; ARGV: group, consumer, entry id -> 1 (still ours, idle reset) | 0 (lost)
_REFRESH = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #p == 0 or p[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
"""


#: Consumers idle this long with nothing pending belong to processes that are gone.
PRUNE_AFTER_MS = 3_600_000


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class AnalysisWorker:
    """Runs queued analyses of one process (up to ``analysis_worker_concurrency`` at once)."""

    def __init__(
        self,
        *,
        jobs: JobStore,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        checkpointer: BaseCheckpointSaver[Any],
        settings: Settings,
        name: str | None = None,
    ) -> None:
        self.jobs = jobs
        self.redis = jobs.redis
        self.graph = graph
        self.checkpointer = checkpointer
        self.settings = settings
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.claim_ms = int(settings.analysis_claim_timeout_seconds * 1000)
        self.beat = settings.analysis_heartbeat_seconds
        self._refresh = self.redis.register_script(_REFRESH)
        self._loop_task: asyncio.Task[None] | None = None
        self._runs: dict[str, asyncio.Task[None]] = {}  # entry id -> supervising task
        self._stop_reason: dict[str, str] = {}  # thread id -> why its run was cancelled
        self._stopping = False

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            await self.redis.xgroup_create(QUEUE, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        await self._prune_consumers()
        self._loop_task = asyncio.create_task(self._loop(), name=f"analysis-worker {self.name}")
        log.info("analysis worker %s started", self.name)

    async def _prune_consumers(self) -> None:
        """Forget the consumer names of processes gone for an hour with nothing pending (every
        process start adds one; a live worker is never idle that long, and one that was would
        simply be recreated by its next read)."""
        try:
            consumers = await self.redis.xinfo_consumers(QUEUE, GROUP)
            for consumer in consumers:
                name = _text(consumer.get("name"))
                if (
                    name != self.name
                    and int(consumer.get("pending", 0)) == 0
                    and int(consumer.get("idle", 0)) > PRUNE_AFTER_MS
                ):
                    await self.redis.xgroup_delconsumer(QUEUE, GROUP, name)
        except RedisError as exc:
            log.warning("could not prune stale analysis consumers: %s", exc)

    async def stop(self) -> None:
        """Stop taking work; hand running analyses over to other workers."""
        self._stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        for task in list(self._runs.values()):
            task.cancel()
        if self._runs:
            await asyncio.gather(*self._runs.values(), return_exceptions=True)
        log.info("analysis worker %s stopped", self.name)

    # --- the loop --------------------------------------------------------------------------
    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_autoclaim = 0.0
        while True:
            free = self.settings.analysis_worker_concurrency - len(self._runs)
            if free <= 0:
                await asyncio.wait(
                    list(self._runs.values()),
                    timeout=self.beat,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                continue
            try:
                entries: list[tuple[str, str | None]] = []
                if loop.time() >= next_autoclaim:
                    entries = await self._autoclaim(free)
                    next_autoclaim = loop.time() + self.beat
                if not entries:
                    entries = await self._read_new(free)
            except RedisError as exc:
                log.warning("analysis worker %s: queue read failed (%s); retrying", self.name, exc)
                await asyncio.sleep(min(self.beat, 2.0))
                continue
            for entry_id, thread_id in entries:
                self._spawn(entry_id, thread_id)

    async def _read_new(self, count: int) -> list[tuple[str, str | None]]:
        block = int(min(self.beat, 2.0) * 1000)
        found = await self.redis.xreadgroup(
            GROUP, self.name, {QUEUE: ">"}, count=count, block=block
        )
        return [
            (_text(eid), _thread(fields))
            for _, items in stream_entries(found)
            for eid, fields in items
        ]

    async def _autoclaim(self, count: int) -> list[tuple[str, str | None]]:
        """Entries whose worker stopped refreshing them for longer than the claim timeout."""
        reply = await self.redis.xautoclaim(
            QUEUE, GROUP, self.name, min_idle_time=self.claim_ms, start_id="0-0", count=count
        )
        claimed = reply[1] if len(reply) > 1 else []
        entries = []
        for entry_id, fields in claimed:
            entries.append((_text(entry_id), _thread(fields)))
            log.info("analysis worker %s took over queue entry %s", self.name, _text(entry_id))
        return entries

    def _spawn(self, entry_id: str, thread_id: str | None) -> None:
        task = asyncio.create_task(self._supervise(entry_id, thread_id))
        self._runs[entry_id] = task
        task.add_done_callback(lambda _t: self._runs.pop(entry_id, None))

    # --- one analysis ----------------------------------------------------------------------
    async def _supervise(self, entry_id: str, thread_id: str | None) -> None:
        if thread_id is None:  # an entry deleted from the stream: nothing to run
            await self._ack(entry_id)
            return
        try:
            if await self._too_many_deliveries(entry_id, thread_id):
                return
            verdict = await self.jobs.claim(thread_id, self.name)
            if verdict != "ok":  # cancelled while queued, already finished, or expired
                await self._ack(entry_id)
                return
            await self._run(entry_id, thread_id)
        except asyncio.CancelledError:
            if self._stopping:
                await self._release(entry_id)
            raise
        except Exception:
            log.exception("analysis worker %s: supervising %s failed", self.name, thread_id)

    async def _run(self, entry_id: str, thread_id: str) -> None:
        runner = asyncio.create_task(self._execute(thread_id))
        heartbeat = asyncio.create_task(self._heartbeat(entry_id, thread_id, runner))
        try:
            # Shielded: a cancel from the heartbeat stops only the run, and a stop of the
            # worker reaches this frame first, which then stops the run itself.
            result = await asyncio.shield(runner)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the worker is stopping
                runner.cancel()
                with contextlib.suppress(BaseException):
                    await runner
                raise
            if self._stop_reason.pop(thread_id, "lost") == "cancel":
                await self._close(entry_id, thread_id, "cancelled", {})
            # else it was taken over: the new owner holds the entry and the record
        except Exception as exc:
            log.exception("analysis %s failed", thread_id)
            await self._close(
                entry_id, thread_id, "failed", {"error": describe_failure(exc)}, detail=str(exc)
            )
        else:
            await self._close(entry_id, thread_id, "done", {"result": result})
        finally:
            heartbeat.cancel()
            self._stop_reason.pop(thread_id, None)

    async def _execute(self, thread_id: str) -> dict[str, Any]:
        config = run_config(thread_id)
        record = await self.jobs.get(thread_id) or {}
        snapshot = await self.graph.aget_state(config)
        if snapshot.created_at is None:  # never started: the request is still in the store
            request = await self.jobs.load_request(thread_id)
            if request is None:
                raise RuntimeError("the analysis request has expired; submit it again")
            inp: Any = analysis_input(
                request, thread_id=thread_id, user_id=record.get("owner", "anonymous")
            )
        elif not snapshot.next:  # finished before its worker could record it
            return result_of(dict(snapshot.values))
        else:
            inp = None  # resume: LangGraph reruns only the tasks without saved writes
        done = len(await persisted_batches(self.checkpointer, thread_id))
        stages: list[str] = list((snapshot.values or {}).get("analysis_stages") or [])
        await self.jobs.emit(
            thread_id,
            "started",
            {
                "worker": self.name,
                "resumed": inp is None,
                "batches_done": done,
                "attempt": int(record.get("attempts", "1") or 1),
            },
        )
        async for chunk in self.graph.astream(
            inp, config, stream_mode="updates", durability="sync"
        ):
            for node, update in (chunk or {}).items():
                if node == "review_with_llm":
                    done += 1
                    await self.jobs.emit(thread_id, "batch", {"batches_done": done})
                    await self.jobs.update(thread_id, batches_done=done)
                elif node in STAGES:
                    if node not in stages:
                        stages.append(node)
                    fields: dict[str, str | int] = {"stages": json.dumps(stages)}
                    plan = (update or {}).get("analysis_plan") if node == "plan_analysis" else None
                    if plan:
                        fields["batches_total"] = len(plan.get("batches") or [])
                        fields["mode"] = plan.get("mode", "")
                    await self.jobs.update(thread_id, **fields)
                    await self.jobs.emit(thread_id, "stage", {"stage": node, "stages": stages})
        final = await self.graph.aget_state(config)
        return result_of(dict(final.values))

    async def _heartbeat(self, entry_id: str, thread_id: str, runner: asyncio.Task[Any]) -> None:
        while not runner.done():
            await asyncio.sleep(self.beat)
            try:
                owned = await self._refresh(keys=[QUEUE], args=[GROUP, self.name, entry_id])
                cancel = await self.jobs.cancel_requested(thread_id)
            except RedisError as exc:
                log.warning("heartbeat of analysis %s failed: %s", thread_id, exc)
                continue
            if not owned:
                log.warning(
                    "analysis %s was taken over by another worker; stopping here", thread_id
                )
                self._stop_reason[thread_id] = "lost"
            elif cancel:
                self._stop_reason[thread_id] = "cancel"
            else:
                continue
            runner.cancel()
            return

    # --- queue bookkeeping -----------------------------------------------------------------
    async def _close(
        self,
        entry_id: str,
        thread_id: str,
        status: str,
        payload: dict[str, Any],
        *,
        detail: str | None = None,
    ) -> None:
        fields = {k: v if isinstance(v, str) else json.dumps(v) for k, v in payload.items()}
        if status == "done":
            batches = str(payload["result"].get("metrics", {}).get("llm_batches", 0))
            fields.update(batches_done=batches, batches_total=batches)
        if await self.jobs.finish(thread_id, self.name, status, **fields):
            event = {"status": status}
            if status == "done":
                event["summary"] = payload["result"].get("summary", {})
            if status == "failed":
                event.update(error=payload.get("error", ""), detail=detail or "")
            await self.jobs.emit(thread_id, status, event)
        await self._ack(entry_id)

    async def _ack(self, entry_id: str) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.xack(QUEUE, GROUP, entry_id)
        pipe.xdel(QUEUE, entry_id)
        await pipe.execute()

    async def _release(self, entry_id: str) -> None:
        """Make a running entry claimable at once (graceful stop), keeping it pending."""
        with contextlib.suppress(RedisError):
            await self.redis.xclaim(
                QUEUE, GROUP, self.name, 0, [entry_id], idle=self.claim_ms + 1, justid=True
            )

    async def _too_many_deliveries(self, entry_id: str, thread_id: str) -> bool:
        pending = await self.redis.xpending_range(QUEUE, GROUP, min=entry_id, max=entry_id, count=1)
        times = int(pending[0]["times_delivered"]) if pending else 1
        if times <= self.settings.analysis_max_deliveries:
            return False
        log.error(
            "analysis %s was started %d times without finishing; failing it", thread_id, times
        )
        await self.jobs.claim(thread_id, self.name)
        await self._close(
            entry_id,
            thread_id,
            "failed",
            {
                "error": f"the analysis was started {times} times and its worker stopped every "
                "time (ANALYSIS_MAX_DELIVERIES); resume it once the cause is fixed",
            },
        )
        return True


def _thread(fields: Any) -> str | None:
    if not fields:
        return None
    values = {_text(k): _text(v) for k, v in fields.items()}
    return values.get("thread_id")
