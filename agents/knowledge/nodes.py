"""The knowledge agent's search stages: ``evaluate_query``, ``retrieve``, ``grade_documents``,
``transform_query``.

Each is made by a factory closing over the `GraphDeps` and is a plain async function
``state (, runtime) -> partial update``. Every judging step uses the model when one is
configured and the offline strategy otherwise (or when the model call fails, which is recorded in
``errors``); the method used is in the stage's ``knowledge_trace`` entry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agents.knowledge import llm
from agents.knowledge.common import (
    asked_query,
    failure,
    hits_from,
    resolve_options,
    store_for,
    trace,
)
from agents.knowledge.llm import DocumentRelevance
from agents.knowledge.strategies import (
    DocumentGrade,
    DocumentGrading,
    QueryEvaluation,
    evaluate_query,
    expand_query,
    grade_documents,
    judge_grades,
    strip_meta,
)
from agents.knowledge.types import SearchHit
from agents.models import message_text
from graph.context import RunContext
from graph.deps import GraphDeps
from graph.nodes import last_user_text
from graph.state import MultiAgentState
from tools.rerank import RerankerError

log = logging.getLogger(__name__)

Node = Callable[..., Awaitable[dict[str, Any]]]

#: ``lambda_mult`` bounds: neither retrieval leg is switched off on a guess.
LAMBDA_FLOOR, LAMBDA_CEILING = 0.15, 0.85
#: Earlier conversation shown to the query classifier (messages, characters each).
HISTORY_MESSAGES, HISTORY_CHARS = 6, 500


def _history(messages: Sequence[AnyMessage]) -> str:
    """The conversation before the latest question, briefly (for follow-up questions)."""
    earlier = list(messages)
    while earlier and not isinstance(earlier[-1], HumanMessage):
        earlier.pop()
    earlier = earlier[:-1][-HISTORY_MESSAGES:]
    role = {"human": "user", "ai": "assistant"}
    return "\n".join(
        f"{role.get(m.type, m.type)}: {message_text(m)[:HISTORY_CHARS]}" for m in earlier
    )


def _evaluation_data(evaluation: QueryEvaluation) -> dict[str, Any]:
    return {
        "method": evaluation.method,
        "query_type": evaluation.query_type,
        "lambda_mult": evaluation.lambda_mult,
        "reasons": list(evaluation.reasons),
        "signals": dict(evaluation.signals),
    }


def _grading_data(grading: DocumentGrading, threshold: float, min_relevant: int) -> dict[str, Any]:
    return {
        "passed": grading.passed,
        "method": grading.method,
        "reason": grading.reason,
        "relevant_count": grading.relevant_count,
        "mean_relevant_score": grading.mean_relevant_score,
        "threshold": threshold,
        "min_relevant": min_relevant,
        "grades": [asdict(g) for g in grading.grades],
    }


# --- evaluate_query ----------------------------------------------------------------------------


def make_evaluate_query(deps: GraphDeps) -> Node:
    async def evaluate_query_node(
        state: MultiAgentState, runtime: Runtime[RunContext]
    ) -> dict[str, Any]:
        """Start the turn's retrieval: reset the section, resolve the switches, turn the
        question into a search query (the model's standalone rewrite, or the question without
        its words about the knowledge base itself) and weigh the lexical vs semantic legs
        (``lambda_mult``) by LLM classification or the query's shape."""
        messages = state.get("messages", [])
        question = " ".join(last_user_text(messages).split())
        options = resolve_options(deps.settings, runtime.context)
        model = deps.llm("fast")
        errors: list[str] = []
        standalone: str | None = None
        evaluation: QueryEvaluation | None = None
        if model is not None:
            try:
                evaluation, standalone = await llm.classify_query(
                    model, question, _history(messages), floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING
                )
            except Exception as exc:
                log.warning("query classification failed: %s", exc)
                errors.append(failure("evaluate_query", exc, "the query-shape heuristic"))
        query = standalone or strip_meta(question)
        if evaluation is None:
            evaluation = evaluate_query(query, floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING)
        note = f"lambda {evaluation.lambda_mult:.2f} ({evaluation.query_type}): "
        note += "; ".join(evaluation.reasons)
        update: dict[str, Any] = {
            "question": question,
            "query": query,
            "query_history": Overwrite([query]),
            "lambda_mult": evaluation.lambda_mult,
            "query_evaluation": _evaluation_data(evaluation),
            "knowledge_options": options,
            "documents": [],
            "retrieval": {},
            "document_grades": None,
            "iteration_count": 0,
            "draft_answer": "",
            "citations": [],
            "response_grade": None,
            "low_confidence": False,
            "knowledge_trace": Overwrite([trace("evaluate_query", evaluation.method, note)]),
        }
        if errors:
            update["errors"] = errors
        return update

    return evaluate_query_node


