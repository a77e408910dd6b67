"""The program that runs INSIDE the sandbox: it confines itself, then calls the user's function.

The host never imports this module: it copies the file (with `jsonsafe.py`) into the sandbox's
read-only input directory, and bubblewrap starts it as `python -I -S /sandbox/runner.py`. It uses
only the standard library (plus the packages the sandbox allows, imported before confinement).

Order matters: everything trusted happens first (read the inputs, import the allowed packages,
load the data), then the process confines itself (rlimits, dropping root for the configured uid
when started as root, parent-death signal, the seccomp filter that denies new processes), and
only then is the user's code compiled and run. The outcome goes back as one JSON document on
a pipe the host passed in (`result_fd`, read capped); the user's prints go to stdout/stderr
(pipes, capped too).
"""

from __future__ import annotations

import ctypes
import inspect
import json
import linecache
import os
import pickle
import resource
import signal
import sys
import traceback
from typing import Any

INPUT_DIR = "/sandbox"
CODE_FILENAME = "user_code.py"

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class CpuTimeExceeded(Exception):
    """Raised in the user's code when its CPU-time limit (RLIMIT_CPU) is reached."""


def _write_result(fd: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, allow_nan=False).encode()
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.close(fd)


def _set_limits(limits: dict[str, int]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2)
    # NPROC counts processes + threads per uid; fork/exec are denied by seccomp regardless.
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["tasks"],) * 2)
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"],) * 2)
    # The soft limit sends SIGXCPU (turned into an exception below); the hard one kills.
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))


def _on_sigxcpu(signum: int, frame: Any) -> None:
    raise CpuTimeExceeded("the CPU-time limit of the sandbox was reached (an endless loop?)")


def _drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _confine(libc: ctypes.CDLL, seccomp_program: bytes) -> None:
    # A change of uid clears the parent-death signal bubblewrap set: set it again, so the code
    # dies with the sandbox's supervisor even if the pid namespace were not torn down.
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    buffer = ctypes.create_string_buffer(seccomp_program, len(seccomp_program))
    program = SockFprog(len(seccomp_program) // 8, ctypes.addressof(buffer))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")


def _hint(exc: BaseException, limits: dict[str, int]) -> str:
    """A sentence that says which sandbox rule an exception comes from, if one does."""
    if isinstance(exc, MemoryError):
        return f" (the sandbox's memory limit is {limits['memory_bytes'] // (1 << 20)} MiB)"
    if isinstance(exc, CpuTimeExceeded):
        return f" ({limits['cpu_seconds']} s of CPU)"
    if isinstance(exc, PermissionError) and exc.errno == 1:
        return " (the sandbox does not allow starting processes or privileged system calls)"
    if isinstance(exc, (ConnectionError, OSError)) and getattr(exc, "errno", None) in (
        97,  # EAFNOSUPPORT: seccomp refuses every socket family but AF_UNIX
        101,
        111,
        113,
        -2,
        -3,
    ):
        return " (the sandbox has no network)"
    if isinstance(exc, OSError) and getattr(exc, "errno", None) in (27, 28):
        return " (the sandbox's file-size / temp-space limit)"
    if isinstance(exc, OSError) and getattr(exc, "errno", None) == 30:
        return " (only /tmp is writable in the sandbox)"
    if isinstance(exc, ModuleNotFoundError):
        return " (the sandbox offers the standard library and its allowed packages only)"
    return ""


def _format_traceback(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    # Drop the runner's own frames; keep the user's code and whatever it called.
    kept = [f for f in frames if f.filename != __file__]
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(kept[-20:])
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-8000:]


def _error(exc: BaseException, limits: dict[str, int]) -> dict[str, Any]:
    message = str(exc)[:4000] or ("out of memory" if isinstance(exc, MemoryError) else "")
    message = message or type(exc).__name__
    return {
        "ok": False,
        "error_type": type(exc).__name__,
        "error": message + _hint(exc, limits),
        "traceback": _format_traceback(exc),
    }


def _call(function: Any, data: Any, has_data: bool) -> Any:
    if not has_data:
        return function()
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return function(data)
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return function(data) if positional else function()


def main() -> None:
    with open(f"{INPUT_DIR}/spec.json") as handle:
        spec = json.load(handle)
    with open(f"{INPUT_DIR}/code.py") as handle:
        code = handle.read()
    with open(f"{INPUT_DIR}/seccomp.bpf", "rb") as handle:
        seccomp_program = handle.read()
    limits: dict[str, int] = spec["limits"]
    sys.path.insert(0, INPUT_DIR)
    for site in spec["site_dirs"]:
        sys.path.append(site)
    import jsonsafe  # the copy next to this file

    for module in spec["preload"]:
        try:
            __import__(module)
        except ImportError:
            pass  # reported, with a hint, if the user's code imports it
    data = None
    if spec["has_data"]:
        with open(f"{INPUT_DIR}/data.pkl", "rb") as handle:
            data = pickle.load(handle)

    libc = ctypes.CDLL(None, use_errno=True)
    signal.signal(signal.SIGXCPU, _on_sigxcpu)
    _set_limits(limits)
    if spec.get("drop_to") is not None:
        _drop_privileges(*spec["drop_to"])
    _confine(libc, seccomp_program)
    main_pid = os.getpid()

    linecache.cache[CODE_FILENAME] = (len(code), None, code.splitlines(True), CODE_FILENAME)
    payload: dict[str, Any]
    try:
        namespace: dict[str, Any] = {"__name__": "user_code", "__file__": CODE_FILENAME}
        exec(compile(code, CODE_FILENAME, "exec"), namespace)
        function = namespace.get(spec["function_name"])
        if not callable(function):
            raise NameError(f"the code defines no function named {spec['function_name']!r}")
        value = _call(function, data, spec["has_data"])
        payload = {"ok": True, "result": jsonsafe.describe(value, **spec["describe"])}
    except BaseException as exc:  # the user's code may raise anything, SystemExit included
        if os.getpid() != main_pid:
            os._exit(1)
        try:
            payload = _error(exc, limits)
        except BaseException:
            payload = {"ok": False, "error_type": type(exc).__name__, "error": "unprintable"}
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass  # the code may have closed or replaced its streams
    _write_result(spec["result_fd"], payload)
    # Skip interpreter teardown: nothing of the user's (atexit hooks, __del__) runs after this.
    os._exit(0)


if __name__ == "__main__":
    main()
