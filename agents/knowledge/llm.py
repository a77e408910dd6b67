"""The model-backed strategies of the knowledge agent (the offline ones are in `strategies`).

Each function takes a chat model and returns the same value type as its offline counterpart, so
a node treats both alike. Structured answers go through ``with_structured_output(...,
method="function_calling")``; retries, rate limits and the response cache live in the model
factory, so a failure that reaches here is final and the node falls back to the offline strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from agents.knowledge import prompts
from agents.knowledge.citations import Citation
from agents.knowledge.extractive import ResponseGrade
from agents.knowledge.strategies import QueryEvaluation
from tools.providers.chat_models import message_text

#: Most characters of one document shown to a grader or the answer model.
MAX_SOURCE_CHARS = 4000

M = TypeVar("M", bound=BaseModel)


class QueryClassification(BaseModel):
    """How to weigh the two retrieval legs for a question."""

    query_type: Literal["lexical", "semantic", "balanced"] = Field(
        description="lexical, semantic or balanced."
    )
    lambda_mult: float = Field(description="0 = keyword leg only, 1 = semantic leg only.")
    search_query: str | None = Field(
        default=None, description="The question as a standalone search query."
    )
    reason: str = Field(default="", description="One short sentence.")


class DocumentRelevance(BaseModel):
    """Whether one retrieved document helps answer the question."""

    relevant: bool = Field(description="True when it answers or directly supports an answer.")
    score: float = Field(description="0..1: how much of the answer it provides.")
    reason: str = Field(default="", description="One sentence.")


class QueryRewrite(BaseModel):
    """A better search query."""

    query: str = Field(description="The new search query.")
    reason: str = Field(default="", description="What it changes, in one sentence.")


class AnswerGrade(BaseModel):
    """A check of an answer against its sources."""

    grounded: bool = Field(description="Every statement is supported by its cited source(s).")
    answers_question: bool = Field(description="It actually answers the question.")
    score: float = Field(description="0..1 overall quality.")
    problems: list[str] = Field(default_factory=list, description="What is wrong, if anything.")


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    """`value` within [low, high] (models do not always respect a stated range)."""
    return min(high, max(low, float(value)))


def numbered_sources(citations: Sequence[Citation]) -> str:
    """The sources block: ``[n] Title (source[, p. N])`` then the text, per citation."""
    return "\n\n".join(f"[{c.number}] {c.label}\n{c.text[:MAX_SOURCE_CHARS]}" for c in citations)


async def _structured(model: BaseChatModel, schema: type[M], messages: list[BaseMessage]) -> M:
    runnable = model.with_structured_output(schema, method="function_calling")
    result = await runnable.ainvoke(messages)
    # some providers hand back a dict
    return result if isinstance(result, schema) else schema.model_validate(result)


async def classify_query(
    model: BaseChatModel, question: str, history: str, *, floor: float, ceiling: float
) -> tuple[QueryEvaluation, str | None]:
    """LLM classification of the question -> ``lambda_mult`` (clamped to [floor, ceiling], so
    neither leg is switched off on a guess) and the standalone search query, if any."""
    messages = [
        SystemMessage(prompts.EVALUATE_SYSTEM),
        HumanMessage(prompts.EVALUATE_USER.format(history=history or "(none)", question=question)),
    ]
    raw = await _structured(model, QueryClassification, messages)
    value = round(clamp(raw.lambda_mult, floor, ceiling), 4)
    evaluation = QueryEvaluation(
        value, raw.query_type, {}, [raw.reason or f"classified {raw.query_type}"], method="llm"
    )
    standalone = " ".join((raw.search_query or "").split()) or None
    return evaluation, standalone


async def judge_document(
    model: BaseChatModel, question: str, title: str, text: str
) -> DocumentRelevance:
    """LLM relevance of one document (its retrieved text) to the question; score clamped."""
    messages = [
        SystemMessage(prompts.GRADE_DOCUMENT_SYSTEM),
        HumanMessage(
            prompts.GRADE_DOCUMENT_USER.format(
                question=question, title=title, text=text[:MAX_SOURCE_CHARS]
            )
        ),
    ]
    raw = await _structured(model, DocumentRelevance, messages)
    return raw.model_copy(update={"score": clamp(raw.score)})


async def rewrite_query(
    model: BaseChatModel,
    question: str,
    queries: Sequence[str],
    reasons: Sequence[str],
    titles: Sequence[str],
) -> QueryRewrite:
    """LLM rewrite of the search query from why the earlier ones failed."""
    messages = [
        SystemMessage(prompts.TRANSFORM_SYSTEM),
        HumanMessage(
            prompts.TRANSFORM_USER.format(
                question=question,
                queries="\n".join(f"- {q}" for q in queries) or "- (none)",
                reasons="\n".join(f"- {r}" for r in reasons) or "- (not given)",
                titles="\n".join(f"- {t}" for t in titles) or "- (nothing was found)",
            )
        ),
    ]
    raw = await _structured(model, QueryRewrite, messages)
    return raw.model_copy(update={"query": " ".join(raw.query.split())})


async def write_answer(model: BaseChatModel, question: str, citations: Sequence[Citation]) -> str:
    """The answer from numbered sources (plain text with ``[n]`` markers).

    A plain ``ainvoke``: under ``stream_mode="messages"`` its tokens reach the client as
    they come (``generate_answer`` is one of the API's answer nodes)."""
    messages = [
        SystemMessage(prompts.GENERATE_SYSTEM),
        HumanMessage(
            prompts.GENERATE_USER.format(sources=numbered_sources(citations), question=question)
        ),
    ]
    return message_text(await model.ainvoke(messages)).strip()


async def grade_answer(
    model: BaseChatModel, question: str, answer: str, citations: Sequence[Citation]
) -> ResponseGrade:
    """LLM grade of the answer: passes when grounded and answering the question."""
    messages = [
        SystemMessage(prompts.GRADE_RESPONSE_SYSTEM),
        HumanMessage(
            prompts.GRADE_RESPONSE_USER.format(
                question=question, sources=numbered_sources(citations), answer=answer
            )
        ),
    ]
    raw = await _structured(model, AnswerGrade, messages)
    passed = raw.grounded and raw.answers_question
    problems = [p for p in raw.problems if p.strip()]
    if not raw.grounded and not problems:
        problems.append("not every statement is supported by its sources")
    if not raw.answers_question and len(problems) < 2:
        problems.append("it does not answer the question")
    reasons = problems if not passed else (problems or ["grounded and answers the question"])
    return ResponseGrade(
        passed=passed,
        score=round(clamp(raw.score), 4),
        coverage=1.0 if raw.answers_question else 0.0,
        support=1.0 if raw.grounded else 0.0,
        unsupported=[],
        reasons=reasons,
        method="llm",
    )