# --- retrieve ------------------------------------------------------------------------------------


def make_retrieve(deps: GraphDeps) -> Node:
    async def retrieve(state: MultiAgentState) -> dict[str, Any]:
        """Hybrid search for the current query: RERANKER_FETCH_K candidates, reranked by the
        cross-encoder when ENABLE_RERANKING is on, RETRIEVAL_TOP_K kept."""
        store = await store_for(deps)
        options = state["knowledge_options"]
        query = state["query"]
        lam = float(state.get("lambda_mult", 0.5))
        fetch_k, top_k = options["fetch_k"], options["top_k"]
        errors: list[str] = []
        try:
            result = await store.search(
                query, lambda_mult=lam, fetch_k=fetch_k, top_k=top_k, rerank=options["reranking"]
            )
        except RerankerError as exc:  # a missing model must not cost the user the answer
            log.warning("reranking failed: %s", exc)
            errors.append(f"retrieve: reranking skipped ({exc})")
            result = await store.search(
                query, lambda_mult=lam, fetch_k=fetch_k, top_k=top_k, rerank=False
            )
        empty = not result.hits and (await store.stats())["documents"] == 0
        rerank_note = "cross-encoder" if result.reranked else "cross-encoder off"
        note = (
            "the knowledge base is empty"
            if empty
            else f"{len(result.hits)} hit(s) for {query!r} ({result.ordering} order, {rerank_note})"
        )
        update: dict[str, Any] = {
            "documents": [hit.to_dict() for hit in result.hits],
            "retrieval": {
                "query": query,
                "lambda_mult": result.lambda_mult,
                "fetch_k": result.fetch_k,
                "top_k": result.top_k,
                "ordering": result.ordering,
                "reranked": result.reranked,
                "reranking_enabled": options["reranking"],
                "hits": len(result.hits),
                "empty_knowledge_base": empty,
                "timings_ms": result.timings_ms,
            },
            "knowledge_trace": [trace("retrieve", result.ordering, note)],
        }
        if errors:
            update["errors"] = errors
        return update

    return retrieve


# --- grade_documents -----------------------------------------------------------------------------


async def _grade_with_model(
    model: Any, question: str, hits: Sequence[SearchHit], threshold: float, min_relevant: int
) -> tuple[DocumentGrading | None, list[str]]:
    """One LLM relevance call per retrieved document (concurrently); a document whose call
    fails is graded by its retrieval score instead. None when every call failed."""
    best: dict[str, SearchHit] = {}
    texts: dict[str, list[str]] = {}
    for hit in hits:
        best.setdefault(hit.document_id, hit)
        texts.setdefault(hit.document_id, []).append(hit.text)
    verdicts = await asyncio.gather(
        *(
            llm.judge_document(model, question, hit.title, "\n\n".join(texts[doc_id]))
            for doc_id, hit in best.items()
        ),
        return_exceptions=True,
    )
    grades: list[DocumentGrade] = []
    errors: list[str] = []
    for hit, verdict in zip(best.values(), verdicts, strict=True):
        if isinstance(verdict, DocumentRelevance):
            grades.append(DocumentGrade(hit.chunk_id, hit.document_id, hit.title,
                                        verdict.score, verdict.relevant))  # fmt: skip
            continue
        if not isinstance(verdict, Exception):  # cancellation and the like: not ours to eat
            raise verdict
        errors.append(failure("grade_documents", verdict, f"the score of {hit.title!r}"))
        grades.append(DocumentGrade(hit.chunk_id, hit.document_id, hit.title, hit.score,
                                    hit.score >= threshold))  # fmt: skip
    if grades and len(errors) == len(grades):
        return None, errors[:1]
    grading = judge_grades(grades, threshold=threshold, min_relevant=min_relevant, method="llm")
    return grading, errors


