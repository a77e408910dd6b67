"""Run one sandbox process: capped pipes read incrementally, a wall-clock deadline, group kill.

The process starts in a session of its own (`start_new_session`), so killing its process group
kills bubblewrap and its pid-1; when the pid namespace's pid-1 dies the kernel kills every
process left inside it, and `--die-with-parent` covers the rest. No `preexec_fn` is used (it is
unsafe in a threaded server); rlimits are applied by the runner inside the sandbox.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Literal

Stream = Literal["stdout", "stderr", "result"]


@dataclass
class ProcessRun:
    """What one process run produced."""

    returncode: int | None
    streams: dict[Stream, bytes] = field(default_factory=dict)
    timed_out: bool = False
    overflow: Stream | None = None
    seconds: float = 0.0


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass


def run_capped(
    argv: list[str], *, timeout: float, caps: dict[Stream, int], result_pipe: tuple[int, int]
) -> ProcessRun:
    """Run `argv`, reading stdout, stderr and the result pipe up to their caps.

    `result_pipe` is `(read_end, write_end)` of a pipe the caller created (`os.pipe()`); the
    write end is passed to the child under the same number, and both ends are closed here. The
    run stops at the first of: all pipes closed (the process and everything it started are
    done), the deadline, or a stream passing its cap (then the sandbox is killed).
    """
    reader, result_fd = result_pipe
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(result_fd,),
            start_new_session=True,
            env={},
        )
    except BaseException:
        os.close(reader)
        raise
    finally:
        os.close(result_fd)
    assert process.stdout is not None and process.stderr is not None
    run = ProcessRun(returncode=None)
    buffers: dict[Stream, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    buffers["result"] = bytearray()
    names: dict[int, Stream] = {
        process.stdout.fileno(): "stdout",
        process.stderr.fileno(): "stderr",
    }
    names[reader] = "result"
    selector = selectors.DefaultSelector()
    try:
        for fd in names:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        deadline = started + timeout
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                run.timed_out = True
                break
            for key, _ in selector.select(remaining):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                stream = names[fd]
                buffer = buffers[stream]
                room = caps[stream] - len(buffer)
                buffer += chunk[: max(room, 0)]
                if len(chunk) > room:
                    run.overflow = stream
                    break
            if run.overflow:
                break
        if run.timed_out or run.overflow:
            _kill_group(process)
        try:
            run.returncode = process.wait(timeout=max(deadline - time.monotonic(), 1.0))
        except subprocess.TimeoutExpired:
            run.timed_out = True
            _kill_group(process)
            run.returncode = process.wait()
    finally:
        if process.poll() is None:
            _kill_group(process)
            process.wait()
        selector.close()
        process.stdout.close()
        process.stderr.close()
        os.close(reader)
    run.streams = {name: bytes(data) for name, data in buffers.items()}
    run.seconds = time.monotonic() - started
    return run
