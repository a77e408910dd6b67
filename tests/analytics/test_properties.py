"""Properties of the tool set and the orchestration (hypothesis).

- every analytics tool has an input schema, a docstring and type hints;
- a new `@tool` added to the list is bound and usable without touching the orchestrator;
- any tool failure reaches the model as a formatted, bounded, credential-free error message.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.tools import tool
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from psycopg_pool import PoolTimeout
from pydantic import BaseModel, ValidationError

from agents.analytics.middleware import MAX_ERROR_CHARS, format_tool_error
from agents.analytics.react import answer_question, build_analytics_agent
from agents.analytics.tools import ANALYTICS_TOOLS
from tests.support.scripted import ScriptedChatModel
from tools.analytics.context import AnalyticsContext
from tools.analytics.frame import DataError
from tools.analytics.guard import SQLRefused
from tools.analytics.operations import ExplainChangeInput

Ctx = Callable[..., AnalyticsContext]
SLOW = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@given(st.sampled_from(ANALYTICS_TOOLS))
def test_every_tool_has_schema_docstring_and_type_hints(chosen: BaseTool) -> None:
    assert isinstance(chosen.args_schema, type) and issubclass(chosen.args_schema, BaseModel)
    assert chosen.description and len(chosen.description) > 40
    assert isinstance(chosen, StructuredTool)
    fn = chosen.coroutine
    assert fn is not None and inspect.getdoc(fn)
    hints = typing.get_type_hints(fn)
    params = inspect.signature(fn).parameters
    assert set(params) <= set(hints) and "return" in hints
    schema = chosen.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert "runtime" not in schema.get("properties", {})  # injected, never asked of the model
    for name, prop in schema.get("properties", {}).items():
        assert prop.get("description"), f"{chosen.name}.{name} has no description"


def _ids(n: int) -> str:
    return f"call_{n}"


@SLOW
@given(
    name=st.from_regex(r"[a-z][a-z_]{2,20}_tool", fullmatch=True),
    description=st.text(
        st.characters(codec="ascii", categories=["L", "N", "Zs"]), min_size=5, max_size=60
    ),
    argument=st.text(st.characters(codec="ascii", categories=["L", "N"]), max_size=20),
)
async def test_a_new_tool_is_usable_without_touching_the_orchestrator(
    make_ctx: Ctx, name: str, description: str, argument: str
) -> None:
    async def run(text: str) -> str:
        return f"{name} saw {text!r}"

    run.__doc__ = description
    new_tool = tool(name, description=description.strip() or "a tool")(run)
    model = ScriptedChatModel(script=[
        AIMessage(content="", tool_calls=[{"name": name, "args": {"text": argument},
                                           "id": _ids(1)}]),
        "done",
    ])  # fmt: skip
    agent = build_analytics_agent(model, [*ANALYTICS_TOOLS, new_tool])
    answer = await answer_question("Use the new tool", make_ctx(), agent=agent)
    assert name in model.bound_tools[0]
    reply = next(m for m in model.calls[1] if isinstance(m, ToolMessage))
    assert reply.content == f"{name} saw {argument!r}" and reply.status != "error"
    assert answer.text == "done" and answer.errors == []


class _Boom(Exception):
    pass


def _errors() -> st.SearchStrategy[BaseException]:
    message = st.text(max_size=300) | st.sampled_from([
        "connection to postgresql://owner:hunter2@db.internal:5432/app failed",
        "x" * 5000,
        "",
    ])  # fmt: skip

    def build(kind: int, text: str) -> BaseException:
        if kind == 10:
            try:
                ExplainChangeInput.model_validate({"metric": "", "period": text})
            except ValidationError as exc:
                return exc
            raise AssertionError("an empty metric must not validate")
        return [
            SQLRefused(f"SQL refused: {text}"),
            psycopg.errors.QueryCanceled(text),
            psycopg.errors.UndefinedColumn(text),
            psycopg.OperationalError(text),
            DataError(text),
            ValueError(text),
            _Boom(text),
            PoolTimeout(text),
            RuntimeError(text),
            KeyError(text),
        ][kind]

    return st.builds(build, st.integers(0, 10), message)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([t.name for t in ANALYTICS_TOOLS]), _errors())
def test_any_failure_is_formatted(tool_name: str, exc: BaseException) -> None:
    text = format_tool_error(tool_name, exc)
    assert text.startswith(f"Error in {tool_name}: ")
    assert "How to fix:" in text or len(text) == MAX_ERROR_CHARS
    assert len(text) <= MAX_ERROR_CHARS
    assert "hunter2" not in text and "Traceback" not in text


@SLOW
@given(exc=_errors())
async def test_a_failing_tool_becomes_a_message_the_run_survives(
    make_ctx: Ctx, exc: BaseException
) -> None:
    @tool("exploding_tool")
    async def exploding_tool(text: str) -> str:
        """A tool that fails."""
        raise exc

    model = ScriptedChatModel(script=[
        AIMessage(content="", tool_calls=[{"name": "exploding_tool", "args": {"text": "x"},
                                           "id": _ids(2)}]),
        "recovered",
    ])  # fmt: skip
    agent = build_analytics_agent(model, [*ANALYTICS_TOOLS, exploding_tool])
    answer = await answer_question("Try the exploding tool", make_ctx(), agent=agent)
    error = next(m for m in model.calls[1] if isinstance(m, ToolMessage))
    assert error.status == "error"
    assert str(error.content).startswith("Error in exploding_tool: ")
    assert "hunter2" not in str(error.content)
    assert answer.text == "recovered" and answer.errors == [error.content]


async def test_bad_arguments_from_the_model_get_the_same_format(make_ctx: Ctx) -> None:
    calls = [
        {"name": "root_cause_analysis_tool", "args": {"metric": "damage rate"}, "id": "c1"},
        {
            "name": "root_cause_analysis_tool",
            "args": {"metric": "damage rate", "period": "whenever"},
            "id": "c2",
        },
        {"name": "kpi_analysis_tool", "args": {"data": "r-00000000"}, "id": "c3"},
        {"name": "sql_execution_tool", "args": {"sql": "DELETE FROM analytics.sales"}, "id": "c4"},
    ]
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=calls), "done"])
    agent = build_analytics_agent(model)
    answer = await answer_question("Break things", make_ctx(), agent=agent)
    errors = {
        m.tool_call_id: str(m.content)
        for m in model.calls[1]
        if isinstance(m, ToolMessage) and m.status == "error"
    }
    assert errors["c1"].startswith("Error in root_cause_analysis_tool: invalid arguments")
    assert "period" in errors["c1"]
    assert errors["c2"].startswith(
        "Error in root_cause_analysis_tool: invalid argument: cannot read one period"
    )
    assert errors["c3"].startswith("Error in kpi_analysis_tool: bad data argument: no result")
    assert errors["c4"].startswith("Error in sql_execution_tool: SQL refused")
    assert len(answer.errors) == 4
