"""Running an analysis through the graph: the input command, the synchronous run, progress.

An analysis enters the one Switchyard graph like a chat turn (``ingest -> route -> ...``) with
a request message, the request itself and ``target_agent`` set. The graph's input schema only
takes chat fields, so the input is a ``Command(update=..., goto="ingest")``, which writes the
analysis fields into the state directly (LangGraph's documented way to start a run with
arbitrary state).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from agents.test_analysis.state import AGENT, AnalysisRequestData

__all__ = [
    "analysis_input",
    "batches_in",
    "persisted_batches",
    "result_of",
    "run_config",
    "run_sync",
]


def run_config(thread_id: str, owner: str = "") -> RunnableConfig:
    """The LangGraph config of an analysis thread."""
    return {
        "configurable": {"thread_id": thread_id},
        "metadata": {"owner": owner, "analysis": True},
        "recursion_limit": 100,
    }


def analysis_input(request: AnalysisRequestData, *, thread_id: str, user_id: str) -> Command[Any]:
    """The graph input that starts an analysis of ``request`` on ``thread_id``."""
    files = request.get("files") or []
    mode = request.get("mode") or "the default mode"
    message = HumanMessage(
        f"Analyse {len(files)} test file(s) for test smells ({mode}).", id=uuid.uuid4().hex
    )
    return Command(
        update={
            "messages": [message],
            "user_id": user_id,
            "session_id": thread_id,
            "target_agent": AGENT,
            "analysis_request": {**request, "message_id": message.id, "source": "api"},
        },
        goto="ingest",
    )


def result_of(state: dict[str, Any]) -> dict[str, Any]:
    """The analysis result of a finished run's state (RuntimeError when there is none)."""
    result = state.get("analysis_result")
    if not isinstance(result, dict):
        plan = state.get("analysis_plan") or {}
        problem = plan.get("problem") or "; ".join(state.get("errors") or []) or "no result"
        raise RuntimeError(f"the analysis produced no result: {problem}")
    return result


async def run_sync(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    request: AnalysisRequestData,
    *,
    owner: str,
    timeout: float,
) -> dict[str, Any]:
    """Run one analysis to the end and return its result (TimeoutError after ``timeout``)."""
    thread_id = uuid.uuid4().hex
    state = await asyncio.wait_for(
        graph.ainvoke(
            analysis_input(request, thread_id=thread_id, user_id=owner),
            run_config(thread_id, owner),
        ),
        timeout,
    )
    return result_of(state)


def batches_in(saved: CheckpointTuple | None) -> set[str]:
    """Ids of the LLM batches whose review a checkpoint holds: in its values, or among its
    pending writes (a task whose write is saved is never run again on resume)."""
    if saved is None:
        return set()
    done = set(saved.checkpoint.get("channel_values", {}).get("llm_reviews") or {})
    for _task, channel, value in saved.pending_writes or []:
        if channel == "llm_reviews" and isinstance(value, dict):
            done.update(value)
    return done


async def persisted_batches(checkpointer: BaseCheckpointSaver[Any], thread_id: str) -> set[str]:
    """Ids of the LLM batches whose review is persisted for the thread."""
    return batches_in(await checkpointer.aget_tuple(run_config(thread_id)))
