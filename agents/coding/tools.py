"""The coding agent's tools: the coding operations, fed from and recorded in the agent's state.

The four tools are the operations of `tools/coding/operations.py` (same names but `test_code`
for `run_code`, same descriptions), with agent glue that `Operation.as_tool` cannot give: the
model passes only what it decides (issues to fix, a spec from chat); the spec, the current code
and the test data come from the state (`ToolRuntime`), so the model never copies data or code
into arguments, and code changes only through `generate_code` — the one counted, bounded step.
Each tool answers with a `Command` that records its findings in the state and a `ToolMessage`
(JSON) for the model. The toolkit is found when a tool runs (`Engines.engine`): a coding engine
that is not open is an error message to the model, like any refused operation.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.types import Command
from pydantic import Field, ValidationError

from agents.coding.state import Attempt, code_key
from tools.coding.execute import data_summary
from tools.coding.operations import analyze_error as analyze_error_op
from tools.coding.operations import check_code as check_code_op
from tools.coding.operations import generate_code as generate_code_op
from tools.coding.operations import run_code as run_code_op
from tools.coding.schemas import (
    AnalyzeErrorInput,
    CheckCodeInput,
    ExecutionSpec,
    GenerateCodeInput,
    TestCodeInput,
    TestCodeOutput,
)
from tools.coding.toolkit import CodingToolkit
from tools.operations import (
    EngineNotOpen,
    Engines,
    OpenEngines,
    Operation,
    OperationContext,
    OperationError,
)
from tools.sandbox import SandboxOwnerBusy

MAX_MESSAGE_CHARS = 6000
#: The runtime the tools get. Parameterised so that its `context` may be any run context: bare
#: `ToolRuntime` means `ToolRuntime[None, ...]`, and pydantic then warns on every tool call when
#: the agent runs inside the Switchyard graph (whose context is the `RunContext`).
AnyToolRuntime = ToolRuntime[Any, Any]


def _reply(
    runtime: AnyToolRuntime,
    name: str,
    payload: dict[str, Any],
    update: dict[str, Any] | None = None,
    *,
    status: Literal["success", "error"] = "success",
) -> Command[Any]:
    content = json.dumps(payload, ensure_ascii=False, default=str)
    if len(content) > MAX_MESSAGE_CHARS:
        content = content[: MAX_MESSAGE_CHARS - 20] + "... (truncated)"
    message = ToolMessage(
        content=content, tool_call_id=runtime.tool_call_id or "", name=name, status=status
    )
    return Command(update={**(update or {}), "messages": [message]})


def engines_of(source: CodingToolkit | Engines) -> Engines:
    """Where the tools find the toolkit: the given one, or the process's engines."""
    return OpenEngines(source) if isinstance(source, CodingToolkit) else source


def _described(op: Operation[Any, Any], note: str = "") -> str:
    return " ".join(op.description.split()) + note


def _caller(runtime: AnyToolRuntime, engines: Engines) -> OperationContext:
    """The tool call's caller: the run's owner (its sandbox share), the engines."""
    owner = getattr(runtime.context, "owner", None)
    return OperationContext(owner=owner if isinstance(owner, str) else "", engines=engines)


def _cause(exc: OperationError) -> BaseException:
    """What the model is told of a refusal: the engine's own error, as before operations."""
    return exc.__cause__ or exc


def runtime_error_text(output: TestCodeOutput) -> str | None:
    """The state's `runtime_error` of a failed run: type, message, traceback."""
    if output.success:
        return None
    # a blank message still reads "Kind: ..." (the fix loop and the model look for the kind)
    message = (output.error or "").strip() or "(no message)"
    text = f"{output.error_type or 'Error'}: {message}"
    if output.traceback:
        text += "\n\n" + output.traceback.strip()
    return text


