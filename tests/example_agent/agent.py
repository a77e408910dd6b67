"""The `units` agent: converts lengths ("5 km in miles"), in two stages with its own state.

Everything the capability needs is in this package, in the four places every capability has:
its engine and operation (``engine.py``, ``operations.py``: the ``tools/<cap>`` part), the
agent (this module: state, nodes, card, options, subgraph: the ``agents/<cap>`` part) and its
component with its route (``component.py``: the app part). Registering it is one line in
``graph/agents.py`` (``AgentRegistry.register(units_agent())``) and one in the component list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import Field

from agents.contract.context import (
    AgentOptions,
    AgentServices,
    RunContext,
    context_of,
    operation_context,
)
from agents.contract.messages import last_user_text
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from tests.example_agent.operations import ConvertLength, convert_length

NAME = "units"
_REQUEST = re.compile(r"([\d.]+)\s*(km|m|mi|miles|ft)\b.*?\b(km|m|mi|miles|ft)\b", re.I)


class UnitsOptions(AgentOptions):
    """Per-run options of the units agent."""

    units_digits: int | None = Field(None, ge=0, le=6, description="Decimals in the answer.")


class UnitsState(AgentState, total=False):
    """The agent's own working state (never in the root state)."""

    quantity: float | None
    """The number asked about."""
    source_unit: str | None
    """The unit it is given in."""
    target_unit: str | None
    """The unit wanted."""


def parse(state: UnitsState) -> dict[str, Any]:
    """Read the quantity and the two units from the latest message."""
    found = _REQUEST.search(last_user_text(state.get("messages", [])))
    if found is None:
        return {"quantity": None}
    value, source, target = found.groups()
    return {"quantity": float(value), "source_unit": source.lower(), "target_unit": target.lower()}


async def convert(state: UnitsState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Answer with the converted length (the capability's operation, as the run's owner)."""
    options = context_of(runtime).options(UnitsOptions)
    digits = 2 if options.units_digits is None else options.units_digits
    quantity = state.get("quantity")
    if quantity is None:
        text = "Tell me a length and two units, e.g. '5 km in miles'."
    else:
        request = ConvertLength.model_validate(
            {
                "value": quantity,
                "source": state["source_unit"] or "m",
                "target": state["target_unit"] or "m",
                "digits": digits,
            }
        )
        text = (await convert_length(operation_context(runtime), request)).text
    answer = AgentAnswer(agent=NAME, answer=text, method="rules", data={"quantity": quantity})
    return {"agent_answers": {NAME: answer}, "agent_contexts": {NAME: {"last": text}}}


def build(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
    """The agent's subgraph: parse -> convert, each behind the quality gate."""
    builder = StateGraph(UnitsState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("parse_units", gated("parse_units", parse))
    builder.add_node("convert_units", gated("convert_units", convert))
    builder.add_edge(START, "parse_units")
    builder.add_edge("parse_units", "convert_units")
    return builder.compile(name=NAME)


def units_agent() -> AgentSpec:
    """The agent's spec: all the spine needs."""
    return AgentSpec(
        name=NAME,
        description="Converts lengths between kilometres, metres, miles and feet.",
        keywords=("convert", "km", "miles", "kilometres", "feet"),
        examples=("Convert 5 km to miles.", "How many feet is 3 metres?"),
        build=build,
        options=UnitsOptions,
    )
