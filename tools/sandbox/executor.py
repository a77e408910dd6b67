"""`Sandbox`: run a function of untrusted code on data, in bubblewrap, never in this process.

One execution: a private temporary directory receives the runner, the code, the limits and the
data (pickled by the host); bubblewrap binds it read-only at `/sandbox`; the runner confines
itself and calls the function; its JSON result comes back on a pipe; the directory is removed.
If bubblewrap is missing or cannot start here, execution is refused with `SandboxUnavailable`
(whose message names the fix) — there is no unsandboxed fallback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.sandbox.errors import SandboxOwnerBusy, SandboxUnavailable
from tools.sandbox.layout import Layout, Mode, bwrap_command, current_mode, resolve_layout
from tools.sandbox.limits import MIB, SandboxLimits
from tools.sandbox.outcome import ExecutionOutcome, SandboxStats
from tools.sandbox.process import ProcessRun, run_capped
from tools.sandbox.seccomp import compiled_filter

if TYPE_CHECKING:
    # config composes tools.*.settings: importing it here at run time would be circular.
    from config import Settings

logger = logging.getLogger(__name__)

_HERE = Path(__file__).resolve().parent
_PROBE = "def probe():\n    return 1\n"


class Sandbox:
    """Runs functions of untrusted code in a bubblewrap sandbox; safe to share across threads.

    `run` is synchronous (it blocks for at most `timeout_seconds` plus clean-up); `arun` runs it
    on a worker thread. At most `max_concurrency` executions run at once per `Sandbox`, and
    `arun` with an `owner` refuses (`SandboxOwnerBusy`) an owner that already has
    `max_per_owner` executions running or waiting.
    """

    def __init__(self, limits: SandboxLimits | None = None, *, mode: Mode | None = None) -> None:
        """`mode`: force a `layout.Mode` (tests); default: `root-drop` as root, else `userns`."""
        self.limits = limits or SandboxLimits()
        self._mode = mode
        self.stats = SandboxStats()
        self._gate = threading.BoundedSemaphore(self.limits.max_concurrency)
        self._async_gates: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()
        self._ready_lock = threading.Lock()
        self._owner_lock = threading.Lock()
        self._per_owner: dict[str, int] = {}
        self._bwrap: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Sandbox:
        """A sandbox with the limits of `settings`."""
        return cls(SandboxLimits.from_settings(settings))

    # --- availability ----------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        """How the code gets unprivileged here (see `layout.Mode`)."""
        return self._mode or current_mode()

    def ensure_available(self) -> None:
        """Check once (then cached) that the sandbox works here; raise `SandboxUnavailable`."""
        if self._bwrap is not None:
            return
        with self._ready_lock:
            if self._bwrap is not None:
                return
            self._bwrap = self._preflight()

    def status(self) -> dict[str, Any]:
        """For /health: whether code execution works, how, and if not, the fix."""
        try:
            self.ensure_available()
        except SandboxUnavailable as exc:
            return {"available": False, "error": str(exc)}
        return {
            "available": True,
            "bwrap": self._bwrap,
            "mode": self.mode.value,
            "packages": list(self.limits.packages),
        }

    def _preflight(self) -> str:
        if not sys.platform.startswith("linux"):
            raise SandboxUnavailable(
                "code execution needs Linux (bubblewrap namespaces); run the server on Linux"
            )
        bwrap = shutil.which(self.limits.bwrap_path)
        if bwrap is None:
            raise SandboxUnavailable(
                f"code execution is refused: the sandbox binary {self.limits.bwrap_path!r} is "
                "not installed. Install bubblewrap (Debian/Ubuntu: apt-get install -y "
                "bubblewrap) or point SANDBOX_BWRAP_PATH at it"
            )
        compiled_filter()
        resolve_layout(self.limits.packages)
        outcome = self._execute(bwrap, _PROBE, "probe", None, timeout=max(30.0, self._timeout()))
        if not (outcome.success and outcome.result == {"type": "int", "value": 1}):
            hint = (
                "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
                "/ user.max_user_namespaces > 0; in Docker, a seccomp/AppArmor profile that "
                "permits them) or run the server as root"
                if self.mode is Mode.USERNS
                else "check that the container allows mount, pid and network namespaces "
                "(e.g. Docker needs --security-opt seccomp=unconfined or CAP_SYS_ADMIN)"
            )
            detail = (outcome.error or "").strip()[-600:]
            raise SandboxUnavailable(
                f"code execution is refused: bubblewrap cannot start the sandbox here "
                f"({outcome.status}: {detail}). Fix: {hint}"
            )
        logger.info("sandbox ready: %s, mode %s", bwrap, self.mode.value)
        return bwrap

    # --- execution -------------------------------------------------------------------------
    def run(self, code: str, function_name: str, data: Any = None) -> ExecutionOutcome:
        """Run `function_name` of `code` in the sandbox, on `data` (passed as the first
        argument when the function takes one; `None` = call it without arguments).

        Raises `SandboxUnavailable` when the sandbox cannot run here; every failure of the
        code itself (exception, limit, timeout, output flood) is an `ExecutionOutcome`.
        """
        try:
            self.ensure_available()
        except SandboxUnavailable:
            self.stats.record_refused()
            raise
        assert self._bwrap is not None
        with self._gate:
            outcome = self._execute(self._bwrap, code, function_name, data)
        self.stats.record(outcome)
        logger.info(
            "sandbox run %s: %s in %.0f ms", function_name, outcome.status, outcome.duration_ms
        )
        return outcome

    async def arun(
        self, code: str, function_name: str, data: Any = None, *, owner: str | None = None
    ) -> ExecutionOutcome:
        """`run` on a worker thread; waiting for a free slot does not hold a thread.

        `owner` (an API key's owner id) counts against its share of the slots: an owner with
        `max_per_owner` executions already running or waiting is refused at once
        (`SandboxOwnerBusy`), so the other owners always find a slot free soon."""
        share = self.limits.max_per_owner
        if owner is None or share is None:
            return await self._arun(code, function_name, data)
        with self._owner_lock:
            held = self._per_owner.get(owner, 0)
            if held >= share:
                raise SandboxOwnerBusy(
                    f"this API key already has {held} sandboxed execution(s) running or "
                    f"waiting, its share of the sandbox (SANDBOX_MAX_PER_OWNER={share}); retry "
                    "when one has finished"
                )
            self._per_owner[owner] = held + 1
        try:
            return await self._arun(code, function_name, data)
        finally:
            with self._owner_lock:
                left = self._per_owner[owner] - 1
                if left:
                    self._per_owner[owner] = left
                else:
                    del self._per_owner[owner]

    async def _arun(self, code: str, function_name: str, data: Any) -> ExecutionOutcome:
        loop = asyncio.get_running_loop()
        gate = self._async_gates.get(loop)
        if gate is None:
            gate = self._async_gates.setdefault(
                loop, asyncio.Semaphore(self.limits.max_concurrency)
            )
        async with gate:
            return await asyncio.to_thread(self.run, code, function_name, data)

    def _timeout(self) -> float:
        return self.limits.timeout_seconds

    def _spec(self, layout: Layout, function_name: str, has_data: bool, fd: int) -> dict[str, Any]:
        limits = self.limits
        return {
            "function_name": function_name,
            "has_data": has_data,
            "result_fd": fd,
            "limits": limits.rlimits(),
            "site_dirs": ["/opt/site"],
            "preload": list(layout.preload),
            "drop_to": [limits.uid, limits.uid] if self.mode is Mode.ROOT_DROP else None,
            "describe": {
                "head": limits.head_rows,
                "max_items": limits.describe_max_items,
                "max_chars": limits.describe_max_chars,
            },
        }

    def _execute(
        self,
        bwrap: str,
        code: str,
        function_name: str,
        data: Any,
        *,
        timeout: float | None = None,
    ) -> ExecutionOutcome:
        layout = resolve_layout(self.limits.packages)
        workdir = tempfile.mkdtemp(prefix="switchyard-sandbox-")
        try:
            inputs = Path(workdir)
            shutil.copyfile(_HERE / "runner.py", inputs / "runner.py")
            shutil.copyfile(_HERE / "jsonsafe.py", inputs / "jsonsafe.py")
            (inputs / "code.py").write_text(code)
            (inputs / "seccomp.bpf").write_bytes(compiled_filter())
            if data is not None:
                with open(inputs / "data.pkl", "wb") as handle:
                    pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
            reader, writer = os.pipe()
            spec = self._spec(layout, function_name, data is not None, writer)
            (inputs / "spec.json").write_text(json.dumps(spec))
            argv = bwrap_command(
                bwrap, layout, workdir, mode=self.mode, tmp_bytes=self.limits.tmp_mb * MIB
            )
            caps = {
                "stdout": self.limits.output_bytes,
                "stderr": self.limits.output_bytes,
                "result": self.limits.result_bytes,
            }
            run = run_capped(
                argv,
                timeout=timeout or self._timeout(),
                caps=caps,  # type: ignore[arg-type]
                result_pipe=(reader, writer),
            )
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return self._interpret(run)

    def _interpret(self, run: ProcessRun) -> ExecutionOutcome:
        stdout = run.streams.get("stdout", b"").decode("utf-8", "replace")
        stderr = run.streams.get("stderr", b"").decode("utf-8", "replace")
        base: dict[str, Any] = {
            "stdout": stdout,
            "stderr": stderr,
            "duration_ms": round(run.seconds * 1000, 3),
        }
        limits = self.limits
        if run.overflow in ("stdout", "stderr"):
            return ExecutionOutcome(
                status="output_limit",
                success=False,
                error_type="OutputLimitExceeded",
                error=f"the code wrote more than {limits.output_bytes} bytes to {run.overflow}; "
                "the sandbox was stopped (limit: SANDBOX_OUTPUT_BYTES)",
                **base,
            )
        if run.overflow == "result":
            return ExecutionOutcome(
                status="output_limit",
                success=False,
                error_type="OutputLimitExceeded",
                error=f"the serialised result is larger than {limits.result_bytes} bytes "
                "(limit: SANDBOX_RESULT_BYTES)",
                **base,
            )
        if run.timed_out:
            return ExecutionOutcome(
                status="timeout",
                success=False,
                error_type="TimeoutError",
                error=f"the code ran longer than {limits.timeout_seconds:g} s (wall clock) and "
                "was stopped with everything it started (limit: SANDBOX_TIMEOUT_SECONDS)",
                **base,
            )
        payload = _parse_result(run.streams.get("result", b""))
        if payload is not None and payload.get("ok") is True:
            return ExecutionOutcome(status="ok", success=True, result=payload.get("result"), **base)
        if payload is not None:
            return ExecutionOutcome(
                status="error",
                success=False,
                error_type=str(payload.get("error_type") or "Exception")[:200],
                error=str(payload.get("error") or "")[:4000],
                traceback=str(payload.get("traceback") or "")[:8000] or None,
                **base,
            )
        if run.returncode is not None and run.returncode < 0:
            name = signal.Signals(-run.returncode).name
            return ExecutionOutcome(
                status="killed",
                success=False,
                error_type="ResourceLimitExceeded",
                error=f"the sandboxed code was killed ({name}): it exceeded a limit "
                f"({limits.cpu_seconds} s of CPU, {limits.memory_mb} MiB of memory, "
                f"{limits.max_file_mb} MiB per file)",
                **base,
            )
        return ExecutionOutcome(
            status="sandbox_error",
            success=False,
            error_type="SandboxError",
            error=f"the sandbox exited with status {run.returncode} without a result: "
            f"{stderr.strip()[-1000:] or 'no diagnostics'}",
            **base,
        )


def _parse_result(raw: bytes) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None
