"""The coding operations: called directly, served as tools to an agent (the scripted model calls
them and sees their replies), their refusals (a size limit, a refused sandbox, a missing engine),
and the toolkit's counters they share."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from agents.contract.context import AgentServices
from config import load_settings
from tests.coding.test_tools import ALLOWED, GOOD, LOC_TRACEBACK
from tests.support.scripted import FixedFactory, ScriptedChatModel
from tools.coding import (
    AnalyzeErrorInput,
    CheckCodeInput,
    CodingMetrics,
    CodingToolkit,
    GenerateCodeInput,
    TestCodeInput,
)
from tools.coding.execute import CodeLimits
from tools.coding.operations import (
    OPERATIONS,
    SandboxRefused,
    check_code,
    run_code,
)
from tools.operations import EngineNotOpen, OperationContext, OperationError
from tools.sandbox import Sandbox, SandboxLimits, SandboxUnavailable


def _engines(toolkit: CodingToolkit | None) -> AgentServices:
    services = AgentServices(load_settings(), FixedFactory(None))
    if toolkit is not None:
        services.provide(toolkit)
    return services


@pytest.fixture
def toolkit(sandbox: Sandbox) -> CodingToolkit:
    return CodingToolkit(sandbox=sandbox, allowed_modules=ALLOWED, metrics=CodingMetrics())


def _json_reply(result: BaseModel) -> Any:
    """The replies the toolkit's LangChain tools gave: the result as JSON data."""
    return result.model_dump(mode="json")


async def test_operations_called_directly(toolkit: CodingToolkit) -> None:
    ctx = OperationContext("alice", _engines(toolkit))
    checked = await check_code(ctx, {"code": GOOD, "function_name": "total"})
    assert checked.is_valid and checked.issues == []
    ran = await run_code(
        ctx, TestCodeInput(code=GOOD, function_name="total", test_data=[{"amount": 2}])
    )
    assert ran.success and ran.result == {"type": "float", "value": 2.0}
    assert {op.name for op in OPERATIONS} == {
        "check_code", "run_code", "generate_code", "analyze_error"
    }  # fmt: skip
    assert all(op.capability == "coding" for op in OPERATIONS)


async def test_a_limit_is_a_422_naming_it(toolkit: CodingToolkit) -> None:
    toolkit.limits = CodeLimits(max_code_chars=10)
    ctx = OperationContext("alice", _engines(toolkit))
    for op, payload in (
        (check_code, {"code": GOOD, "function_name": "total"}),
        (run_code, {"code": GOOD, "function_name": "total"}),
    ):
        with pytest.raises(OperationError, match="Invalid request: .*CODING_MAX_CODE_CHARS") as e:
            await op(ctx, payload)
        assert e.value.status == 422 and isinstance(e.value.__cause__, ValueError)


async def test_a_missing_engine_is_engine_not_open() -> None:
    ctx = OperationContext("alice", _engines(None))
    payloads: dict[str, dict[str, Any]] = {
        "check_code": {"code": GOOD, "function_name": "total"},
        "run_code": {"code": GOOD, "function_name": "total"},
        "generate_code": {"execution_spec": {"function_name": "f", "description": "d"}},
        "analyze_error": {"error": "KeyError: 0"},
    }
    for op in OPERATIONS:
        payload = payloads[op.name]
        with pytest.raises(EngineNotOpen, match="CodingToolkit is not open") as caught:
            await op(ctx, payload)
        assert caught.value.status == 503 and caught.value.dependency == "engine"


async def test_a_refused_sandbox_is_a_503_naming_the_fix() -> None:
    box = Sandbox(SandboxLimits(bwrap_path="/nonexistent/bwrap"))
    ctx = OperationContext("alice", _engines(CodingToolkit(sandbox=box)))
    with pytest.raises(SandboxRefused, match="apt-get install -y bubblewrap") as caught:
        await run_code(ctx, {"code": "def f():\n    return 1\n", "function_name": "f"})
    assert caught.value.status == 503 and caught.value.dependency == "sandbox"
    assert isinstance(caught.value.__cause__, SandboxUnavailable)
    assert str(caught.value).endswith("GET /health shows the sandbox's state.")
    # served as a tool, the refusal is the model's error message
    (reply,) = await _served(
        ctx, [("run_code", {"code": "def f():\n    return 1\n", "function_name": "f"})]
    )
    assert reply.startswith("Error: ") and "bubblewrap" in reply


async def _served(ctx: OperationContext, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The replies of the operations, served as tools, to the model's calls (in order)."""
    tools = [op.as_tool(lambda runtime: ctx, render=_json_reply) for op in OPERATIONS]
    script: list[Any] = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": str(i)}])
        for i, (name, args) in enumerate(calls)
    ]
    model = ScriptedChatModel(script=[*script, "done"])
    result = await create_agent(model, tools).ainvoke({"messages": [HumanMessage("go")]})
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


async def test_operations_as_tools_have_the_schemas_and_answer(toolkit: CodingToolkit) -> None:
    ctx = OperationContext("alice", _engines(toolkit))
    tools = {t.name: t for t in (op.as_tool(lambda runtime: ctx) for op in OPERATIONS)}
    assert set(tools) == {"generate_code", "check_code", "run_code", "analyze_error"}
    assert _shown(tools["generate_code"]) == _schema(GenerateCodeInput)
    assert _shown(tools["analyze_error"]) == _schema(AnalyzeErrorInput)
    assert _shown(tools["check_code"]) == _schema(CheckCodeInput)
    assert _shown(tools["run_code"]) == _schema(TestCodeInput)
    replies = await _served(
        ctx,
        [
            ("check_code", {"code": GOOD, "function_name": "total"}),
            (
                "run_code",
                {
                    "code": GOOD,
                    "function_name": "total",
                    "test_data": [{"amount": 2}, {"amount": 3}],
                },
            ),
            ("analyze_error", {"error": LOC_TRACEBACK}),
            ("generate_code", {"execution_spec": {"function_name": "total", "description": "sum"}}),
        ],
    )
    checked, ran, analysis, generated = (json.loads(r) for r in replies)
    assert checked == {"is_valid": True, "issues": []}
    assert ran["success"] and ran["result"] == {"type": "float", "value": 5.0}
    assert analysis["error_type"] == "KeyError"
    assert generated["success"] is False and "needs a chat model" in generated["message"]
    snapshot = toolkit.metrics.snapshot()["tools"]
    assert {name: s["calls"] for name, s in snapshot.items()} == {
        "analyze_error": 1, "check_code": 1, "generate_code": 1, "test_code": 1
    }  # fmt: skip
    assert snapshot["generate_code"]["failed"] == 1


async def test_run_code_counts_against_the_callers_sandbox_share(sandbox: Sandbox) -> None:
    # the caller's owner reaches the sandbox: an owner without a free slot is refused (429)
    box = Sandbox(replace(sandbox.limits, max_per_owner=0))
    ctx = OperationContext("alice", _engines(CodingToolkit(sandbox=box)))
    with pytest.raises(OperationError) as caught:
        await run_code(ctx, {"code": "def f():\n    return 1\n", "function_name": "f"})
    assert caught.value.status == 429


def _shown(tool: Any) -> dict[str, Any]:
    """What the model sees of a tool's arguments."""
    schema: dict[str, Any] = tool.tool_call_schema.model_json_schema()
    return {"properties": schema["properties"], "required": schema.get("required", [])}


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"properties": schema["properties"], "required": schema.get("required", [])}
