"""The coding loop through the real `langchain-openai` client against the stub OpenAI server:
tool calls scripted like a model's, code run in the real sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI

from agents.coding import build_coding_agent, build_coding_graph, recursion_limit_for, run_coding
from config import Settings
from tests.coding.scripted_coder import ScriptedCoder, fenced
from tests.support.stub_openai import StubOpenAI, StubReply
from tools.coding import CodingMetrics, CodingToolkit, TestData
from tools.sandbox import Sandbox
from tools.sandbox.layout import allowed_import_names

SPEC = {
    "function_name": "top_amount",
    "description": "Return the first amount above 1.8",
    "parameters": {"df": "pandas DataFrame with columns region, amount"},
    "returns": "float",
}
DATA: TestData = {"region": ["north", "south", "east"], "amount": [1.5, 2.0, 3.5]}

RAISES = '''
import pandas as pd


def top_amount(df: pd.DataFrame) -> float:
    """The first amount above 1.8."""
    if "amount" not in df.columns:
        raise ValueError("no amount column")
    big = df[df["amount"] > 1.8]
    return float(big.loc[0, "amount"])
'''
FIXED = RAISES.replace('big.loc[0, "amount"]', 'big["amount"].iloc[0]')


def _settings(**overrides: Any) -> Settings:
    return Settings(_env_file=None, llm_provider="none", **overrides)


@pytest.fixture
async def make_toolkit(
    sandbox: Sandbox, stub_openai: StubOpenAI
) -> AsyncIterator[Callable[..., CodingToolkit]]:
    """A toolkit over the test sandbox and, given a script, the real OpenAI client on the stub
    (with an HTTP client of this test's event loop)."""
    http = httpx.AsyncClient()

    def build(coder: ScriptedCoder | None) -> CodingToolkit:
        model = None
        if coder is not None:
            stub_openai.responder = coder
            model = ChatOpenAI(
                base_url=stub_openai.base_url,
                api_key="sk-t",
                model="stub-model",
                max_retries=0,
                http_async_client=http,
            )
        return CodingToolkit(
            sandbox=sandbox,
            model=model,
            allowed_modules=allowed_import_names(("pandas", "numpy")),
            metrics=CodingMetrics(),
        )

    yield build
    await http.aclose()


async def test_first_code_raises_then_the_fix_passes(make_toolkit: Callable[..., Any]) -> None:
    coder = ScriptedCoder(generations=[fenced(RAISES), fenced(FIXED)])
    toolkit = make_toolkit(coder)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=4
    )
    assert result.is_code_valid and result.iteration_count == 2
    assert 'big["amount"].iloc[0]' in result.generated_code
    assert result.runtime_error is None
    assert result.execution_result == {"type": "float", "value": 2.0}
    # The retry asked to fix what the analysis found.
    assert coder.generation_calls == 2
    assert "iloc" in coder.generation_requests[1] and "big.loc[0" in coder.generation_requests[1]
    tools = toolkit.metrics.snapshot()["tools"]
    assert tools["test_code"] == {**tools["test_code"], "calls": 2, "failed": 1, "errors": 0}
    assert tools["analyze_error"]["calls"] == 1 and tools["generate_code"]["calls"] == 2
    assert toolkit.metrics.snapshot()["runs"] == {
        "total": 1, "valid": 1, "iterations": 2, "bound_reached": 0
    }  # fmt: skip


async def test_code_that_never_passes_stops_at_the_bound(make_toolkit: Callable[..., Any]) -> None:
    coder = ScriptedCoder(generations=[fenced(RAISES)])
    toolkit = make_toolkit(coder)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=3
    )
    assert result.iteration_count == 3 and coder.generation_calls == 3
    assert not result.is_code_valid
    assert result.generated_code.strip() == RAISES.strip()
    assert result.runtime_error is not None and result.runtime_error.startswith("KeyError: 0")
    assert 'big.loc[0, "amount"]' in result.runtime_error
    assert result.execution_result is None
    assert toolkit.metrics.snapshot()["runs"]["bound_reached"] == 1


async def test_bound_holds_against_parallel_generations(make_toolkit: Callable[..., Any]) -> None:
    greedy = StubReply(tool_calls=[("generate_code", {}), ("generate_code", {})])
    coder = ScriptedCoder(generations=[fenced(RAISES)], first_steps=[greedy, greedy, greedy])
    toolkit = make_toolkit(coder)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=2
    )
    assert result.iteration_count == 2 and coder.generation_calls == 2
    assert not result.is_code_valid


