"""The units capability's one operation, served as the agent's step, a REST route and (through
the registry) an MCP tool."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tests.example_agent.engine import LengthTable
from tools.operations import Arguments, Operation, OperationContext, operation

Unit = Literal["km", "m", "mi", "miles", "ft"]


class ConvertLength(Arguments):
    value: float = Field(ge=0, le=1e12, description="The length to convert.")
    source: Unit = Field(description="Its unit.")
    target: Unit = Field(description="The unit wanted.")
    digits: int = Field(2, ge=0, le=6, description="Decimals in the text.")


class Conversion(BaseModel):
    value: float = Field(description="The converted length.")
    text: str = Field(description="The conversion in words.")


@operation("units", read_only=True)
async def convert_length(ctx: OperationContext, payload: ConvertLength) -> Conversion:
    """Convert a length between kilometres, metres, miles and feet."""
    table = ctx.engine(LengthTable)
    value = table.convert(ctx.owner, payload.value, payload.source, payload.target)
    text = f"{payload.value:g} {payload.source} = {value:.{payload.digits}f} {payload.target}"
    return Conversion(value=value, text=text)


OPERATIONS: tuple[Operation[ConvertLength, Conversion], ...] = (convert_length,)
