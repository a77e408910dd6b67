"""The knowledge agent's search stages: ``evaluate_query``, ``retrieve``, ``grade_documents``,
``transform_query``.

Each is a plain async function ``state, runtime -> partial update``; models and the store
come from the run's services, the switches from its options. Every judging step uses the model
when one is configured and the offline strategy otherwise (or when the model call fails, which
is recorded in ``errors``); the method used is in the stage's ``knowledge_trace`` entry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime

from agents.contract.context import RunContext, context_of, services_of
from agents.contract.fallbacks import ModelDeclined, failure, model_or_offline
from agents.contract.messages import last_user_text
from agents.knowledge import llm
from agents.knowledge.common import (
    asked_query,
    hits_from,
    resolve_options,
    scope_of,
    store_of,
    trace,
)
from agents.knowledge.edges import retry_blocked
from agents.knowledge.llm import DocumentRelevance
from agents.knowledge.state import KnowledgeOptions, KnowledgeState
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
from tools.knowledge.scope import OPERATOR, Scope
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import SearchHit
from tools.providers.chat_models import message_text
from tools.rerank import RerankerError

log = logging.getLogger(__name__)

Node = Callable[[KnowledgeState, Runtime[RunContext]], Awaitable[dict[str, Any]]]

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


async def evaluate_query_node(
    state: KnowledgeState, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Start the turn's retrieval: resolve the switches, turn the
    question into a search query (the model's standalone rewrite, or the question without
    its words about the knowledge base itself) and weigh the lexical vs semantic legs
    (``lambda_mult``) by LLM classification or the query's shape."""
    messages = state.get("messages", [])
    question = " ".join(last_user_text(messages).split())
    services = services_of(runtime)
    options = resolve_options(services.settings, context_of(runtime).options(KnowledgeOptions))
    model = services.llm("fast")

    async def by_model() -> tuple[QueryEvaluation, str]:
        assert model is not None
        evaluation, standalone = await llm.classify_query(
            model, question, _history(messages), floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING
        )
        return evaluation, standalone or strip_meta(question)

    def offline() -> tuple[QueryEvaluation, str]:
        query = strip_meta(question)
        return evaluate_query(query, floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING), query

    outcome = await model_or_offline(
        by_model if model is not None else None,
        offline,
        stage="evaluate_query",
        fallback="the query-shape heuristic",
    )
    (evaluation, query), errors = outcome.value, outcome.errors
    note = f"lambda {evaluation.lambda_mult:.2f} ({evaluation.query_type}): "
    note += "; ".join(evaluation.reasons)
    update: dict[str, Any] = {
        "question": question,
        "query": query,
        "query_history": [query],
        "lambda_mult": evaluation.lambda_mult,
        "query_evaluation": _evaluation_data(evaluation),
        "knowledge_options": options,
        "iteration_count": 0,
        "knowledge_trace": [trace("evaluate_query", evaluation.method, note)],
    }
    if errors:
        update["errors"] = errors
    return update


# --- retrieve ------------------------------------------------------------------------------------