async def test_malformed_model_output(make_toolkit: Callable[..., Any]) -> None:
    # The agent calls a tool that does not exist and passes a wrong argument type; the code
    # generator answers prose without code first. The loop recovers and the fix passes.
    coder = ScriptedCoder(
        generations=["I would use pandas for this, it is a great library.", fenced(FIXED)],
        first_steps=[
            StubReply(tool_calls=[("run_python", {"code": "print(1)"})]),
            StubReply(tool_calls=[("generate_code", {"issues_to_fix": "not a list"})]),
        ],
    )
    toolkit = make_toolkit(coder)
    agent = build_coding_agent(toolkit.model, toolkit, default_max_iterations=3)
    result = await run_coding(
        SPEC,
        DATA,
        model=toolkit.model,
        toolkit=toolkit,
        settings=_settings(),
        max_iterations=3,
        agent=agent,
    )
    assert result.is_code_valid and result.iteration_count == 2
    assert toolkit.metrics.snapshot()["tools"]["generate_code"]["failed"] == 1


async def test_model_that_never_writes_code(make_toolkit: Callable[..., Any]) -> None:
    coder = ScriptedCoder(generations=["no code, sorry"])
    toolkit = make_toolkit(coder)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=2
    )
    assert result.generated_code == "" and result.iteration_count == 2
    assert not result.is_code_valid and result.code_issues


async def test_model_calls_are_bounded_too(make_toolkit: Callable[..., Any]) -> None:
    # A model that only ever checks: the backstop on model calls ends the run.
    coder = ScriptedCoder(
        generations=[fenced(RAISES)], always=StubReply(tool_calls=[("check_code", {})])
    )
    toolkit = make_toolkit(coder)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=1
    )
    assert result.iteration_count == 0 and result.generated_code == ""
    assert coder.agent_calls <= 5 * 1 + 2


async def test_model_failure_keeps_the_six_fields(
    make_toolkit: Callable[..., Any], stub_openai: StubOpenAI
) -> None:
    coder = ScriptedCoder(generations=[fenced(RAISES)])
    toolkit = make_toolkit(coder)
    stub_openai.fail_next(500)
    result = await run_coding(
        SPEC, DATA, model=toolkit.model, toolkit=toolkit, settings=_settings(), max_iterations=2
    )
    assert not result.is_code_valid and any("stopped early" in i for i in result.code_issues)


async def test_without_a_model_generation_is_refused(make_toolkit: Callable[..., Any]) -> None:
    toolkit = make_toolkit(None)
    result = await run_coding(SPEC, DATA, model=None, toolkit=toolkit, settings=_settings())
    assert result.generated_code == "" and result.iteration_count == 0
    assert "needs a chat model" in result.code_issues[0]


async def test_request_limits_are_checked_first(make_toolkit: Callable[..., Any]) -> None:
    toolkit = make_toolkit(None)
    with pytest.raises(ValueError, match="max_iterations"):
        await run_coding(SPEC, DATA, model=None, toolkit=toolkit, settings=_settings(),
                         max_iterations=21)  # fmt: skip
    toolkit.limits = type(toolkit.limits)(max_rows=2)
    with pytest.raises(ValueError, match="CODING_MAX_TEST_ROWS"):
        await run_coding(SPEC, DATA, model=None, toolkit=toolkit, settings=_settings())


async def test_chat_request_with_pasted_code_and_data(make_toolkit: Callable[..., Any]) -> None:
    # In chat there is no spec: the pasted code becomes the current code, the pasted JSON the
    # test data; the model tests it, fixes it, and the answer shows the working code.
    coder = ScriptedCoder(
        generations=[fenced(FIXED)],
        first_steps=[StubReply(tool_calls=[("test_code", {})])],
    )
    toolkit = make_toolkit(coder)
    graph = build_coding_graph(toolkit.model, toolkit, default_max_iterations=3)
    message = (
        f"Why does `top_amount` fail?\n```python\n{RAISES}\n```\n"
        '```json\n[{"region": "north", "amount": 1.5}, {"region": "south", "amount": 2.0}]\n```'
    )
    state = await graph.ainvoke(
        {"messages": [HumanMessage(message)]}, {"recursion_limit": recursion_limit_for(3)}
    )
    assert state["is_code_valid"] and state["iteration_count"] == 1
    assert state["execution_result"] == {"type": "float", "value": 2.0}
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage) and "iloc" in str(answer.content)
