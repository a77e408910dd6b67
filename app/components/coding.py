"""The coding component: ONE sandbox and ONE coding toolkit per process, for the agent and REST.

The sandbox's concurrency gate (SANDBOX_MAX_CONCURRENCY) bounds the executions of the whole
process only if everything shares it, so the coding operations (`tools/coding/operations.py`:
the agent's tools and the `/code/*` endpoints) use the toolkit provided here
(`engine(CodingToolkit)`; without it they answer EngineNotOpen). Its model is the process's
chat model (None without one: checking and running code still work).

`/health` shows the sandbox as a dependency that is not required: a missing or broken bubblewrap
refuses code execution (503 on `/code/execute`, naming the fix) but the rest of the API is
healthy. The first check runs the sandbox's probe (about a second) in a worker thread; a
failure is re-checked at most every `RECHECK_SECONDS` (a broken bwrap costs a probe run).
`/metrics` shows the tools' counters (calls, failed, errors, latency per tool), the loops'
and the sandbox's, under `coding`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from app.components.base import Component, Components
from app.routers.coding import router
from app.storage import Dependency
from tools.coding import CodingToolkit
from tools.coding.operations import OPERATIONS
from tools.sandbox import Sandbox

log = logging.getLogger(__name__)

#: Seconds a failed sandbox check is reused by /health before it is probed again.
RECHECK_SECONDS = 30.0
#: Seconds /health waits for the sandbox check (the probe goes on in its thread if slower).
HEALTH_TIMEOUT_SECONDS = 5.0


class SandboxHealth:
    """The sandbox's /health entry: probed lazily, failures re-checked at a bounded rate."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._failed: tuple[float, dict[str, Any]] | None = None
        self._probe: asyncio.Future[dict[str, Any]] | None = None

    async def _status(self) -> dict[str, Any]:
        if self._failed is not None and time.monotonic() - self._failed[0] < RECHECK_SECONDS:
            return self._failed[1]
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(asyncio.to_thread(self.sandbox.status))
        status = await asyncio.wait_for(asyncio.shield(self._probe), HEALTH_TIMEOUT_SECONDS)
        if status.get("available"):
            self._failed = None
        else:
            if self._failed is None:
                log.warning("sandbox unavailable: %s", status.get("error"))
            self._failed = (time.monotonic(), status)
        return status

    async def check(self) -> Dependency:
        """The sandbox as a /health dependency (never required)."""
        started = time.perf_counter()
        target = self.sandbox.limits.bwrap_path
        try:
            status = await self._status()
        except TimeoutError:
            status = {
                "available": False,
                "error": f"the sandbox check is still running after {HEALTH_TIMEOUT_SECONDS:g} s",
            }
        ms = round((time.perf_counter() - started) * 1000, 2)
        if status.get("available"):
            return Dependency(
                "sandbox", "ok", str(status["mode"]), ms, str(status["bwrap"]), required=False
            )
        error = str(status.get("error") or "unavailable")
        return Dependency("sandbox", "error", "bubblewrap", ms, target, error, required=False)


async def start_coding(components: Components) -> None:
    """Open the process's sandbox and coding toolkit and provide them to the agents."""
    settings = components.settings
    sandbox = Sandbox.from_settings(settings)
    toolkit = CodingToolkit.from_settings(
        settings, model=components.agents.llm("chat"), sandbox=sandbox
    )
    components.agents.provide(sandbox)
    components.agents.provide(toolkit)
    components.health.append(SandboxHealth(sandbox).check)
    components.metrics["coding"] = toolkit.metrics.snapshot


#: The coding capability's part of the app: its engine, operations and routes.
COMPONENT = Component("coding", start_coding, OPERATIONS, router)
