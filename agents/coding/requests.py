"""What a caller may give the coding agent: the structured request and the per-run option.

`GenerateRequest` is the turn's `agent_input` when the agent is asked for by name with a
structured request (`POST /code/generate`); the agent validates it here, and the REST layer
uses the same model as its request body, so both refuse the same input. `CodingOptions` is the
per-run override of CODING_MAX_ITERATIONS (a field of the run context and of `/chat`'s
`options`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agents.coding.middleware import MAX_ITERATIONS
from agents.contract.context import AgentOptions, override
from tools.coding.schemas import ExecutionSpec, TestData


class GenerateRequest(BaseModel):
    """Write the function of `execution_spec`, check it, run it on `test_data`, fix it."""

    model_config = ConfigDict(extra="forbid")

    execution_spec: ExecutionSpec = Field(
        description="The function to write: its name, what it does, its parameters."
    )
    test_data: TestData | None = Field(
        default=None,
        description="JSON records ([{column: value}, ...]) or columns ({column: [values]}); "
        "they become the pandas DataFrame the function is run on (at most "
        "CODING_MAX_TEST_ROWS rows and CODING_MAX_TEST_COLUMNS columns).",
    )
    max_iterations: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ITERATIONS,
        description="Code generations at most (default CODING_MAX_ITERATIONS); at the bound "
        "the best code so far is returned with its issues.",
    )


class CodingOptions(AgentOptions):
    """Per-run options of the coding agent (None: the setting)."""

    coding_max_iterations: int | None = override("coding_max_iterations")
