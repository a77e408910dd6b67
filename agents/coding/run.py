"""`run_coding`: one coding request, start to finish, as the seed's six-field result."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from agents.coding.attempts import result_of
from agents.coding.middleware import MAX_ITERATIONS
from agents.coding.prompts import REQUEST
from agents.coding.react import build_coding_agent, recursion_limit_for
from config import Settings
from tools.coding.execute import data_summary, to_frame
from tools.coding.generate import NO_MODEL
from tools.coding.prompts import spec_text
from tools.coding.schemas import CodingResult, ExecutionSpec, TestData
from tools.coding.toolkit import CodingToolkit

logger = logging.getLogger(__name__)


def coding_input(
    spec: ExecutionSpec, test_data: TestData | None, max_iterations: int, toolkit: CodingToolkit
) -> dict[str, Any]:
    """The coding graph's input for a REST-style request (spec, data, bound)."""
    request = REQUEST.format(spec=spec_text(spec), data=data_summary(test_data, toolkit.limits))
    return {
        "messages": [HumanMessage(request)],
        "execution_spec": spec.model_dump(),
        "test_data": test_data,
        "max_iterations": max_iterations,
    }


async def run_coding(
    spec: ExecutionSpec | dict[str, Any],
    test_data: TestData | None = None,
    *,
    model: BaseChatModel | None,
    toolkit: CodingToolkit,
    settings: Settings,
    max_iterations: int | None = None,
    agent: CompiledStateGraph[Any, Any, Any, Any] | None = None,
) -> CodingResult:
    """Write, check, run and fix the function of `spec` on `test_data`; the best code wins.

    Always returns all six fields. Raises `ValueError` (naming the limit) for an invalid spec,
    oversized test data or a `max_iterations` outside 1..20 — before any model call. Without a
    model, generation is refused in the result's `code_issues`. A model that fails mid-run
    ends the run with the best code so far and the failure among the issues.
    `agent`: a graph from `build_coding_agent` to reuse (else one is built for this call);
    `toolkit` should be the process's shared one (its sandbox bounds concurrent executions).
    """
    spec = ExecutionSpec.model_validate(spec)
    if max_iterations is not None and not 1 <= max_iterations <= MAX_ITERATIONS:
        raise ValueError(f"max_iterations must be between 1 and {MAX_ITERATIONS}")
    if test_data is not None:
        to_frame(test_data, toolkit.limits)  # size and shape errors now, not in a tool
    bound = max_iterations or settings.coding.max_iterations
    if model is None:
        return CodingResult(
            generated_code="",
            iteration_count=0,
            is_code_valid=False,
            code_issues=[NO_MODEL],
            runtime_error=None,
            execution_result=None,
        )
    graph = agent or build_coding_agent(
        model, toolkit, default_max_iterations=settings.coding.max_iterations
    )
    state: dict[str, Any] = {}
    config: RunnableConfig = {"recursion_limit": recursion_limit_for(bound)}
    try:
        async for values in graph.astream(
            coding_input(spec, test_data, bound, toolkit), config, stream_mode="values"
        ):
            state = values
    except Exception as exc:  # the model (or its transport) failed: report, keep the best code
        logger.warning("coding run failed: %s: %s", type(exc).__name__, exc)
        result = result_of(state, note=f"the run stopped: {type(exc).__name__}: {exc}")
        issue = f"the run stopped early: {type(exc).__name__}: {str(exc)[:500]}"
        return result.model_copy(update={"code_issues": [*result.code_issues, issue]})
    return CodingResult.model_validate({key: state.get(key) for key in CodingResult.model_fields})
