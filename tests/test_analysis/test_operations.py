"""The ``analyze_tests`` operation: the rules-only analysis of given files, called directly and
served as a tool; its refusals carry the analysis API's status; a missing engine is one error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agents.contract.context import AgentServices
from config import Settings
from tests.support.scripted import FixedFactory, ScriptedChatModel
from tools.operations import EngineNotOpen, OperationContext, OperationError
from tools.test_analysis.filework import FileWork
from tools.test_analysis.operations import OPERATIONS, AnalyzeTestsInput, analyze_tests
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.schemas import AnalysisConfig

SMELLY = """
import time


def test_nothing():
    pass


def test_waits():
    time.sleep(1)
    assert 1 + 1 == 2
"""


def _ctx(engine: FileWork | None, settings: Settings | None = None) -> OperationContext:
    services = AgentServices(settings or Settings(_env_file=None), FixedFactory(None))
    if engine is not None:
        services.provide(engine)
    return OperationContext("alice", services)


def _engine(**settings: Any) -> FileWork:
    return FileWork.from_settings(Settings(_env_file=None, **settings))


async def test_called_directly_it_is_the_rules_pipeline() -> None:
    files = [{"path": "tests/test_x.py", "content": SMELLY}]
    result = await analyze_tests(_ctx(_engine()), {"files": files})
    smells = {issue.smell for issue in result.issues}
    assert {"empty-test", "sleepy-test"} <= smells
    assert result.files[0].path == "tests/test_x.py" and result.files[0].tests == 2
    reference = analyze_files(files, AnalysisConfig(), cache=None)
    assert [i.model_dump() for i in result.issues] == [i.model_dump() for i in reference.issues]
    # the payload's config overrides the deployment's settings field by field
    ignored = await analyze_tests(
        _ctx(_engine()),
        AnalyzeTestsInput.model_validate(
            {"files": files, "config": {"ignore": ["sleepy-test"]}}
        ),  # fmt: skip
    )
    assert "sleepy-test" not in {issue.smell for issue in ignored.issues}
    assert [op.name for op in OPERATIONS] == ["analyze_tests"]


async def test_refusals_carry_the_api_status() -> None:
    ctx = _ctx(_engine(max_files=1))
    with pytest.raises(OperationError, match="unsafe|escapes|\\.\\.") as unsafe:
        await analyze_tests(ctx, {"files": [{"path": "../etc/passwd", "content": "x = 1"}]})
    assert unsafe.value.status == 400
    two = [{"path": f"tests/test_{i}.py", "content": "x = 1"} for i in range(2)]
    with pytest.raises(OperationError, match="limit is 1") as limit:
        await analyze_tests(ctx, {"files": two})
    assert limit.value.status == 413
    with pytest.raises(OperationError, match="invalid config") as config:
        await analyze_tests(ctx, {"files": two[:1], "config": {"profile": "nope"}})
    assert config.value.status == 422


async def test_a_missing_engine_is_engine_not_open() -> None:
    with pytest.raises(EngineNotOpen, match="FileWork is not open") as caught:
        await analyze_tests(_ctx(None), {"files": [{"path": "t.py", "content": "x = 1"}]})
    assert caught.value.status == 503


async def test_served_as_a_tool() -> None:
    ctx = _ctx(_engine())
    tool = analyze_tests.as_tool(lambda runtime: ctx)
    call = {"files": [{"path": "tests/test_x.py", "content": SMELLY}]}
    unsafe = {"files": [{"path": "/etc/passwd", "content": "x = 1"}]}
    model = ScriptedChatModel(
        script=[
            AIMessage("", tool_calls=[{"name": "analyze_tests", "args": call, "id": "1"}]),
            AIMessage("", tool_calls=[{"name": "analyze_tests", "args": unsafe, "id": "2"}]),
            "done",
        ]
    )
    result = await create_agent(model, [tool]).ainvoke({"messages": [HumanMessage("check")]})
    found, refused = [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]
    assert {"empty-test", "sleepy-test"} <= {i["smell"] for i in json.loads(found)["issues"]}
    # the engine's refusal is the model's error message
    assert refused.startswith("Error: ") and "/etc/passwd" in refused
