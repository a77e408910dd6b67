"""Builds the coding agent: LangChain's prebuilt ReAct agent with the four tools and a bound.

Built with `langchain.agents.create_agent` (langchain >= 1) rather than
`langgraph.prebuilt.create_react_agent` (deprecated in LangGraph 1 in its favour) because its
middleware hooks are exactly the places this loop needs: the bound on generations and the
early stop when the code passes (before/after the model call), the clean start of each run
(before the agent) and the best-code result (after it) — see `middleware.CodingLoop`. Tool calls
are logged and counted by the toolkit itself, so REST calls and agent calls share the counters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, Overwrite

from agents.coding.middleware import CALLS_PER_ITERATION, CodingLoop, last_human_text
from agents.coding.pasted import review_pasted
from agents.coding.prompts import CODING_SYSTEM
from agents.coding.state import CodingState
from agents.coding.tools import agent_tools, engines_of
from tools.coding.metrics import CodingMetrics
from tools.coding.toolkit import CodingToolkit
from tools.operations import EngineNotOpen, Engines

NAME = "coding"


def recursion_limit_for(max_iterations: int) -> int:
    """A LangGraph recursion limit that never cuts a run of `max_iterations` short."""
    model_calls = CALLS_PER_ITERATION * max_iterations + 2
    # Each model turn is before_model -> model -> after_model -> tools; plus start and end.
    return model_calls * 4 + 10


def _metrics_of(source: CodingToolkit | Engines) -> Callable[[], CodingMetrics | None]:
    """The toolkit's metrics when a run ends (none while the coding engine is not open)."""
    engines = engines_of(source)

    def metrics() -> CodingMetrics | None:
        try:
            return engines.engine(CodingToolkit).metrics
        except EngineNotOpen:
            return None

    return metrics


def build_coding_agent(
    model: BaseChatModel,
    toolkit: CodingToolkit | Engines,
    *,
    default_max_iterations: int,
    checkpointer: Checkpointer = None,
    name: str = NAME,
    extra_tools: Sequence[BaseTool] = (),
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The ReAct coding agent (a compiled graph over `CodingState`).

    Input: `messages` plus, optionally, `execution_spec`, `test_data`, `max_iterations`
    (without a spec, the last user message is the request; pasted code becomes the current
    code). Output: the state, whose six result fields hold the best code of the run.
    `toolkit`: the toolkit, or the engines its tools find it in when they run.
    `extra_tools`: more tools for the model beside the four (the operator's MCP servers' tools,
    `tools.mcp_client`); they do not touch the code or the bound on generations.
    """
    return create_agent(
        model,
        tools=[*agent_tools(toolkit), *extra_tools],
        system_prompt=CODING_SYSTEM,
        middleware=[
            CodingLoop(default_max_iterations=default_max_iterations, metrics=_metrics_of(toolkit))
        ],
        state_schema=CodingState,
        checkpointer=checkpointer,
        name=name,
    )


def build_coding_graph(
    model: BaseChatModel | None,
    toolkit: CodingToolkit,
    *,
    default_max_iterations: int,
    checkpointer: Checkpointer = None,
    name: str = NAME,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The coding subgraph for the root graph, with or without a chat model.

    With a model: `build_coding_agent`. Without one: a one-node graph (`review_pasted`) that
    answers that generation needs a model, and checks / runs / explains what the user pasted.
    Both take and return `CodingState` and end with an `AIMessage` answer.

    Each invocation is one request. When the graph keeps state per thread (a checkpointer, or
    a node of a checkpointed parent), give `execution_spec`, `test_data` and `max_iterations`
    in every input — `None` for a chat turn — so a previous request's spec is not reused;
    the per-run fields (code, findings, counters) are reset by the loop itself.
    """
    if model is not None:
        return build_coding_agent(
            model,
            toolkit,
            default_max_iterations=default_max_iterations,
            checkpointer=checkpointer,
            name=name,
        )

    async def review(state: CodingState) -> dict[str, Any]:
        text = last_human_text(state["messages"])
        spec = state.get("execution_spec") or {}
        review = await review_pasted(
            text,
            toolkit,
            test_data=state.get("test_data"),
            function_name=spec.get("function_name"),
        )
        return {
            **review.result.model_dump(),
            "iteration_count": Overwrite(0),
            "messages": [AIMessage(content=review.answer, name=name)],
        }

    builder = StateGraph(CodingState)
    builder.add_node("review_pasted", review)
    builder.add_edge(START, "review_pasted")
    builder.add_edge("review_pasted", END)
    return builder.compile(checkpointer=checkpointer, name=name)
