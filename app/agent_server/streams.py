"""Following a run from HTTP: its events as Server-Sent Events, or its output when it ends.

The worker running the run (in any API process) writes its events to the run's Redis stream;
these functions tail that stream. SSE frames are ``event: <mode>`` and ``data: <JSON>``:
``metadata`` (``{"run_id", "attempt"}``) first when the run starts (again, with the next
attempt, when a worker resumes it after a crash), then the run's stream modes, then ``end``
(data ``null``: the JS SDK parses every frame's data as JSON), or ``error``
(``{"error", "message"}``) when it failed. A ``stream_resumable`` run's frames carry
``id:`` (the stream entry id): reconnecting with ``Last-Event-ID`` replays what came after it
(``-1`` replays everything kept). Without ``Last-Event-ID`` a re-attach sees new events only.

The worker writes what LangGraph streams, so an event may carry the thread's stored key (the
``config`` of a ``checkpoints`` or ``debug`` event): every frame and every output leaves here
with the caller's thread id instead (:func:`app.thread_ids.shown`). ``thread_key`` below is
always the stored key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator

from fastapi import HTTPException, status

from app.agent_server.submit import cancel_run
from app.runs.store import TERMINAL
from app.serde import dumpb, jsonable
from app.services import Services
from app.thread_ids import shown

log = logging.getLogger(__name__)

__all__ = [
    "LAST_EVENT_ID",
    "event_stream",
    "output_of",
    "start_after",
    "thread_stream",
    "wait_body",
]

#: How long one read of the event stream blocks before the run's record is checked.
BLOCK_MS = 5_000
LAST_EVENT_ID = r"^(-1|0|\d{1,20}-\d{1,20})$"
_LAST_EVENT_ID = re.compile(LAST_EVENT_ID)
ENDINGS = {"done": "end", "cancelled": "end", "failed": "error"}


async def start_after(services: Services, run_id: str, last_event_id: str | None) -> str:
    """Where a re-attach starts reading: after ``Last-Event-ID``, or after what is there."""
    if last_event_id is None:
        return await services.runs.last_event_id(run_id)
    if not _LAST_EVENT_ID.match(last_event_id):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "Last-Event-ID must be an event id from this stream ('<ms>-<n>'), or -1 to replay "
            "from the start",
        )
    return "0-0" if last_event_id in ("-1", "0") else last_event_id


def _frame(event: str, data: str, entry_id: str | None) -> dict[str, str]:
    frame = {"event": event, "data": data}
    if entry_id is not None:
        frame["id"] = entry_id
    return frame


def _error_data(raw: str) -> str:
    data = json.loads(raw or "{}")
    return json.dumps(
        {"error": data.get("error_kind") or "Error", "message": data.get("error") or "failed"}
    )


async def event_stream(
    services: Services,
    run_id: str,
    thread_key: str,
    *,
    after: str = "0-0",
    resumable: bool = False,
    modes: set[str] | None = None,
    cancel_on_disconnect: bool = False,
) -> AsyncIterator[dict[str, str]]:
    """The run's events as SSE frames, until it ends (``modes``: only these stream modes)."""
    runs = services.runs
    finished = False
    try:
        while True:
            batch = await runs.read_events(run_id, after, block_ms=BLOCK_MS)
            for entry_id, event, raw in batch:
                after = entry_id
                frame_id = entry_id if resumable else None
                if event == "queued":
                    continue
                if event == "started":
                    attempt = json.loads(raw or "{}").get("attempt", 1)
                    data = json.dumps({"run_id": run_id, "attempt": attempt})
                    yield _frame("metadata", data, frame_id)
                    continue
                if event in ENDINGS:
                    if event == "failed" and await runs.read_events(run_id, after):
                        continue  # resumed since: more events follow
                    finished = True
                    data = _error_data(raw) if event == "failed" else "null"
                    yield _frame(ENDINGS[event], data, frame_id)
                    return
                if modes and event.split("|", 1)[0] not in modes:
                    continue
                yield _frame(event, shown(raw, thread_key), frame_id)
            if not batch:
                record = await runs.get(run_id)
                if record is None or record.get("status") in TERMINAL:
                    if record is not None and await runs.read_events(run_id, after):
                        continue
                    # finished, but its worker has not released the thread yet (it sends the
                    # terminal event once it has): a client that saw `end` must not find the
                    # thread still busy
                    if record is not None and await services.sessions.holds(thread_key, run_id):
                        continue
                    finished = True
                    if record is not None and record.get("status") == "failed":
                        message = {
                            "error_kind": record.get("error_kind"),
                            "error": record.get("error"),
                        }
                        yield _frame("error", _error_data(json.dumps(message)), None)
                    else:
                        yield _frame("end", "null", None)
                    return
    finally:
        if cancel_on_disconnect and not finished:
            _cancel_later(services, run_id, thread_key)


