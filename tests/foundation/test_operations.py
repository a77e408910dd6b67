"""An operation is defined once: the registry lists it with its schemas, an agent binds it as a
tool (the scripted model calls it and sees its result), and a missing engine is one error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.contract.context import AgentServices
from config import load_settings
from tests.support.scripted import FixedFactory, ScriptedChatModel
from tools.operations import (
    Arguments,
    EngineNotOpen,
    NotFound,
    OperationContext,
    OperationError,
    OperationRegistry,
    operation,
)


@dataclass
class Notes:
    """A toy engine: notes per owner."""

    rows: dict[str, list[str]] = field(default_factory=dict)


class AddNote(Arguments):
    text: str = Field(min_length=1, max_length=50)


class NoteCount(BaseModel):
    count: int


@operation("notes")
async def add_note(ctx: OperationContext, payload: AddNote) -> NoteCount:
    """Add a note for the owner."""
    notes = ctx.engine(Notes).rows.setdefault(ctx.owner, [])
    if payload.text == "forbidden":
        raise OperationError("that note is refused; write another")
    notes.append(payload.text)
    return NoteCount(count=len(notes))


def _services(engine: Notes | None) -> AgentServices:
    services = AgentServices(load_settings(), FixedFactory(None))
    if engine is not None:
        services.provide(engine)
    return services


async def test_operation_validates_and_scopes_to_its_owner() -> None:
    engine = Notes()
    services = _services(engine)
    assert (await add_note(OperationContext("alice", services), {"text": "a"})).count == 1
    assert (await add_note(OperationContext("bob", services), AddNote(text="b"))).count == 1
    assert engine.rows == {"alice": ["a"], "bob": ["b"]}
    with pytest.raises(ValidationError):
        await add_note(OperationContext("alice", services), {"text": ""})


async def test_a_missing_engine_is_one_error_naming_it() -> None:
    with pytest.raises(EngineNotOpen, match="Notes is not open") as caught:
        await add_note(OperationContext("alice", _services(None)), {"text": "a"})
    assert caught.value.status == 503


def test_registry_lists_schemas_and_refuses_duplicate_names() -> None:
    registry = OperationRegistry([add_note])
    (op,) = registry.of("notes")
    assert op.description == "Add a note for the owner."
    assert op.input_schema()["properties"]["text"]["maxLength"] == 50
    assert op.output_schema()["required"] == ["count"]
    with pytest.raises(ValueError, match="two operations"):
        registry.register(add_note)
    with pytest.raises(NotFound):
        registry.get("nope")


async def test_an_agent_calls_the_operation_as_a_tool() -> None:
    engine = Notes()
    services = _services(engine)
    model = ScriptedChatModel(
        script=[
            AIMessage("", tool_calls=[{"name": "add_note", "args": {"text": "milk"}, "id": "1"}]),
            AIMessage(
                "", tool_calls=[{"name": "add_note", "args": {"text": "forbidden"}, "id": "2"}]
            ),
            "done",
        ]
    )
    tool = add_note.as_tool(lambda runtime: OperationContext("carol", services))
    agent = create_agent(model, [tool])
    result = await agent.ainvoke({"messages": [HumanMessage("note milk")]})
    replies = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert replies == ['{"count":1}', "Error: that note is refused; write another"]
    assert engine.rows == {"carol": ["milk"]}
    assert model.bound_tools[0] == ["add_note"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=5)


class NoFields(BaseModel):
    model_config = ConfigDict(extra="forbid")


@operation("notes")
async def strict_note(ctx: OperationContext, payload: Strict) -> NoteCount:
    """Count a strict note's letters."""
    return NoteCount(count=len(payload.text))


@operation("notes")
async def whoami(ctx: OperationContext, payload: NoFields) -> NoteCount:
    """The owner's name length."""
    return NoteCount(count=len(ctx.owner))


async def test_strict_and_empty_input_models_serve_as_tools() -> None:
    """LangChain validates the injected runtime with the arguments: a model that forbids extra
    fields, or has none, still works as a tool, and the model never sees ``runtime``."""
    calls = [
        {"name": "strict_note", "args": {"text": "abc"}, "id": "1"},
        {"name": "whoami", "args": {}, "id": "2"},
        {"name": "strict_note", "args": {"text": "much too long"}, "id": "3"},
    ]
    model = ScriptedChatModel(script=[AIMessage("", tool_calls=calls), "done"])
    tools = [op.as_tool(lambda runtime: OperationContext("carol", _services(None)))
             for op in (strict_note, whoami)]  # fmt: skip
    for tool in tools:
        shown: Any = tool.tool_call_schema  # what the model sees
        assert "runtime" not in str(shown.model_json_schema())
    result = await create_agent(model, tools).ainvoke({"messages": [HumanMessage("go")]})
    replies = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert replies[:2] == ['{"count":3}', '{"count":5}']
    assert "at most 5 characters" in str(replies[2])


class Lax(BaseModel):
    text: str


async def _lax(ctx: OperationContext, payload: Lax) -> NoteCount:
    return NoteCount(count=1)


def test_an_input_model_that_ignores_unknown_fields_is_refused() -> None:
    """A misspelt argument would be dropped silently: the operation layer does not take it."""
    with pytest.raises(TypeError, match="must refuse unknown fields"):
        operation("notes")(_lax)


async def test_an_unknown_argument_is_refused_naming_the_accepted_ones() -> None:
    engine = Notes()
    services = _services(engine)
    assert add_note.input_schema()["additionalProperties"] is False
    with pytest.raises(ValidationError) as caught:
        await add_note(OperationContext("alice", services), {"text": "milk", "txt": "eggs"})
    assert add_note.invalid(caught.value) == (
        "Invalid arguments: txt: unknown field; accepted: text"
    )
    # an agent's tool call is refused too (the model reads why), and nothing is written
    call = {"name": "add_note", "args": {"text": "milk", "due": "friday"}, "id": "1"}
    model = ScriptedChatModel(script=[AIMessage("", tool_calls=[call]), "done"])
    tool = add_note.as_tool(lambda runtime: OperationContext("carol", services))
    result = await create_agent(model, [tool]).ainvoke({"messages": [HumanMessage("go")]})
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert reply.status == "error" and "due" in str(reply.content), reply.content
    assert engine.rows == {}
