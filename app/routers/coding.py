"""REST for the coding agent: `POST /code/generate`, `/code/check`, `/code/execute`.

- `/code/generate` runs the one Switchyard graph with the coding agent asked for by name and the
  request as the turn's `agent_input` (like `/api/v1/analyze`): the same subgraph, bound, tool
  counters, traces and stage metrics as a chat turn, on the graph compiled without a
  checkpointer (nothing is stored). It needs a chat model: without one it answers 503 naming the
  fix (the request is valid, the server cannot serve it as configured), and with test data it
  needs the sandbox (503 when code execution is refused here).
- `/code/check` (static, no execution) and `/code/execute` (in the sandbox) call the coding
  operations `check_code` and `run_code` (`tools/coding/operations.py`), with no model; their
  refusals are answered by the app's handler. `/code/execute` answers 503 when the sandbox
  cannot run here (e.g. bubblewrap missing); a failure of the code itself is a 200 with
  `success: false`. A coding engine that is not open is 503 (the one missing-engine rule).
Limits: the body (MAX_REQUEST_BYTES), the code (CODING_MAX_CODE_CHARS), the test data
(CODING_MAX_TEST_ROWS, CODING_MAX_TEST_COLUMNS) and `max_iterations` (1..20) are checked before
anything runs (422 naming the limit). Nothing is stored, so there is nothing to scope to an
owner; the run context still carries the caller's owner id.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import JSONResponse
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field

from agents.coding import GenerateRequest
from agents.coding.routing import NAME
from app.bodies import StrictJSONRoute
from app.errors import (
    COMMON_ERRORS,
    DependencyUnavailable,
    error_response,
    error_responses,
)
from app.operations import OperationContextDep
from app.runs import executor
from app.runs.executor import RunFailed
from app.security import CallerDep
from app.services import ServicesDep
from tools.coding import (
    CheckCodeInput,
    CheckCodeOutput,
    CodingResult,
    CodingToolkit,
    TestCodeInput,
    TestCodeOutput,
    TestData,
)
from tools.coding.execute import to_frame
from tools.coding.operations import check_code, run_code
from tools.coding.schemas import IDENTIFIER, MAX_CODE_CHARS

router = APIRouter(tags=["coding"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

NO_MODEL = (
    "Generating code needs a chat model, and none is configured: set LLM_PROVIDER (openai with "
    "OPENAI_BASE_URL / OPENAI_API_KEY, or ollama) and restart. POST /code/check and POST "
    "/code/execute work without one."
)


class CheckRequest(BaseModel):
    """Code to check without running it."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        min_length=1,
        max_length=MAX_CODE_CHARS,
        description="A Python module defining the function (at most CODING_MAX_CODE_CHARS).",
    )
    function_name: str = Field(pattern=IDENTIFIER, description="The function to check.")


class ExecuteRequest(CheckRequest):
    """Code to run in the sandbox, on test data."""

    test_data: TestData | None = Field(
        default=None,
        description="JSON records ([{column: value}, ...]) or columns ({column: [values]}); "
        "the DataFrame is passed as the function's first argument (without it the function is "
        "called with no arguments).",
    )


def _unavailable(dependency: str, message: str) -> JSONResponse:
    """503 for a capability this server lacks as configured (no Retry-After: retrying does not
    help until it is fixed; the message names the fix)."""
    return error_response(status.HTTP_503_SERVICE_UNAVAILABLE, message, dependency=dependency)


def _sandbox_refused(error: str) -> JSONResponse:
    return _unavailable("sandbox", f"{error}. GET /health shows the sandbox's state.")


def _invalid(exc: ValueError) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"Invalid request: {exc}")


@router.post(
    "/code/generate",
    response_model=CodingResult,
    responses={
        **error_responses(413),
        503: {
            **error_responses(503)[503],
            "description": "No chat model is configured (generation needs one), the sandbox is "
            "unavailable (test data needs it), or Redis/Postgres is down; `dependency` says "
            "which.",
        },
    },
)
async def generate(body: GenerateRequest, services: ServicesDep, who: CallerDep) -> Any:
    """Write the function of `execution_spec`, check it, run it on `test_data` in the sandbox,
    and fix it until it passes or `max_iterations` generations are done.

    Always answers the six fields; at the bound, the best code so far with its issues.
    """
    toolkit = services.agents.engine(CodingToolkit)
    if toolkit.model is None:
        return _unavailable("llm", NO_MODEL)
    if body.test_data is not None:
        try:
            to_frame(body.test_data, toolkit.limits)
        except ValueError as exc:
            raise _invalid(exc) from None
        sandbox = await asyncio.to_thread(toolkit.sandbox.status)
        if not sandbox.get("available"):
            return _sandbox_refused(str(sandbox.get("error")))
    thread_id = uuid.uuid4().hex
    spec = body.execution_spec
    inp: Any = {
        "messages": [HumanMessage(f"Write `{spec.function_name}`: {spec.description[:500]}")],
        "user_id": who.owner,
        "session_id": thread_id,
        "target_agent": NAME,
        "agent_input": body.model_dump(mode="json"),
    }
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "metadata": {"owner": who.owner},
        "recursion_limit": 100,
    }
    try:
        state = (
            await executor.execute(
                services.sync_graph, inp, config, context=services.context(owner=who.owner)
            )
            or {}
        )
    except RunFailed as failed:
        failure = failed.failure
        if failure.dependency:
            raise DependencyUnavailable(failure.dependency, failure.error) from failure.error
        raise failure.error from None
    answer = (state.get("agent_answers") or {}).get(NAME) or {}
    return CodingResult.model_validate(answer.get("data") or {})


@router.post("/code/check", response_model=CheckCodeOutput, responses=error_responses(413))
async def check(body: CheckRequest, ctx: OperationContextDep) -> Any:
    """Check code without running it: syntax, the function exists, returns a value, handles
    errors, has type hints, imports only what the sandbox allows, and ruff's findings.

    Needs no chat model and no sandbox.
    """
    return await check_code(ctx, CheckCodeInput(code=body.code, function_name=body.function_name))


@router.post(
    "/code/execute",
    response_model=TestCodeOutput,
    responses={
        **error_responses(413),
        503: {
            **error_responses(503)[503],
            "description": "Code execution is refused here (the sandbox cannot run: the "
            "message names the fix), or Redis is down; `dependency` says which.",
        },
    },
)
async def execute(body: ExecuteRequest, ctx: OperationContextDep) -> Any:
    """Run the function in the sandbox (no network, no project files, no secrets; CPU, memory,
    processes, output and wall-clock limits) on the test data, and return its JSON-safe result
    or its error. A failure of the code (exception, limit, timeout) is `success: false`.

    Needs no chat model.
    """
    request = TestCodeInput(
        code=body.code, function_name=body.function_name, test_data=body.test_data
    )
    return await run_code(ctx, request)
