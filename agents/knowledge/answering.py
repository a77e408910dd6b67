"""The knowledge agent's answering stages: ``generate_answer`` and ``grade_response``, and the
answer the user (and the API's ``data.knowledge``) gets.

Both stages write ``agent_answers["knowledge"]``: ``generate_answer`` its draft, and
``grade_response`` the same answer with the grade (and, when it failed with no retries left,
marked low-confidence). Text and data are composed by `compose_answer` from the state.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from langgraph.runtime import Runtime

from agents.contract.context import RunContext, services_of
from agents.contract.fallbacks import model_or_offline
from agents.contract.state import AgentAnswer
from agents.knowledge import llm
from agents.knowledge.citations import Citation, source_key
from agents.knowledge.common import (
    asked_query,
    citation_data,
    hits_from,
    number_sources,
    sources_listing,
    trace,
)
from agents.knowledge.edges import retry_blocked
from agents.knowledge.extractive import (
    NO_ANSWER,
    ResponseGrade,
    extractive_answer,
    grade_response,
)
from agents.knowledge.prompts import EMPTY_KNOWLEDGE_BASE, LOW_CONFIDENCE
from agents.knowledge.state import AGENT, KnowledgeState
from agents.knowledge.text import citations_in
from tools.knowledge.types import SearchHit

log = logging.getLogger(__name__)

METHOD_NOTES = {
    "llm": "written by the language model from the cited sources",
    "extractive": "extractive: sentences quoted from the cited documents",
    "none": "no documents to answer from",
}


def context_hits(state: Mapping[str, Any]) -> list[SearchHit]:
    """What the answer is built from: the documents graded relevant, or (no grading, or none
    relevant) every retrieved document -- "answer with what there is"."""
    hits = hits_from(state.get("documents") or [])
    grades = state.get("document_grades")
    if grades:
        relevant = {g["document_id"] for g in grades.get("grades") or [] if g.get("relevant")}
        if relevant:
            return [h for h in hits if h.document_id in relevant]
    return hits


def low_confidence_reason(state: Mapping[str, Any]) -> str | None:
    """Why the answer must be marked low-confidence (None when it need not be)."""
    grades = state.get("document_grades")
    response = state.get("response_grade")
    retries = state.get("iteration_count", 0)
    after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    problems = []
    if grades is not None and not grades.get("passed"):
        problems.append(f"the documents found did not pass grading ({grades.get('reason')})")
    if response is not None and not response.get("passed"):
        why = "; ".join(response.get("reasons") or []) or "it failed its check"
        problems.append(f"the answer did not pass its check ({why})")
    return " and ".join(problems) + after if problems else None


def skipped_stages(options: Mapping[str, Any]) -> list[str]:
    """The stages this turn's switches turned off, and which switch did."""
    if not options.get("reflection", True):
        return ["grade_documents, transform_query, grade_response (ENABLE_REFLECTION is off)"]
    skipped = []
    if not options.get("document_grading", True):
        skipped.append("grade_documents (ENABLE_DOCUMENT_GRADING is off)")
    if not options.get("query_transformation", True):
        skipped.append("transform_query (ENABLE_QUERY_TRANSFORMATION is off: no retries)")
    if not options.get("response_grading", True):
        skipped.append("grade_response (ENABLE_RESPONSE_GRADING is off)")
    if not options.get("reranking", False):
        skipped.append("cross-encoder reranking in retrieve (ENABLE_RERANKING is off)")
    return skipped


def compose_answer(state: Mapping[str, Any], method: str) -> AgentAnswer:
    """The agent's answer from the state: the draft, a low-confidence mark when due, a line
    saying how it was produced; and the data the API returns under ``data.knowledge``."""
    reason = low_confidence_reason(state)
    draft = state.get("draft_answer") or NO_ANSWER
    parts = [draft]
    if reason:
        check = " Check the cited sources before relying on it." if state.get("citations") else ""
        parts.append(f"_{LOW_CONFIDENCE.format(reason=reason)}{check}_")
    parts.append(f"_Knowledge agent: {METHOD_NOTES.get(method, method)}._")
    trace_entries = list(state.get("knowledge_trace") or [])
    data: dict[str, Any] = {
        "question": state.get("question"),
        "query": state.get("query"),
        "queries": list(state.get("query_history") or []),
        "lambda_mult": state.get("lambda_mult"),
        "query_evaluation": state.get("query_evaluation"),
        "iterations": state.get("iteration_count", 0),
        "low_confidence": reason is not None,
        "low_confidence_reason": reason,
        "citations": list(state.get("citations") or []),
        "document_grades": state.get("document_grades"),
        "response_grade": state.get("response_grade"),
        "retrieval": state.get("retrieval"),
        "methods": {e["stage"]: e["method"] for e in trace_entries},
        "skipped": skipped_stages(state.get("knowledge_options") or {}),
        "stages": trace_entries,
    }
    return AgentAnswer(agent=AGENT, answer="\n\n".join(parts), method=method, data=data)


