"""The background-run worker: a Redis Streams consumer in every API process.

Queue semantics come from Redis Streams consumer groups, not from code here:

- ``XREADGROUP >`` hands each queued run to exactly one worker; the entry stays in the
  group's pending list (PEL), owned by that worker, until it is ``XACK``-ed at the end;
- while the run lasts, a heartbeat re-``XCLAIM``-s the entry (``JUSTID``, idle time 0) so a
  live worker's claim never looks stale, and checks the run's cancel flag;
- ``XAUTOCLAIM`` takes over entries idle longer than the claim timeout: their worker died
  (SIGKILL, OOM, a lost node). The new owner resumes the thread from its last checkpoint
  with ``astream(None, ...)``, so LangGraph redoes only the tasks without a saved write (e.g.
  an analysis's unfinished LLM batches);
- a heartbeat that finds the entry owned by someone else stops its run (it was taken over);
- on a graceful stop the worker cancels its runs and sets their entries' idle time past the
  claim timeout, so another worker takes them over at once.

Runs use ``durability="sync"``: each step's checkpoint is saved before the next step starts,
and every finished task's writes are saved as it finishes.

A ``serial`` run (every Agent Server run) first waits for its turn on its thread (it is the
oldest of the thread's active runs and holds the thread's lock, :mod:`app.runs.threads`);
waiting, it takes no run slot. What runs report on their event stream is in
:mod:`app.runs.events`: ``started`` (``resumed`` when it continues from a checkpoint), what the
run streams, then ``done`` (a turn run's with the result), ``failed`` or ``cancelled``. The
graph itself runs in :func:`app.runs.executor.execute`, which decides a cancel, the deadline
(RUN_TIMEOUT_SECONDS) and a failure; the heartbeat only sets the run's cancel event. An
Agent Server run's outcome (its final values, interrupts or error) is stored with the run, its
thread's status updated, and its webhook queued (after the ack) for this process's
:class:`~app.runs.webhooks.WebhookDispatcher`.

Over 400 lines because it is one class, `RunWorker`, whose consumer loop, heartbeat, reclaim and
shutdown share its Redis connection, consumer name and in-flight run tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import uuid
from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot
from redis.exceptions import RedisError, ResponseError

from agents.contract.context import RunContext
from app.runs.events import Event, EventMapper
from app.runs.executor import Deadline, RunCancelled, execute, failure_of
from app.runs.spec import RUN_KEY, RunSpec, run_config
from app.runs.store import GROUP, QUEUE, TERMINAL, RunStore, now_iso, stream_entries
from app.runs.threads import ThreadRuns
from app.runs.views import run_view
from app.runs.webhooks import WebhookDispatcher
from app.serde import dumps, interrupt_view
from app.turns import run_result
from config import Settings
from tools.background import stop_task, stop_tasks

__all__ = ["RUN_KEY", "RunWorker", "run_config"]

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
#: A run's stored output (final values) above this size is not stored: readers use the thread.
MAX_OUTPUT_BYTES = 1 << 20
#: Runs waiting for their turn on a thread, per run slot.
WAITERS_PER_SLOT = 8


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RunWorker:
    """Runs queued runs of one process (up to ``run_worker_concurrency`` at once)."""

    def __init__(
        self,
        *,
        runs: RunStore,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        context: Callable[..., RunContext],
        settings: Settings,
        name: str | None = None,
        threads: ThreadRuns | None = None,
        streams_answer: Callable[[str, str], bool] | None = None,
        webhooks: WebhookDispatcher | None = None,
    ) -> None:
        self.runs = runs
        self.redis = runs.redis
        self.graph = graph
        self.context = context
        self.settings = settings
        self.threads = threads
        self.streams_answer = streams_answer or (lambda _agent, _node: False)
        # webhooks leave the run path: a slow receiver holds a sender, never a run slot
        self.webhooks = webhooks or WebhookDispatcher(settings)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.claim_ms = int(settings.runs.claim_timeout_seconds * 1000)
        self.beat = settings.runs.heartbeat_seconds
        self._refresh = self.redis.register_script(_REFRESH)
        self._loop_task: asyncio.Task[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}  # entry id -> supervising task
        self._waiting: set[str] = set()  # entry ids waiting for their turn on a thread
        self._stop_reason: dict[str, str] = {}  # run id -> why its run was cancelled
        self._stopping = False

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            await self.redis.xgroup_create(QUEUE, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        await self._prune_consumers()
        self.webhooks.start()
        self._loop_task = asyncio.create_task(self._loop(), name=f"run-worker {self.name}")
        log.info("run worker %s started", self.name)

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
            log.warning("could not prune stale run consumers: %s", exc)

    async def stop(self) -> None:
        """Stop taking work; hand running runs over to other workers."""
        self._stopping = True
        await stop_task(self._loop_task, what=f"run worker {self.name}'s loop")
        await stop_tasks(list(self._tasks.values()), what=f"a run of worker {self.name}")
        await self.webhooks.stop()
        log.info("run worker %s stopped", self.name)

    # --- the loop --------------------------------------------------------------------------
    def _free_slots(self) -> int:
        concurrency = self.settings.runs.worker_concurrency
        running = len(self._tasks) - len(self._waiting)
        room = concurrency * WAITERS_PER_SLOT - len(self._tasks)
        return min(concurrency - running, room)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_autoclaim = 0.0
        queue_down = False
        # The flag, not only the cancel, ends the loop: a cancel that lands as redis-py's socket
        # timeout fires is turned into a TimeoutError and retried by redis-py, and the loop then
        # went on reading forever, so stop() (and the app's shutdown) never returned.
        while not self._stopping:
            free = self._free_slots()
            if free <= 0:
                await asyncio.wait(
                    list(self._tasks.values()),
                    timeout=min(self.beat, 0.5) if self._waiting else self.beat,
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
                if not queue_down:  # once per outage: the loop retries every beat
                    log.warning("run worker %s: queue unreachable (%s); retrying", self.name, exc)
                    queue_down = True
                await asyncio.sleep(min(self.beat, 2.0))
                continue
            if queue_down:
                log.info("run worker %s: queue reachable again", self.name)
                queue_down = False
            for entry_id, run_id in entries:
                self._spawn(entry_id, run_id)

    async def _read_new(self, count: int) -> list[tuple[str, str | None]]:
        block = int(min(self.beat, 2.0) * 1000)
        found = await self.redis.xreadgroup(
            GROUP, self.name, {QUEUE: ">"}, count=count, block=block
        )
        return [
            (_text(eid), _run_id(fields))
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
            entries.append((_text(entry_id), _run_id(fields)))
            log.info("run worker %s took over queue entry %s", self.name, _text(entry_id))
        return entries

    def _spawn(self, entry_id: str, run_id: str | None) -> None:
        task = asyncio.create_task(self._supervise(entry_id, run_id))
        self._tasks[entry_id] = task

        def done(_t: asyncio.Task[None]) -> None:
            self._tasks.pop(entry_id, None)
            self._waiting.discard(entry_id)

        task.add_done_callback(done)

    # --- one run --------------------------------------------------------------------------
    async def _supervise(self, entry_id: str, run_id: str | None) -> None:
        if run_id is None:  # an entry deleted from the stream: nothing to run
            await self._ack(entry_id)
            return
        try:
            if await self._too_many_deliveries(entry_id, run_id):
                return
            record = await self.runs.get(run_id)
            if record is not None and record.get("serial") == "1" and self.threads is not None:
                turn = await self._await_turn(entry_id, run_id, record)
                if turn == "gone":
                    await self._ack(entry_id)
                if turn != "go":
                    return
            verdict = await self.runs.claim(run_id, self.name)
            if verdict != "ok":  # cancelled while queued, already finished, or expired
                if record is not None and record.get("serial") == "1":
                    await self._settle_unclaimed(run_id, record)
                await self._ack(entry_id)
                return
            await self._run(entry_id, run_id, record or {})
        except asyncio.CancelledError:
            if self._stopping:
                await self._release(entry_id)
            raise
        except Exception:
            log.exception("run worker %s: supervising %s failed", self.name, run_id)

    async def _await_turn(self, entry_id: str, run_id: str, record: dict[str, str]) -> str:
        """Wait until the run may start on its thread: "go", "gone" (cancelled or expired
        meanwhile), "lost" (another worker took the entry over) or "stop"."""
        assert self.threads is not None
        thread_id = record.get("thread_id", "")
        loop = asyncio.get_running_loop()
        next_refresh = loop.time() + self.beat
        self._waiting.add(entry_id)
        try:
            while not self._stopping:
                current = await self.runs.get(run_id)
                if current is None or current.get("status") in TERMINAL:
                    return "gone"
                if await self.threads.try_start(thread_id, run_id):
                    return "go"
                if loop.time() >= next_refresh:
                    if not await self._refresh(keys=[QUEUE], args=[GROUP, self.name, entry_id]):
                        return "lost"
                    next_refresh = loop.time() + self.beat
                await asyncio.sleep(min(self.beat, 0.2))
            await self._release(entry_id)
            return "stop"
        finally:
            self._waiting.discard(entry_id)

    async def _settle_unclaimed(self, run_id: str, record: dict[str, str]) -> None:
        """A serial run that ended before a worker ran it (cancelled while queued)."""
        if self.threads is None:
            return
        current = await self.runs.get(run_id) or record
        rollback = current.get("cancel_action") == "rollback"
        spec = RunSpec.from_dict((await self.runs.load_input(run_id) or {}).get("spec"))
        await self.threads.settle(
            current,
            run_id,
            thread_status="",
            rollback=rollback,
            delete_thread=spec.temporary,
        )

    async def _run(self, entry_id: str, run_id: str, record: dict[str, str]) -> None:
        payload = await self.runs.load_input(run_id)
        spec = RunSpec.from_dict((payload or {}).get("spec"))
        cancel = asyncio.Event()  # set by the heartbeat: the run was cancelled or taken over
        runner = asyncio.create_task(self._execute(run_id, payload, spec, cancel))
        heartbeat = asyncio.create_task(self._heartbeat(entry_id, run_id, runner, record, cancel))
        try:
            # Shielded: a stop of the worker reaches this frame first, which then stops the
            # run itself.
            fields = await asyncio.shield(runner)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the worker is stopping
                runner.cancel()
                with contextlib.suppress(BaseException):
                    await runner
                raise
            # else the run's task alone was cancelled: it was taken over
        except RunCancelled:
            if self._stop_reason.pop(run_id, "lost") == "cancel":
                await self._close(entry_id, run_id, record, spec, "cancelled", {})
            # else it was taken over: the new owner holds the entry and the record
        except Exception as exc:
            # the executor decides a failure of the graph run; the same rule for one around it
            # (its input expired, its state unreadable)
            failure = failure_of(exc, "run")
            failure.log(f"run {run_id}")
            fields = {"error": failure.message, "error_kind": failure.kind}
            await self._close(entry_id, run_id, record, spec, "failed", fields)
        else:
            await self._close(entry_id, run_id, record, spec, "done", fields)
        finally:
            heartbeat.cancel()
            self._stop_reason.pop(run_id, None)

    async def _execute(
        self, run_id: str, payload: dict[str, Any] | None, spec: RunSpec, cancel: asyncio.Event
    ) -> dict[str, str]:
        record = await self.runs.get(run_id) or {}
        if payload is None:
            raise RuntimeError("the run's input has expired; submit it again")
        thread_id = record.get("thread_id", run_id)
        owner = record.get("owner", "")
        latest_config = run_config(thread_id, run_id, owner, spec)
        snapshot = await self.graph.aget_state(latest_config)
        began = (snapshot.metadata or {}).get(RUN_KEY) == run_id
        if began and (not snapshot.next or snapshot.interrupts):
            return self._outcome(spec, snapshot)  # finished before its worker could record it
        if began:  # resume from the checkpoint: LangGraph redoes only unfinished tasks
            inp: Any = None
            config = latest_config
        else:
            inp = spec.graph_input(payload.get("input"))
            config = run_config(thread_id, run_id, owner, spec, fork=True)
        await self.runs.emit(
            run_id,
            "started",
            {
                "worker": self.name,
                "resumed": began,
                "attempt": int(record.get("attempts", "1") or 1),
            },
        )
        mapper = EventMapper(spec, self.streams_answer)
        options: dict[str, Any] = {}
        if spec.interrupt_before:
            options["interrupt_before"] = spec.interrupt_before
        if spec.interrupt_after:
            options["interrupt_after"] = spec.interrupt_after

        async def emit(event: Event) -> None:
            await self.runs.emit_raw(run_id, *event)

        await execute(
            self.graph,
            inp,
            config,
            context=self.context(
                payload.get("options") or {},
                owner=owner or "anonymous",
                client="agent_server" if spec.kind == "agent" else "rest",
            ),
            mapper=mapper,
            sink=emit,
            cancel=cancel,
            deadline=Deadline(self.settings.runs.timeout_seconds, "RUN_TIMEOUT_SECONDS"),
            what="run",
            durability=spec.durability,
            **options,
        )
        return self._outcome(spec, await self.graph.aget_state(latest_config))

    @staticmethod
    def _outcome(spec: RunSpec, snapshot: StateSnapshot) -> dict[str, str]:
        """What a finished run stores: a turn's result, or an Agent Server run's output (its
        final values, with ``__interrupt__`` when it stopped at an interrupt) and the status it
        leaves its thread in."""
        values = dict(snapshot.values or {})
        if spec.kind == "turn":
            return {"result": json.dumps(run_result(values), default=str)}
        interrupts = [interrupt_view(i) for i in snapshot.interrupts]
        output: dict[str, Any] = {**values, "__interrupt__": interrupts} if interrupts else values
        text = dumps(output)
        fields = {"thread_status": "interrupted" if interrupts or snapshot.next else "idle"}
        if len(text) <= MAX_OUTPUT_BYTES:
            fields["output"] = text
        return fields

    async def _heartbeat(
        self,
        entry_id: str,
        run_id: str,
        runner: asyncio.Task[Any],
        record: dict[str, str],
        stop: asyncio.Event,
    ) -> None:
        serial = record.get("serial") == "1" and self.threads is not None
        while not runner.done():
            await asyncio.sleep(self.beat)
            try:
                owned = await self._refresh(keys=[QUEUE], args=[GROUP, self.name, entry_id])
                cancel = await self.runs.cancel_requested(run_id)
                if serial and owned and self.threads is not None:
                    await self.threads.keep(record.get("thread_id", ""), run_id)
            except RedisError as exc:
                log.warning("heartbeat of run %s failed: %s", run_id, exc)
                continue
            if not owned:
                log.warning("run %s was taken over by another worker; stopping here", run_id)
                self._stop_reason[run_id] = "lost"
            elif cancel:
                self._stop_reason[run_id] = "cancel"
            else:
                continue
            stop.set()  # the executor stops the run (app.runs.executor)
            return

    # --- queue bookkeeping -----------------------------------------------------------------
    async def _close(
        self,
        entry_id: str,
        run_id: str,
        record: dict[str, str],
        spec: RunSpec,
        status: str,
        fields: dict[str, str],
    ) -> None:
        agent = spec.kind == "agent"
        thread_status = fields.pop("thread_status", "")
        if agent and status == "failed":
            thread_status = "error"
            error = {"error": fields.get("error_kind", "Error"), "message": fields["error"]}
            fields["output"] = dumps({"__error__": error})
        rollback = False
        if agent and status == "cancelled":
            rollback = await self.runs.cancel_action(run_id) == "rollback"
            thread_status = await self._status_after_cancel(record)
        webhook: dict[str, Any] | None = None
        if await self.runs.finish(run_id, self.name, status, **fields):
            event: dict[str, Any] = {"status": status}
            if status == "done" and not agent:
                event["result"] = json.loads(fields["result"])
            if status == "failed":
                # the error says the class of failure and what to do; the exception's own
                # text stays in the log (it may name internal hosts or quote sandbox stderr)
                event["error"] = fields.get("error", "")
                if agent:
                    event["error_kind"] = fields.get("error_kind", "")
            if rollback:  # the run and its events go with the rollback: tell followers first
                await self.runs.emit(run_id, status, event)
            if agent and self.threads is not None:
                # before the terminal event: a client that saw the run end (join, wait, a
                # stream) reads the thread as the run left it, never still busy
                await self.threads.settle(
                    record,
                    run_id,
                    thread_status=thread_status,
                    error=fields.get("error", ""),
                    rollback=rollback,
                    delete_thread=spec.temporary,
                )
            if not rollback:
                await self.runs.emit(run_id, status, event)
            if agent and self.threads is not None and spec.webhook and not rollback:
                webhook = await self._webhook_payload(run_id, fields)
        await self._ack(entry_id)
        if webhook is not None and spec.webhook:
            # after the ack, and never awaited: the receiver cannot hold this run's slot
            self.webhooks.submit(spec.webhook, webhook)

    async def _status_after_cancel(self, record: dict[str, str]) -> str:
        try:
            config = run_config(record.get("thread_id", ""), "", record.get("owner", ""))
            snapshot = await self.graph.aget_state(config)
        except Exception:
            return "idle"
        return "interrupted" if snapshot.next or snapshot.interrupts else "idle"

    async def _webhook_payload(self, run_id: str, fields: dict[str, str]) -> dict[str, Any] | None:
        """The body of the run's webhook (None when the run record is gone)."""
        record = await self.runs.get(run_id)
        if record is None:
            return None
        output = json.loads(fields["output"]) if fields.get("output") else None
        payload: dict[str, Any] = {
            **run_view(run_id, record),
            "run_started_at": record.get("started_at"),
            "run_ended_at": record.get("finished_at"),
            "webhook_sent_at": now_iso(),
            "values": None if output is None or "__error__" in output else output,
        }
        if output is not None and "__error__" in output:
            payload["error"] = output["__error__"]
        return payload

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

    async def _too_many_deliveries(self, entry_id: str, run_id: str) -> bool:
        pending = await self.redis.xpending_range(QUEUE, GROUP, min=entry_id, max=entry_id, count=1)
        times = int(pending[0]["times_delivered"]) if pending else 1
        if times <= self.settings.runs.max_deliveries:
            return False
        log.error("run %s was started %d times without finishing; failing it", run_id, times)
        record = await self.runs.get(run_id) or {}
        spec = RunSpec.from_dict((await self.runs.load_input(run_id) or {}).get("spec"))
        await self.runs.claim(run_id, self.name)
        await self._close(
            entry_id,
            run_id,
            record,
            spec,
            "failed",
            {
                "error": f"the run was started {times} times and its worker stopped every "
                "time (RUN_MAX_DELIVERIES); resume it once the cause is fixed",
                "error_kind": "RunMaxDeliveries",
            },
        )
        return True


def _run_id(fields: Any) -> str | None:
    if not fields:
        return None
    values = {_text(k): _text(v) for k, v in fields.items()}
    return values.get("run_id")
