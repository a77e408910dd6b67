"""`CodingToolkit`: the four coding tools over their dependencies (model, sandbox, limits).

Built once per process by the coding component (`CodingToolkit.from_settings(settings,
model=..., sandbox=...)`), it is the engine of the coding operations (`tools/coding/operations.py`:
what REST routes, agents and MCP clients call): its typed entry points `check`, `test`,
`generate` and `analyze` raise `ValueError` when a request breaks a configured limit and
`SandboxUnavailable` when code execution is refused here; /metrics shows `metrics.snapshot()`.
Every call is logged and counted (tool name, status, duration).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import get_runtime
from pydantic import BaseModel

from tools.coding.diagnose import analyze_error
from tools.coding.execute import CodeLimits, check_code_size, execute_code
from tools.coding.generate import generate_code
from tools.coding.metrics import CodingMetrics, ToolStatus
from tools.coding.schemas import (
    AnalyzeErrorInput,
    AnalyzeErrorOutput,
    CheckCodeInput,
    CheckCodeOutput,
    GenerateCodeInput,
    GenerateCodeOutput,
    TestCodeInput,
    TestCodeOutput,
)
from tools.coding.static_check import check_code
from tools.sandbox import Sandbox
from tools.sandbox.layout import allowed_import_names

if TYPE_CHECKING:
    # config composes tools.*.settings: importing it here at run time would be circular.
    from config import Settings

Out = TypeVar("Out", bound=BaseModel)


def _run_owner() -> str | None:
    """The owner of the graph run this tool call is part of (its runtime context's `owner`),
    or None outside a run: the agent's tool calls count against their key's sandbox share."""
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a runnable's context
        return None
    owner = getattr(getattr(runtime, "context", None), "owner", None)
    return owner if isinstance(owner, str) and owner else None


@dataclass
class CodingToolkit:
    """The coding tools' dependencies and their typed, measured entry points."""

    sandbox: Sandbox
    model: BaseChatModel | None = None
    limits: CodeLimits = field(default_factory=CodeLimits)
    lint_timeout: float = 10.0
    allowed_modules: frozenset[str] | None = None
    metrics: CodingMetrics = field(default_factory=CodingMetrics)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        model: BaseChatModel | None = None,
        sandbox: Sandbox | None = None,
        metrics: CodingMetrics | None = None,
    ) -> CodingToolkit:
        """A toolkit configured by `settings`. The sandbox's stats join the metrics."""
        box = sandbox or Sandbox.from_settings(settings)
        return cls(
            sandbox=box,
            model=model,
            limits=CodeLimits.from_settings(settings),
            lint_timeout=settings.coding.lint_timeout_seconds,
            allowed_modules=allowed_import_names(tuple(settings.sandbox.packages)),
            metrics=metrics or CodingMetrics(extra=lambda: {"sandbox": box.stats.snapshot()}),
        )

    async def _measured(
        self, tool: str, call: Awaitable[Out], positive: Callable[[Out], bool]
    ) -> Out:
        started = time.perf_counter()
        try:
            result = await call
        except Exception:
            self.metrics.record_tool(tool, "error", (time.perf_counter() - started) * 1000)
            raise
        status: ToolStatus = "ok" if positive(result) else "failed"
        self.metrics.record_tool(tool, status, (time.perf_counter() - started) * 1000)
        return result

    # --- typed entry points ------------------------------------------------------------------
    async def generate(
        self, request: GenerateCodeInput, *, data_summary: str | None = None
    ) -> GenerateCodeOutput:
        """Generate the function with the model (refused, with the reason, without one)."""
        call = generate_code(
            self.model,
            request.execution_spec,
            request.previous_code,
            request.issues_to_fix,
            data_summary=data_summary,
        )
        return await self._measured("generate_code", call, lambda out: out.success)

    async def check(self, request: CheckCodeInput) -> CheckCodeOutput:
        """Check the code statically (no execution). `ValueError` if it is too long."""
        check_code_size(request.code, self.limits)
        call = asyncio.to_thread(
            check_code,
            request.code,
            request.function_name,
            allowed_modules=self.allowed_modules,
            lint_timeout=self.lint_timeout,
        )
        return await self._measured("check_code", call, lambda out: out.is_valid)

    async def test(self, request: TestCodeInput, *, owner: str | None = None) -> TestCodeOutput:
        """Run the function in the sandbox on the test data. `ValueError` for oversized code or
        data; `SandboxUnavailable` when execution is refused here; `SandboxOwnerBusy` when
        `owner` already uses its share of the sandbox (default: the run's owner, when called
        inside a graph run)."""
        call = execute_code(
            self.sandbox,
            request.code,
            request.function_name,
            request.test_data,
            self.limits,
            owner=owner or _run_owner(),
        )
        return await self._measured("test_code", call, lambda out: out.success)

    async def analyze(self, request: AnalyzeErrorInput) -> AnalyzeErrorOutput:
        """Analyse a runtime error (model when configured, else the traceback rules)."""
        call = analyze_error(request.code, request.error, request.error_type, model=self.model)
        return await self._measured("analyze_error", call, lambda out: True)
