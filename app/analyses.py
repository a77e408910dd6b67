"""Analyses as runs of the one graph: the input, the result, and progress from the state API.

An analysis is a turn addressed to the test-analysis agent (``target_agent``) whose validated
request travels as the turn's ``agent_input``: the synchronous endpoint runs it through the
graph compiled without a checkpointer, the background endpoints submit it as a background run
(``app.runs``) on a thread of its own. Progress is read from the run's state (the agent's
subgraph state and its finished tasks), never from checkpoint internals.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from agents.contract.context import RunContext
from agents.test_analysis.state import AGENT, STAGES, AnalysisRequestData
from app.runs.executor import Deadline, execute
from graph.workflow import SwitchyardGraph

__all__ = [
    "Progress",
    "analysis_input",
    "progress_of",
    "result_of",
    "result_of_run",
    "run_sync",
]


def analysis_input(request: AnalysisRequestData, *, thread_id: str, user_id: str) -> dict[str, Any]:
    """The graph input (JSON-able ``ChatInput``) of an analysis of ``request``."""
    files = request.get("files") or []
    mode = request.get("mode") or "the default mode"
    return {
        "messages": [
            {
                "role": "user",
                "content": f"Analyse {len(files)} test file(s) for test smells ({mode}).",
                "id": uuid.uuid4().hex,
            }
        ],
        "user_id": user_id,
        "session_id": thread_id,
        "target_agent": AGENT,
        "agent_input": dict(request),
    }


def _checked(data: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    if "issues" not in data:
        problem = data.get("problem") or "; ".join(errors) or "no result"
        raise RuntimeError(f"the analysis produced no result: {problem}")
    return dict(data)


def result_of(state: dict[str, Any]) -> dict[str, Any]:
    """The analysis result of a finished run's root state (RuntimeError when there is none)."""
    answer = (state.get("agent_answers") or {}).get(AGENT) or {}
    return _checked(answer.get("data") or {}, state.get("errors") or [])


def result_of_run(result: dict[str, Any]) -> dict[str, Any]:
    """The analysis result of a finished background run's result (``app.turns.run_result``)."""
    return _checked((result.get("data") or {}).get(AGENT) or {}, result.get("errors") or [])


def config_of(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def run_sync(
    graph: SwitchyardGraph,
    context: RunContext,
    request: AnalysisRequestData,
    *,
    owner: str,
    timeout: float,
) -> dict[str, Any]:
    """Run one analysis to the end and return its result (:class:`RunFailed` when it fails,
    a ``timeout`` failure after ``timeout`` seconds)."""
    thread_id = uuid.uuid4().hex
    inp: Any = analysis_input(request, thread_id=thread_id, user_id=owner)
    config: RunnableConfig = {**config_of(thread_id), "recursion_limit": 100}
    deadline = Deadline(timeout, "ANALYSIS_SYNC_TIMEOUT_SECONDS")
    state = await execute(graph, inp, config, context=context, deadline=deadline, what="analysis")
    return result_of(state or {})


@dataclass
class Progress:
    """Where a running analysis is, from its state."""

    stages: list[str] = field(default_factory=list)
    batches_done: set[str] = field(default_factory=set)
    batches_total: int = 0
    mode: str | None = None


def _agent_state(snapshot: StateSnapshot) -> StateSnapshot | None:
    for task in snapshot.tasks:
        if task.name == AGENT and isinstance(task.state, StateSnapshot):
            return task.state
    return None


def progress_of(snapshot: StateSnapshot) -> Progress:
    """Stages done and LLM batches saved, from the root state read with ``subgraphs=True``:
    the agent's state holds the saved batch reviews, and its finished tasks (a review whose
    write is saved but whose step has not ended) count too, as a resumed run never redoes
    them."""
    inner = _agent_state(snapshot)
    if inner is None:
        return Progress()
    values = inner.values or {}
    plan = values.get("analysis_plan") or {}
    done = set(values.get("llm_reviews") or {})
    for task in inner.tasks:
        if task.name == "review_with_llm" and isinstance(task.result, dict):
            done.update(task.result.get("llm_reviews") or {})
    stages = [s for s in STAGES if s in (values.get("analysis_stages") or [])]
    return Progress(stages, done, len(plan.get("batches") or []), plan.get("mode"))