async def thread_stream(
    services: Services, thread_key: str, modes: set[str] | None
) -> AsyncIterator[dict[str, str]]:
    """The events of the thread's runs, from now until it has no run left: the running run's
    new events, then each queued run's, in order (each starts with its ``metadata``)."""
    first = True
    while True:
        active = await services.runs.active_run_ids(thread_key)
        if not active:
            yield _frame("end", "null", None)
            return
        run_id = active[0]
        after = await services.runs.last_event_id(run_id) if first else "0-0"
        first = False
        async for frame in event_stream(services, run_id, thread_key, after=after, modes=modes):
            if frame["event"] != "end":
                yield frame
        await services.runs.settle_if_over(run_id, thread_key)


def _cancel_later(services: Services, run_id: str, thread_key: str) -> None:
    """The client left a run that should stop with it (``on_disconnect='cancel'``)."""

    async def cancel() -> None:
        await cancel_run(services, run_id, thread_key, "interrupt")

    task = asyncio.create_task(cancel())
    services.background.add(task)
    task.add_done_callback(services.background.discard)


async def output_of(services: Services, run_id: str, thread_key: str) -> bytes:
    """A finished run's output: its final values (with ``__interrupt__`` when it stopped at
    an interrupt), or ``{"__error__": {...}}``; the thread's values when none was stored."""
    record = await services.runs.get(run_id)
    if record is not None and record.get("output"):
        return shown(record["output"], thread_key).encode()
    if record is not None and record.get("status") == "failed":
        error = {"error": record.get("error_kind") or "Error", "message": record.get("error")}
        return dumpb({"__error__": error})
    snapshot = await services.graph.aget_state({"configurable": {"thread_id": thread_key}})
    return shown(dumpb(jsonable(snapshot.values or {})).decode(), thread_key).encode()


async def wait_until_done(services: Services, run_id: str, thread_key: str) -> None:
    """Block until the run is over: its terminal event was sent (the worker sends it once the
    thread is settled), or its record is terminal and the run no longer holds the thread (a
    worker that died in between), or the run is gone."""
    after = "0-0"
    while True:
        batch = await services.runs.read_events(run_id, after, block_ms=BLOCK_MS)
        if batch:
            after = batch[-1][0]
            if any(event in TERMINAL for _, event, _ in batch):
                return
        record = await services.runs.get(run_id)
        if record is None:
            return
        if (
            record.get("status") in TERMINAL
            and not (thread_key and await services.sessions.holds(thread_key, run_id))
            and not await services.runs.read_events(run_id, after)
        ):
            return


def wait_body(
    services: Services,
    run_id: str,
    thread_key: str,
    *,
    cancel_on_disconnect: bool = False,
) -> AsyncIterator[bytes]:
    """A JSON body that arrives when the run ends: a newline every few seconds until then
    (JSON parsers skip leading whitespace), so proxies keep the connection open."""

    async def body() -> AsyncIterator[bytes]:
        waiter = asyncio.create_task(wait_until_done(services, run_id, thread_key))
        finished = False
        try:
            while True:
                done, _ = await asyncio.wait({waiter}, timeout=BLOCK_MS / 1000)
                if done:
                    waiter.result()
                    break
                yield b"\n"
            finished = True
            yield await output_of(services, run_id, thread_key)
        finally:
            waiter.cancel()
            if cancel_on_disconnect and not finished:
                _cancel_later(services, run_id, thread_key)

    return body()
