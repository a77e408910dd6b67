"""A report of every asyncio task in the process, printed shortly before pytest-timeout ends a
test: pytest-timeout prints the threads' stacks, but a hung shutdown shows there only as an
idle event loop (`selector.poll`) and the main thread waiting on it; the tasks' stacks name
what the loop is still awaiting."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def dump_tasks() -> None:
    """Print the stack of every pending task of every event loop alive in the process."""
    loops = [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]
    print(f"\n+++ hang report: {len(loops)} event loop(s) +++", file=sys.stderr)
    for loop in loops:
        if loop.is_closed():
            continue
        try:
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        except RuntimeError:  # the set changed while read from this thread: once more
            tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        print(f"--- loop {loop!r}: {len(tasks)} pending task(s)", file=sys.stderr)
        for task in tasks:
            print(f"task {task.get_name()}: {task.get_coro()!r}", file=sys.stderr)
            task.print_stack(limit=12, file=sys.stderr)
    sys.stderr.flush()


@contextmanager
def reported_after(seconds: float) -> Iterator[None]:
    """Dump the tasks if the block is still running after `seconds` (a daemon timer)."""
    timer = threading.Timer(seconds, dump_tasks)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
