"""The OS sandbox for untrusted code: bubblewrap namespaces + rlimits + a seccomp filter.

Public API:
- `Sandbox(limits)` / `Sandbox.from_settings(settings)`: `run(code, function_name, data)` and
  `arun(...)` return an `ExecutionOutcome`; `status()` for /health; `stats.snapshot()` for
  /metrics. Execution is refused with `SandboxUnavailable` (the message names the fix) when
  bubblewrap is missing or cannot start here; never an unsandboxed fallback.
- `describe(value)`: the JSON-safe description of a value the sandbox hands back.
"""

from tools.sandbox.errors import SandboxOwnerBusy, SandboxUnavailable
from tools.sandbox.executor import Sandbox
from tools.sandbox.jsonsafe import describe
from tools.sandbox.limits import SandboxLimits
from tools.sandbox.outcome import ExecutionOutcome, ExecutionStatus

__all__ = [
    "SandboxOwnerBusy",
    "ExecutionOutcome",
    "ExecutionStatus",
    "Sandbox",
    "SandboxLimits",
    "SandboxUnavailable",
    "describe",
]
