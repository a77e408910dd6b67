"""The units capability's app part: its engine opened at start-up, its operation's route.

Registering the capability is one line in the component list (here, the test's list)."""

from __future__ import annotations

from fastapi import APIRouter

from app.components.base import Component, Components
from app.operations import OperationContextDep
from tests.example_agent.engine import LengthTable
from tests.example_agent.operations import OPERATIONS, Conversion, ConvertLength, convert_length


async def start_units(components: Components) -> None:
    """Open the engine and give it to the agents and the operations."""
    components.agents.provide(LengthTable())


router = APIRouter(prefix="/units", tags=["units"])


@router.post("/convert")
async def convert(body: ConvertLength, ctx: OperationContextDep) -> Conversion:
    """Convert a length (the ``convert_length`` operation)."""
    return await convert_length(ctx, body)


UNITS = Component("units", start_units, OPERATIONS, router)