def agent_tools(source: CodingToolkit | Engines) -> list[BaseTool]:
    """The four tools for the coding agent (see the module docstring); `source` is the toolkit
    or the engines it is found in when a tool runs."""
    engines = engines_of(source)

    @tool("generate_code", description=_described(generate_code_op))
    async def generate_code(
        runtime: AnyToolRuntime,
        issues_to_fix: Annotated[
            list[str],
            Field(max_length=50, description="Problems of the current code to fix (retries)."),
        ] = [],  # noqa: B006 (the schema's default; never mutated)
        function_name: Annotated[
            str | None, Field(description="Only without a spec (chat): the function's name.")
        ] = None,
        description: Annotated[
            str | None, Field(description="Only without a spec (chat): what it must do.")
        ] = None,
    ) -> Command[Any]:
        state = runtime.state
        bound = int(state.get("max_iterations") or 1)
        done = int(state.get("iteration_count") or 0)
        if done >= bound:
            return _reply(
                runtime,
                "generate_code",
                {"success": False, "message": f"the bound of {bound} generations is reached"},
                status="error",
            )
        update: dict[str, Any] = {}
        raw_spec = state.get("execution_spec")
        if raw_spec is None and function_name and description:
            raw_spec = {"function_name": function_name, "description": description}
            update["execution_spec"] = raw_spec
        try:
            spec = ExecutionSpec.model_validate(raw_spec)
        except ValidationError as exc:
            return _reply(
                runtime,
                "generate_code",
                {
                    "success": False,
                    "message": f"no usable spec: give function_name and "
                    f"description ({exc.error_count()} problem(s))",
                },
                status="error",
            )
        previous = state.get("generated_code") or None
        issues = list(issues_to_fix) or _known_issues(state)
        try:
            toolkit = engines.engine(CodingToolkit)
        except EngineNotOpen as exc:
            return _reply(
                runtime, "generate_code", {"success": False, "message": str(exc)}, status="error"
            )
        # the operation's input has no data summary: the agent's prompt gets one from the state
        summary = data_summary(state.get("test_data"), toolkit.limits)
        output = await toolkit.generate(
            GenerateCodeInput(execution_spec=spec, previous_code=previous, issues_to_fix=issues),
            data_summary=summary,
        )
        update["iteration_count"] = 1
        payload: dict[str, Any] = {
            "success": output.success,
            "message": output.message,
            "iteration": done + 1,
            "generations_left": bound - done - 1,
        }
        if output.success:
            payload["code"] = output.code
            update.update(
                generated_code=output.code,
                code_issues=[],
                runtime_error=None,
                execution_result=None,
                is_code_valid=False,
                attempts={code_key(output.code): Attempt(code=output.code, iteration=done + 1)},
            )
        return _reply(
            runtime,
            "generate_code",
            payload,
            update,
            status="success" if output.success else "error",
        )

    @tool("check_code", description=_described(check_code_op, " Works on the current code."))
    async def check_code(runtime: AnyToolRuntime) -> Command[Any]:
        state = runtime.state
        code, name = _current(state)
        if not code or not name:
            return _reply(
                runtime, "check_code", {"error": "no code yet: call generate_code"}, status="error"
            )
        try:
            output = await check_code_op(
                _caller(runtime, engines), CheckCodeInput(code=code, function_name=name)
            )
        except OperationError as exc:
            return _reply(runtime, "check_code", {"error": str(_cause(exc))}, status="error")
        rendered = [issue.render() for issue in output.issues]
        errors = sum(issue.severity == "error" for issue in output.issues)
        attempt = Attempt(
            code=code, checked=True, static_ok=output.is_valid, issues=rendered, error_count=errors
        )
        return _reply(
            runtime,
            "check_code",
            {"is_valid": output.is_valid, "issues": rendered},
            {"code_issues": rendered, "attempts": {code_key(code): attempt}},
        )

    @tool("test_code", description=_described(run_code_op, " Works on the current code."))
    async def test_code(runtime: AnyToolRuntime) -> Command[Any]:
        state = runtime.state
        code, name = _current(state)
        if not code or not name:
            return _reply(
                runtime, "test_code", {"error": "no code yet: call generate_code"}, status="error"
            )
        data = state.get("test_data")
        if data is None:
            return _reply(
                runtime,
                "test_code",
                {"skipped": "no test data was given; check_code alone decides"},
            )
        try:
            output = await run_code_op(
                _caller(runtime, engines),
                TestCodeInput(code=code, function_name=name, test_data=data),
            )
        except ValidationError as exc:
            output = TestCodeOutput(success=False, error=str(exc), error_type=type(exc).__name__)
        except OperationError as exc:
            cause = _cause(exc)
            if isinstance(cause, SandboxOwnerBusy):
                raise cause from None  # the run's owner is over its share: not the code's error
            output = TestCodeOutput(
                success=False, error=str(cause), error_type=type(cause).__name__
            )
        error = runtime_error_text(output)
        attempt = Attempt(
            code=code,
            tested=True,
            test_ok=output.success,
            runtime_error=error,
            execution_result=output.result,
        )
        payload = output.model_dump(
            mode="json", include={"success", "result", "error", "error_type", "stdout"}
        )
        return _reply(
            runtime,
            "test_code",
            payload,
            {
                "runtime_error": error,
                "execution_result": output.result,
                "attempts": {code_key(code): attempt},
            },
        )

    @tool("analyze_error", description=_described(analyze_error_op, " Uses the current error."))
    async def analyze_error(runtime: AnyToolRuntime) -> Command[Any]:
        state = runtime.state
        error = state.get("runtime_error")
        if not error:
            return _reply(
                runtime,
                "analyze_error",
                {"error": "the current code has no runtime error to analyse"},
                status="error",
            )
        try:
            output = await analyze_error_op(
                _caller(runtime, engines),
                AnalyzeErrorInput(code=state.get("generated_code") or "", error=error[-20_000:]),
            )
        except OperationError as exc:
            return _reply(runtime, "analyze_error", {"error": str(exc)}, status="error")
        return _reply(runtime, "analyze_error", output.model_dump(mode="json"))

    return [generate_code, check_code, test_code, analyze_error]


def _current(state: Any) -> tuple[str, str | None]:
    spec = state.get("execution_spec") or {}
    return state.get("generated_code") or "", spec.get("function_name")


def _known_issues(state: Any) -> list[str]:
    """Without issues from the model, the current code's own findings."""
    issues = list(state.get("code_issues") or [])
    error = state.get("runtime_error")
    if error:
        issues.append(f"it raised: {error.splitlines()[0][:500]}")
    return issues[:20]