async def rescored(
    deps: GraphDeps, state: MultiAgentState, hits: list[SearchHit], asked: str
) -> list[SearchHit]:
    """`hits` with their ``score`` recomputed against `asked`: a rewritten query (PRF adds the
    top documents' own words) would make its own results look relevant."""
    store = await store_for(deps)
    reranked = bool((state.get("retrieval") or {}).get("reranked"))
    scores = await store.relevance(
        asked, hits, lambda_mult=float(state.get("lambda_mult", 0.5)), rerank=reranked
    )
    if reranked:
        return [replace(h, rerank_score=score) for h, score in zip(hits, scores, strict=True)]
    return [replace(h, relevance=score) for h, score in zip(hits, scores, strict=True)]


def make_grade_documents(deps: GraphDeps) -> Node:
    async def grade_documents_node(state: MultiAgentState) -> dict[str, Any]:
        """Judge the retrieved documents against what was asked: pass when at least
        REFLECTION_MIN_RELEVANT_DOCS are relevant and their mean score >= REFLECTION_DOC_SCORE_
        THRESHOLD (LLM relevance per document, or the retrieval score threshold)."""
        options = state["knowledge_options"]
        threshold, minimum = options["doc_score_threshold"], options["min_relevant_docs"]
        hits = hits_from(state.get("documents") or [])
        asked = asked_query(state)
        model = deps.llm("fast") if hits else None
        errors: list[str] = []
        grading: DocumentGrading | None = None
        if model is not None:
            grading, errors = await _grade_with_model(model, asked, hits, threshold, minimum)
        if grading is None:
            if hits and state["query"] != asked:
                hits = await rescored(deps, state, hits, asked)
            grading = grade_documents(hits, threshold=threshold, min_relevant=minimum)
        verdict = "passed" if grading.passed else "failed"
        update: dict[str, Any] = {
            "document_grades": _grading_data(grading, threshold, minimum),
            "knowledge_trace": [
                trace("grade_documents", grading.method, f"{verdict}: {grading.reason}")
            ],
        }
        if errors:
            update["errors"] = errors
        return update

    return grade_documents_node


# --- transform_query -----------------------------------------------------------------------------


def failure_reasons(state: MultiAgentState) -> list[str]:
    """Why the current attempt is being retried: the failed document or answer grade."""
    reasons: list[str] = []
    grades = state.get("document_grades")
    if grades and not grades.get("passed"):
        reasons.append(f"documents: {grades.get('reason', 'failed')}")
    response = state.get("response_grade")
    if response and not response.get("passed"):
        reasons.extend(f"answer: {r}" for r in response.get("reasons") or ["failed its check"])
    return reasons


def make_transform_query(deps: GraphDeps) -> Node:
    async def transform_query(state: MultiAgentState) -> dict[str, Any]:
        """Rewrite the query for another retrieval (one retry): LLM rewrite from the failure
        reasons, or pseudo-relevance-feedback expansion from the documents found."""
        history = list(state.get("query_history") or [state["query"]])
        hits = hits_from(state.get("documents") or [])
        reasons = failure_reasons(state)
        model = deps.llm("fast")
        errors: list[str] = []
        new_query: str | None = None
        method, note = "", ""
        if model is not None:
            try:
                rewrite = await llm.rewrite_query(
                    model, state["question"], history, reasons, [h.title for h in hits]
                )
                if rewrite.query and rewrite.query.lower() not in {q.lower() for q in history}:
                    new_query, method, note = rewrite.query, "llm", rewrite.reason
                else:
                    note = "the model repeated an earlier query; "
            except Exception as exc:
                log.warning("query rewrite failed: %s", exc)
                errors.append(failure("transform_query", exc, "pseudo-relevance feedback"))
        if new_query is None:
            store = await store_for(deps)
            expansion = await asyncio.to_thread(
                expand_query, state["query"], hits, idf=store.lexical.idf_of
            )
            new_query, method = expansion.query, expansion.method
            added = ", ".join(expansion.added_terms) or "none"
            note += f"added terms from the top documents: {added}"
        count = state.get("iteration_count", 0) + 1
        update: dict[str, Any] = {
            "query": new_query,
            "query_history": [new_query],
            "iteration_count": count,
            "knowledge_trace": [trace("transform_query", method, f"retry {count}: {note}")],
        }
        if errors:
            update["errors"] = errors
        return update

    return transform_query
