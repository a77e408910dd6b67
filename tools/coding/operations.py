"""The coding capability's operations: check, run (in the sandbox), generate and analyse code.

Each is one typed function over the process's :class:`CodingToolkit` (the one the coding
component opened: one sandbox and one concurrency gate per process), found with
``ctx.engine(CodingToolkit)``. The REST routes of ``app/routers/coding.py`` call them; the
coding agent's state-fed tools (``agents/coding/tools.py``) call them with the current code; any
other agent or MCP client binds them with :meth:`Operation.as_tool`.

Refusals are :class:`OperationError` with the status a route answers and the message it shows:
a request over a configured limit is 422 (``Invalid request: ...``), an owner using its whole
share of the sandbox 429, a sandbox that cannot run here 503 (:class:`SandboxRefused`, naming
the fix). The exception they were made from is their ``__cause__`` (the agent's tools answer
with it, as before).
"""

from __future__ import annotations

from typing import Any

from tools.coding.execute import check_code_size
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
from tools.coding.toolkit import CodingToolkit
from tools.operations import EngineNotOpen, Operation, OperationContext, OperationError, operation
from tools.sandbox import SandboxOwnerBusy, SandboxUnavailable

CAPABILITY = "coding"


class SandboxRefused(EngineNotOpen):
    """Code execution is refused here (e.g. bubblewrap is missing): 503 naming the sandbox."""

    dependency = "sandbox"


def _invalid(exc: ValueError) -> OperationError:
    return OperationError(f"Invalid request: {exc}", status=422)


@operation(CAPABILITY, read_only=True)
async def check_code(ctx: OperationContext, payload: CheckCodeInput) -> CheckCodeOutput:
    """Check code without running it: syntax, the function exists, returns a value, handles
    errors, type hints, sandbox imports, linter findings."""
    toolkit = ctx.engine(CodingToolkit)
    try:
        return await toolkit.check(payload)
    except ValueError as exc:  # over CODING_MAX_CODE_CHARS
        raise _invalid(exc) from exc


@operation(CAPABILITY, read_only=True)
async def run_code(ctx: OperationContext, payload: TestCodeInput) -> TestCodeOutput:
    """Run the function in the sandbox on the test data (a DataFrame) and return its
    serialised result or its error."""
    toolkit = ctx.engine(CodingToolkit)
    try:
        check_code_size(payload.code, toolkit.limits)
        # the caller's owner counts against its share of the sandbox ('' = not an owner's run)
        return await toolkit.test(payload, owner=ctx.owner or None)
    except SandboxOwnerBusy as exc:
        raise OperationError(f"{exc}.", status=429) from exc
    except SandboxUnavailable as exc:
        raise SandboxRefused(f"{exc}. GET /health shows the sandbox's state.") from exc
    except ValueError as exc:  # code or test data over a configured limit
        raise _invalid(exc) from exc


@operation(CAPABILITY, read_only=True)
async def generate_code(ctx: OperationContext, payload: GenerateCodeInput) -> GenerateCodeOutput:
    """Write (or rewrite) the Python function of an execution spec with the model; give the
    previous code and the issues to fix when retrying."""
    return await ctx.engine(CodingToolkit).generate(payload)


@operation(CAPABILITY, read_only=True)
async def analyze_error(ctx: OperationContext, payload: AnalyzeErrorInput) -> AnalyzeErrorOutput:
    """Explain a runtime error of the code (traceback, failing expression, known pandas
    pitfalls) and suggest fixes."""
    return await ctx.engine(CodingToolkit).analyze(payload)


#: The coding capability's operations.
OPERATIONS: tuple[Operation[Any, Any], ...] = (check_code, run_code, generate_code, analyze_error)
