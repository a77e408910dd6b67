"""``review_with_llm``: one LLM call per batch of tests, structured output, one retry.

The node runs as one ``Send`` task per batch, so each finished batch is a persisted write: a
run resumed after a crash redoes only the batches that had not finished. The model answers
through a tool call validated against :class:`LLMReview` (``with_structured_output`` with
``method="function_calling"``); an answer that does not fit is retried once with the error
spelled out, then the batch is recorded as ``malformed`` (no findings) rather than failing the
analysis. Provider errors (after the factory's own retries) do fail the run: it can be resumed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agents.models import message_text
from agents.test_analysis.llm import (
    LLMBatch,
    LLMReview,
    MalformedLLMOutput,
    parse_llm_json,
    validate_llm_review,
)
from agents.test_analysis.prompts import REVIEW_RETRY, REVIEW_SYSTEM, REVIEW_USER
from agents.test_analysis.state import BatchReview, ReviewTask
from graph.deps import GraphDeps

__all__ = ["LLMUnavailableError", "ask_for_review", "make_review_node", "review_messages"]

#: Tries per batch: the first answer and one retry after a malformed one.
ATTEMPTS = 2


class LLMUnavailableError(RuntimeError):
    """No chat model is configured any more for a run that planned LLM batches."""


def review_messages(batch: LLMBatch) -> list[BaseMessage]:
    """The prompt of one batch."""
    user = REVIEW_USER.format(batch_id=batch.batch_id, count=len(batch.tests),
                              listing=batch.render())
    return [SystemMessage(REVIEW_SYSTEM), HumanMessage(user)]


def _unpack(answer: Any) -> tuple[LLMReview | dict[str, Any] | None, str | None]:
    """(review, problem) from a structured-output answer (``include_raw`` or plain)."""
    if isinstance(answer, LLMReview):
        return answer, None
    if isinstance(answer, dict) and "parsed" in answer:
        if isinstance(answer["parsed"], LLMReview):
            return answer["parsed"], None
        problem = answer.get("parsing_error")
        text = message_text(answer.get("raw")) if answer.get("raw") is not None else ""
        if problem is None and text.strip():
            # Some models ignore the tool and write the JSON as text: take it if it fits.
            try:
                return parse_llm_json(text), None
            except MalformedLLMOutput as exc:
                problem = exc
        return None, str(problem or "the answer called no tool")
    if isinstance(answer, dict):
        return answer, None
    return None, f"unexpected answer type {type(answer).__name__}"


async def ask_for_review(
    model: BaseChatModel, batch: LLMBatch
) -> tuple[LLMReview | dict[str, Any] | None, int, str | None]:
    """Ask ``model`` to review ``batch``: (review or None, calls made, last problem)."""
    structured = model.with_structured_output(
        LLMReview, method="function_calling", include_raw=True
    )
    base = review_messages(batch)
    messages = base
    problem: str | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            answer = await structured.ainvoke(messages)
        except ValueError as exc:  # OutputParserException, ValidationError, JSONDecodeError
            review, problem = None, f"{type(exc).__name__}: {exc}"
        else:
            review, problem = _unpack(answer)
        if review is not None:
            return review, attempt, None
        messages = [*base, HumanMessage(REVIEW_RETRY.format(error=str(problem)[:500]))]
    return None, ATTEMPTS, problem


def make_review_node(deps: GraphDeps) -> Callable[[ReviewTask], Awaitable[dict[str, Any]]]:
    role = deps.settings.analysis_llm_role

    async def review_with_llm(task: ReviewTask) -> dict[str, Any]:
        """Review one batch of tests with the LLM; keep findings above the confidence bar."""
        batch = LLMBatch.model_validate(task["batch"])
        model = deps.llm(role)
        if model is None:
            raise LLMUnavailableError(
                "this analysis planned LLM batches but no chat model is configured now; "
                "configure LLM_PROVIDER again and resume the analysis"
            )
        answer, calls, problem = await ask_for_review(model, batch)
        review = BatchReview(batch_id=batch.batch_id, index=batch.index, status="malformed",
                             findings=[], dropped=0, calls=calls, error=problem)
        if answer is not None:
            try:
                checked = validate_llm_review(answer, batch, task["min_confidence"])
            except MalformedLLMOutput as exc:
                review["error"] = str(exc)
            else:
                review = BatchReview(
                    batch_id=batch.batch_id, index=batch.index, status="ok", calls=calls,
                    error=None, dropped=len(checked.dropped),
                    findings=[f.model_dump(mode="json") for f in checked.findings],
                )
        return {"llm_reviews": {batch.batch_id: review}, "analysis_stages": ["review_with_llm"]}

    return review_with_llm