async def retrieve(state: KnowledgeState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Hybrid search for the current query: RERANKER_FETCH_K candidates, reranked by the
    cross-encoder when ENABLE_RERANKING is on, RETRIEVAL_TOP_K kept."""
    store = store_of(services_of(runtime))
    scope = scope_of(runtime)
    options = state["knowledge_options"]
    query = state["query"]
    lam = float(state.get("lambda_mult", 0.5))
    fetch_k, top_k = options["fetch_k"], options["top_k"]
    errors: list[str] = []
    try:
        result = await store.search(
            query, lambda_mult=lam, fetch_k=fetch_k, top_k=top_k, rerank=options["reranking"],
            scope=scope,
        )  # fmt: skip
    except RerankerError as exc:  # a missing model must not cost the user the answer
        log.warning("reranking failed: %s", exc)
        errors.append(f"retrieve: reranking skipped ({exc})")
        result = await store.search(
            query, lambda_mult=lam, fetch_k=fetch_k, top_k=top_k, rerank=False, scope=scope
        )
    earlier = state.get("retrieval") or {}
    size = earlier.get("knowledge_base") or await _knowledge_base_size(store, scope)
    empty = not result.hits and size["documents"] == 0
    seen = list(earlier.get("seen_chunk_ids") or [])
    new_chunks = [h.chunk_id for h in result.hits if h.chunk_id not in seen]
    seen.extend(new_chunks)
    rerank_note = "cross-encoder" if result.reranked else "cross-encoder off"
    note = (
        "the knowledge base is empty"
        if empty
        else f"{len(result.hits)} hit(s) for {query!r} ({result.ordering} order, {rerank_note})"
    )
    if earlier and not empty:
        note += f"; {len(new_chunks)} not found before"
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
            "knowledge_base": size,
            "documents_retrieved": len({h.document_id for h in result.hits}),
            "new_chunks": len(new_chunks),
            "seen_chunk_ids": seen,
            "timings_ms": result.timings_ms,
        },
        "knowledge_trace": [trace("retrieve", result.ordering, note)],
    }
    if errors:
        update["errors"] = errors
    return update


async def _knowledge_base_size(store: KnowledgeStore, scope: Scope) -> dict[str, int]:
    """Documents and chunks the search covers (once per turn: what the bar of relevant
    documents and the retries can count on)."""
    stats = await store.stats(scope)
    return {"documents": int(stats["documents"]), "chunks": int(stats["chunks"])}


# --- grade_documents -----------------------------------------------------------------------------


def relevant_docs_needed(state: KnowledgeState, hits: Sequence[SearchHit]) -> tuple[int, str]:
    """The bar of relevant documents for this grading, and why it is lower than the setting.

    REFLECTION_MIN_RELEVANT_DOCS is a bar the documents can meet: never more than the
    knowledge base holds, nor more than the retrieved set holds (when the best ``top_k``
    chunks come from one document, that document is all a grader can judge)."""
    setting = state["knowledge_options"]["min_relevant_docs"]
    retrieved = len({h.document_id for h in hits})
    stored = int(((state.get("retrieval") or {}).get("knowledge_base") or {}).get("documents", 0))
    limits = [(retrieved, "the retrieved set holds"), (stored, "the knowledge base holds")]
    bar, why = setting, ""
    for available, where in limits:
        if 0 < available < bar:
            bar, why = available, f"{where} {available} document(s)"
    return bar, why


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
    store: KnowledgeStore,
    state: KnowledgeState,
    hits: list[SearchHit],
    asked: str,
    scope: Scope = OPERATOR,
) -> list[SearchHit]:
    """`hits` with their ``score`` recomputed against `asked`: a rewritten query (PRF adds the
    top documents' own words) would make its own results look relevant."""
    reranked = bool((state.get("retrieval") or {}).get("reranked"))
    scores = await store.relevance(
        asked, hits, lambda_mult=float(state.get("lambda_mult", 0.5)), rerank=reranked,
        scope=scope,
    )  # fmt: skip
    if reranked:
        return [replace(h, rerank_score=score) for h, score in zip(hits, scores, strict=True)]
    return [replace(h, relevance=score) for h, score in zip(hits, scores, strict=True)]


async def grade_documents_node(
    state: KnowledgeState, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Judge the retrieved documents against what was asked: pass when at least
    REFLECTION_MIN_RELEVANT_DOCS are relevant (fewer when the knowledge base or the retrieved
    set holds fewer documents: `relevant_docs_needed`) and their mean score >=
    REFLECTION_DOC_SCORE_THRESHOLD (LLM relevance per document, or the retrieval score
    threshold)."""
    options = state["knowledge_options"]
    threshold = options["doc_score_threshold"]
    hits = hits_from(state.get("documents") or [])
    minimum, lowered = relevant_docs_needed(state, hits)
    asked = asked_query(state)
    services = services_of(runtime)
    model = services.llm("fast") if hits else None
    errors: list[str] = []
    grading: DocumentGrading | None = None
    if model is not None:
        grading, errors = await _grade_with_model(model, asked, hits, threshold, minimum)
    if grading is None:
        if hits and state["query"] != asked:
            hits = await rescored(store_of(services), state, hits, asked, scope_of(runtime))
        grading = grade_documents(hits, threshold=threshold, min_relevant=minimum)
    verdict = "passed" if grading.passed else "failed"
    note = f"{verdict}: {grading.reason}"
    if lowered:
        note += f" (REFLECTION_MIN_RELEVANT_DOCS={options['min_relevant_docs']}, but {lowered})"
    data = _grading_data(grading, threshold, minimum)
    data["min_relevant_setting"] = options["min_relevant_docs"]
    if not grading.passed:
        blocked = retry_blocked({**state, "document_grades": data})
        if blocked:
            note += f"; no retry: {blocked}"
    update: dict[str, Any] = {
        "document_grades": data,
        "knowledge_trace": [trace("grade_documents", grading.method, note)],
    }
    if errors:
        update["errors"] = errors
    return update


# --- transform_query -----------------------------------------------------------------------------


def failure_reasons(state: KnowledgeState) -> list[str]:
    """Why the current attempt is being retried: the failed document or answer grade."""
    reasons: list[str] = []
    grades = state.get("document_grades")
    if grades and not grades.get("passed"):
        reasons.append(f"documents: {grades.get('reason', 'failed')}")
    response = state.get("response_grade")
    if response and not response.get("passed"):
        reasons.extend(f"answer: {r}" for r in response.get("reasons") or ["failed its check"])
    return reasons


async def transform_query(state: KnowledgeState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Rewrite the query for another retrieval (one retry): LLM rewrite from the failure
    reasons, or pseudo-relevance-feedback expansion from the documents found."""
    history = list(state.get("query_history") or [state["query"]])
    hits = hits_from(state.get("documents") or [])
    reasons = failure_reasons(state)
    services = services_of(runtime)
    model = services.llm("fast")

    async def by_model() -> tuple[str, str, str]:
        assert model is not None
        rewrite = await llm.rewrite_query(
            model, state["question"], history, reasons, [h.title for h in hits]
        )
        if not rewrite.query or rewrite.query.lower() in {q.lower() for q in history}:
            raise ModelDeclined("the model repeated an earlier query")
        return rewrite.query, "llm", rewrite.reason

    async def offline() -> tuple[str, str, str]:
        store = store_of(services)
        scope = scope_of(runtime)
        expansion = await asyncio.to_thread(
            expand_query, state["query"], hits, idf=lambda word: store.idf_of(word, scope)
        )
        added = ", ".join(expansion.added_terms) or "none"
        return expansion.query, expansion.method, f"added terms from the top documents: {added}"

    outcome = await model_or_offline(
        by_model if model is not None else None,
        offline,
        stage="transform_query",
        fallback="pseudo-relevance feedback",
    )
    (new_query, method, note), errors = outcome.value, outcome.errors
    if outcome.note:
        note = f"{outcome.note}; {note}"
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
