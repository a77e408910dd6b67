"""`CodingLoop`: the middleware that bounds the ReAct loop and returns the best code.

- before_agent: starts a run clean (per-run fields reset, the bound fixed from the request or
  the setting, clamped to 1..20) and, in chat, takes code the user pasted as the current code
  and JSON data the user pasted as the test data.
- before_model: ends the run as soon as the current code is valid; at the bound, once the last
  code is evaluated; and after `calls_per_iteration * bound + 2` model calls (a backstop for a
  model that never stops calling tools).
- after_model: keeps at most one `generate_code` call per model turn and none past the bound,
  so `iteration_count` can never exceed `max_iterations` (parallel tool calls included).
- after_agent: writes the best version's six fields, adds a summary answer when the model did
  not end with one, and counts the run in the metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, hook_config
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agents.coding.attempts import current_attempt, is_evaluated, is_valid, result_of
from agents.coding.render import render_result
from agents.coding.state import Attempt, CodingState, code_key
from tools.coding.extract import extract_pasted
from tools.coding.generate import answer_text
from tools.coding.metrics import CodingMetrics

MAX_ITERATIONS = 20
CALLS_PER_ITERATION = 5


def clamp_iterations(value: int | None, default: int) -> int:
    """The run's bound: the request's value or the default, within 1..20."""
    return max(1, min(MAX_ITERATIONS, int(value or default)))


def last_human_text(messages: list[AnyMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return answer_text(message.content)
    return ""


class CodingLoop(AgentMiddleware[CodingState, Any]):
    """Bounds the coding agent's loop; see the module docstring."""

    state_schema = CodingState

    def __init__(
        self,
        *,
        default_max_iterations: int,
        metrics: CodingMetrics | Callable[[], CodingMetrics | None] | None = None,
    ):
        super().__init__()
        self.default_max_iterations = default_max_iterations
        # a callable finds the process's toolkit's metrics when a run ends (it may open later)
        self._metrics = metrics

    @property
    def metrics(self) -> CodingMetrics | None:
        return self._metrics() if callable(self._metrics) else self._metrics

    # --- start -------------------------------------------------------------------------------
    def before_agent(self, state: CodingState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        bound = clamp_iterations(state.get("max_iterations"), self.default_max_iterations)
        update: dict[str, Any] = {
            "max_iterations": bound,
            "iteration_count": Overwrite(0),
            "model_calls": Overwrite(0),
            "attempts": Overwrite({}),
            "generated_code": "",
            "code_issues": [],
            "runtime_error": None,
            "execution_result": None,
            "is_code_valid": False,
        }
        if not state.get("execution_spec"):
            text = last_human_text(state["messages"])
            pasted = extract_pasted(text)
            # Data pasted in chat is the test data, with or without pasted code ("write a
            # function that ... on this data: ```json ...```").
            if pasted.test_data is not None and state.get("test_data") is None:
                update["test_data"] = pasted.test_data
            if pasted.code and pasted.function_name:
                update["generated_code"] = pasted.code
                update["attempts"] = Overwrite(
                    {code_key(pasted.code): Attempt(code=pasted.code, iteration=0)}
                )
                update["execution_spec"] = {
                    "function_name": pasted.function_name,
                    "description": text.strip()[:4000] or "the pasted function",
                }
        return update

    # --- bounds ------------------------------------------------------------------------------
    @hook_config(can_jump_to=["end"])
    def before_model(self, state: CodingState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        bound = clamp_iterations(state.get("max_iterations"), self.default_max_iterations)
        has_data = state.get("test_data") is not None
        attempt = current_attempt(state)
        valid = attempt is not None and is_valid(attempt, has_data)
        if valid:
            return {"is_code_valid": True, "jump_to": "end"}
        done = int(state.get("iteration_count") or 0)
        if done >= bound and (attempt is None or is_evaluated(attempt, has_data)):
            return {"is_code_valid": False, "jump_to": "end"}
        if int(state.get("model_calls") or 0) >= CALLS_PER_ITERATION * bound + 2:
            return {"is_code_valid": False, "jump_to": "end"}
        return {"model_calls": 1, "is_code_valid": False}

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: CodingState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        message = state["messages"][-1]
        if not isinstance(message, AIMessage) or not message.tool_calls:
            return None
        bound = clamp_iterations(state.get("max_iterations"), self.default_max_iterations)
        allowed = 1 if int(state.get("iteration_count") or 0) < bound else 0
        generations = [c for c in message.tool_calls if c["name"] == "generate_code"]
        if len(generations) <= allowed:
            return None
        kept = [c for c in message.tool_calls if c["name"] != "generate_code"]
        kept += generations[:allowed]
        extra = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
        trimmed = message.model_copy(update={"tool_calls": kept, "additional_kwargs": extra})
        update: dict[str, Any] = {"messages": [trimmed]}
        if not kept:
            update["jump_to"] = "end"
        return update

    # --- end -------------------------------------------------------------------------------
    def after_agent(self, state: CodingState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        result = result_of(state)
        bound = clamp_iterations(state.get("max_iterations"), self.default_max_iterations)
        metrics = self.metrics
        if metrics is not None:
            metrics.record_run(
                valid=result.is_code_valid,
                iterations=result.iteration_count,
                bound_reached=result.iteration_count >= bound and not result.is_code_valid,
            )
        update: dict[str, Any] = result.model_dump()
        update["iteration_count"] = Overwrite(result.iteration_count)
        summary = render_result(result)
        last = state["messages"][-1] if state["messages"] else None
        said = answer_text(last.content).strip() if isinstance(last, AIMessage) else ""
        if isinstance(last, AIMessage) and not last.tool_calls and said:
            # The model's closing words, followed by what the run really produced.
            answer = last.model_copy(update={"content": f"{said}\n\n{summary}"})
        else:
            answer = AIMessage(content=summary, name="coding")
        update["messages"] = [answer]
        return update
