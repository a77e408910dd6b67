"""``review_with_llm``: one LLM call per batch of tests, structured output, one retry.

The node runs as one ``Send`` task per batch, so each finished batch is a persisted write: a
run resumed after a crash redoes only the batches that had not finished.

Structured output is function calling: the model is bound to one tool whose parameters are
the :class:`LLMReview` JSON schema (smell ids as an enum) and forced to call it; the call's
arguments are then validated item by item (:func:`validate_llm_review`). This is what
``with_structured_output(LLMReview, method="function_calling", include_raw=True)`` does,
minus its runnable plumbing, which costs ~2.5 ms of CPU per call: the fan-out sends every
batch at once and that CPU is serialised on one interpreter, so it lands on the wall time.
Binding once per model also avoids rebuilding the tool schema per call (~7 ms). A model that
answers with JSON text instead of the tool call is accepted when the text parses.

An answer that does not fit is retried once with the problem spelled out, then the batch is
recorded as ``malformed`` (no findings) rather than failing the analysis. Provider errors
(after the factory's own retries) do fail the run: it can be resumed.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from agents.contract.context import RunContext, services_of
from agents.test_analysis.prompts import REVIEW_RETRY, REVIEW_SYSTEM, REVIEW_USER
from agents.test_analysis.state import BatchReview, ReviewTask
from tools.providers.chat_models import message_text
from tools.test_analysis.batches import (
    LLMBatch,
    MalformedLLMOutput,
    parse_llm_json,
    review_json_schema,
    validate_llm_review,
)

__all__ = [
    "REVIEW_TOOL",
    "LLMUnavailableError",
    "ask_for_review",
    "make_review_node",
    "review_messages",
    "structured_reviewer",
]

#: Tries per batch: the first answer and one retry after a malformed one.
ATTEMPTS = 2
#: The tool the model must call: its parameters are the LLMReview schema.
REVIEW_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "LLMReview",
        "description": "Report the test smells found in the listed tests.",
        "parameters": review_json_schema(),
    },
}


class LLMUnavailableError(RuntimeError):
    """No chat model is configured any more for a run that planned LLM batches."""


def review_messages(batch: LLMBatch) -> list[BaseMessage]:
    """The prompt of one batch."""
    user = REVIEW_USER.format(
        batch_id=batch.batch_id, count=len(batch.tests), listing=batch.render()
    )
    return [SystemMessage(REVIEW_SYSTEM), HumanMessage(user)]


def structured_reviewer(model: BaseChatModel) -> Runnable[Any, Any]:
    """``model`` bound to the review tool and forced to call it."""
    return model.bind_tools([REVIEW_TOOL], tool_choice=REVIEW_TOOL["function"]["name"])


def _unpack(answer: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(review arguments, problem) from the model's answer."""
    if not isinstance(answer, AIMessage):
        return None, f"unexpected answer type {type(answer).__name__}"
    for call in answer.tool_calls:
        args = call.get("args")
        if isinstance(args, dict) and isinstance(args.get("findings"), list):
            return args, None
        return None, 'the tool arguments must be {"findings": [...]}'
    for bad in answer.invalid_tool_calls:
        return None, f"the tool call's arguments are not valid JSON ({bad.get('error')})"
    text = message_text(answer)
    if not text.strip():
        return None, "the answer called no tool"
    try:  # some models write the JSON as text instead of calling the tool
        return parse_llm_json(text), None
    except MalformedLLMOutput as exc:
        return None, str(exc)


async def ask_for_review(
    model: BaseChatModel, batch: LLMBatch, *, structured: Runnable[Any, Any] | None = None
) -> tuple[dict[str, Any] | None, int, str | None]:
    """Ask ``model`` (or its prebuilt ``structured`` runnable) to review ``batch``:
    (review arguments or None, calls made, last problem)."""
    bound = structured or structured_reviewer(model)
    base = review_messages(batch)
    messages = base
    problem: str | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            answer = await bound.ainvoke(messages)
        except ValueError as exc:  # an output parser of the model's integration gave up
            review, problem = None, f"{type(exc).__name__}: {exc}"
        else:
            review, problem = _unpack(answer)
        if review is not None:
            return review, attempt, None
        messages = [*base, HumanMessage(REVIEW_RETRY.format(error=str(problem)[:500]))]
    return None, ATTEMPTS, problem


class _Reviewers:
    """The bound runnable of the model in use, built once. The factory hands out one model
    per role, so one slot is enough; a different model replaces it."""

    def __init__(self) -> None:
        self._model: BaseChatModel | None = None
        self._runnable: Runnable[Any, Any] | None = None
        self._lock = threading.Lock()

    def for_model(self, model: BaseChatModel) -> Runnable[Any, Any]:
        with self._lock:
            if self._model is not model or self._runnable is None:
                self._model, self._runnable = model, structured_reviewer(model)
            return self._runnable


def make_review_node() -> Any:
    reviewers = _Reviewers()

    async def review_with_llm(task: ReviewTask, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Review one batch of tests with the LLM; keep findings above the confidence bar."""
        batch = LLMBatch.model_validate(task["batch"])
        services = services_of(runtime)
        model = services.llm(services.settings.analysis.llm_role)
        if model is None:
            raise LLMUnavailableError(
                "this analysis planned LLM batches but no chat model is configured now; "
                "configure LLM_PROVIDER again and resume the analysis"
            )
        answer, calls, problem = await ask_for_review(
            model, batch, structured=reviewers.for_model(model)
        )
        review = BatchReview(
            batch_id=batch.batch_id,
            index=batch.index,
            status="malformed",
            findings=[],
            dropped=0,
            calls=calls,
            error=problem,
        )
        if answer is not None:
            try:
                checked = validate_llm_review(answer, batch, task["min_confidence"])
            except MalformedLLMOutput as exc:
                review["error"] = str(exc)
            else:
                review = BatchReview(
                    batch_id=batch.batch_id,
                    index=batch.index,
                    status="ok",
                    calls=calls,
                    error=None,
                    dropped=len(checked.dropped),
                    findings=[f.model_dump(mode="json") for f in checked.findings],
                )
        # Progress for background runs: a batch id, so a resumed run never counts one twice.
        runtime.stream_writer({"analysis": "batch", "batch_id": batch.batch_id})
        return {"llm_reviews": {batch.batch_id: review}, "analysis_stages": ["review_with_llm"]}

    return review_with_llm