def _answer_method(state: Mapping[str, Any]) -> str:
    for entry in reversed(state.get("knowledge_trace") or []):
        if entry["stage"] == "generate_answer":
            return str(entry["method"])
    return "none"


# --- generate_answer -----------------------------------------------------------------------------


async def generate_answer(state: KnowledgeState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Answer from the documents with ``[n]`` citations and a Sources list: the chat model
    with the numbered sources, or the extractive answer. Says so when the knowledge base
    is empty instead of guessing."""
    errors: list[str] = []
    hits = context_hits(state)
    citations: list[Citation] = []
    if (state.get("retrieval") or {}).get("empty_knowledge_base"):
        text, method, note = EMPTY_KNOWLEDGE_BASE, "none", "the knowledge base is empty"
    elif not hits:
        text, method, note = NO_ANSWER, "none", "nothing was retrieved"
    else:
        model = services_of(runtime).llm("chat")

        async def by_model() -> tuple[str, list[Citation]]:
            assert model is not None
            sources = number_sources(hits)
            body = await llm.write_answer(model, state["question"], sources)
            cited = set(citations_in(body))
            chosen = [c for c in sources if c.number in cited]
            listing = f"\n\n{sources_listing(chosen)}" if chosen else ""
            return body + listing, chosen

        def offline() -> tuple[str, list[Citation]]:
            extracted = extractive_answer(asked_query(state), hits)
            return extracted.text, extracted.citations

        outcome = await model_or_offline(
            by_model if model is not None else None,
            offline,
            stage="generate_answer",
            fallback="the extractive answer",
        )
        (text, citations), errors = outcome.value, outcome.errors
        method = "llm" if outcome.by_model else "extractive"
        note = f"{len(citations)} source(s) cited from {len(hits)} retrieved chunk(s)"
    update: dict[str, Any] = {
        "draft_answer": text,
        "citations": [citation_data(c) for c in citations],
        "response_grade": None,  # a retry's new draft is not graded yet
        "knowledge_trace": [trace("generate_answer", method, note)],
    }
    state_after = {**state, **update}
    state_after["knowledge_trace"] = state.get("knowledge_trace", []) + update["knowledge_trace"]
    update["low_confidence"] = low_confidence_reason(state_after) is not None
    update["agent_answers"] = {AGENT: compose_answer(state_after, method)}
    update["agent_contexts"] = {AGENT: {"last_sources": [c.title for c in citations]}}
    if errors:
        update["errors"] = errors
    return update


# --- grade_response ------------------------------------------------------------------------------


def _sources_by_number(state: Mapping[str, Any]) -> list[Citation]:
    """The cited sources with their full retrieved text, rebuilt from the documents."""
    by_source: dict[tuple[str, str | None], list[str]] = {}
    for hit in hits_from(state.get("documents") or []):
        by_source.setdefault(source_key(hit), []).append(hit.text)
    return [
        Citation(c["number"], c["document_id"], c["title"], c["source"], c["chunk_id"],
                 "\n\n".join(by_source.get((c["document_id"], c.get("page")),
                                             [c.get("snippet", "")])),
                 c.get("page"))
        for c in state.get("citations") or []
    ]  # fmt: skip


def _heuristic_grade(question: str, answer: str, sources: Sequence[Citation]) -> ResponseGrade:
    texts = [""] * max((c.number for c in sources), default=0)
    for c in sources:
        texts[c.number - 1] = c.text
    return grade_response(question, answer, texts)


async def grade_response_node(
    state: KnowledgeState, runtime: Runtime[RunContext]
) -> dict[str, Any]:
    """Check the answer against its sources (LLM grade, or query coverage + support of
    each sentence by its cited source); a failure is retried while retries are left, and
    marks the answer low-confidence when none are."""
    question, draft = state["question"], state.get("draft_answer") or ""
    sources = _sources_by_number(state)
    model = services_of(runtime).llm("fast")

    async def by_model() -> ResponseGrade:
        assert model is not None
        return await llm.grade_answer(model, question, draft, sources)

    outcome = await model_or_offline(
        by_model if model is not None and sources else None,
        lambda: _heuristic_grade(asked_query(state), draft, sources),
        stage="grade_response",
        fallback="the coverage/support heuristic",
    )
    grade, errors = outcome.value, outcome.errors
    grade_data = asdict(grade)
    state_after = {**state, "response_grade": grade_data}
    blocked = None if grade.passed else retry_blocked(state_after)
    retrying = not grade.passed and blocked is None
    verdict = "passed" if grade.passed else "failed" + (", retrying" if retrying else "")
    note = f"{verdict} (score {grade.score:.2f}): {'; '.join(grade.reasons)}"
    if blocked:
        note += f"; no retry: {blocked}"
    entry = trace("grade_response", grade.method, note)
    state_after["knowledge_trace"] = [*state.get("knowledge_trace", []), entry]
    update: dict[str, Any] = {
        "response_grade": grade_data,
        "low_confidence": not retrying and low_confidence_reason(state_after) is not None,
        "knowledge_trace": [entry],
        "agent_answers": {AGENT: compose_answer(state_after, _answer_method(state))},
    }
    if errors:
        update["errors"] = errors
    return update
