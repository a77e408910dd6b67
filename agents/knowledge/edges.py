"""The knowledge agent's routing functions: the reflection loop as conditional edges.

Pure functions of the state (the switches were resolved into ``knowledge_options`` by
``evaluate_query``), each returning the next node's name:

| after | goes to |
|---|---|
| retrieve | grade_documents; generate_answer when grading is off or the base is empty |
| grade_documents | generate_answer when they passed or no retry is left; else transform_query |
| transform_query | retrieve (a plain edge) |
| generate_answer | grade_response; the end when grading is off or the base is empty |
| grade_response | the end when it passed or no retry is left; else transform_query |

A retry is allowed while ``iteration_count < max_iterations`` (``transform_query`` counts it),
so ``iteration_count`` never exceeds REFLECTION_MAX_ITERATIONS, and only while another search
can find something new (`retry_blocked`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal


def _options(state: Mapping[str, Any]) -> Mapping[str, Any]:
    return state.get("knowledge_options") or {}


def _empty(state: Mapping[str, Any]) -> bool:
    return bool((state.get("retrieval") or {}).get("empty_knowledge_base"))


def retry_blocked(state: Mapping[str, Any]) -> str | None:
    """Why a failed grade may not rewrite the query and search again (None: it may).

    A retry runs only when it can change the outcome: the switches allow it, retries are left,
    and another search can still find something the earlier ones did not: not when every chunk
    of the knowledge base was already retrieved in this turn, nor after a retry that found only
    chunks earlier searches had found (the rewrites have converged: grading and the answer
    would see the same text again)."""
    options = _options(state)
    if not (options.get("reflection") and options.get("query_transformation")):
        return "query transformation is off"
    if _empty(state):
        return "the knowledge base is empty"
    bound = int(options.get("max_iterations", 0))
    done = int(state.get("iteration_count", 0))
    if done >= bound:
        return f"no retries left (REFLECTION_MAX_ITERATIONS={bound})"
    retrieval = state.get("retrieval") or {}
    total = (retrieval.get("knowledge_base") or {}).get("chunks")
    seen = len(retrieval.get("seen_chunk_ids") or [])
    if total is not None and seen >= int(total):
        return f"all {total} chunk(s) of the knowledge base were already retrieved"
    if done > 0 and retrieval.get("new_chunks") == 0:
        return "the last retry found only chunks that earlier searches had found"
    return None


def can_retry(state: Mapping[str, Any]) -> bool:
    """Whether a failed grade may rewrite the query and search again (see `retry_blocked`)."""
    return retry_blocked(state) is None


def after_retrieve(state: Mapping[str, Any]) -> Literal["grade_documents", "generate_answer"]:
    """Grade the documents, unless grading is off or there is nothing in the knowledge base."""
    options = _options(state)
    if options.get("reflection") and options.get("document_grading") and not _empty(state):
        return "grade_documents"
    return "generate_answer"


def after_document_grading(
    state: Mapping[str, Any],
) -> Literal["generate_answer", "transform_query"]:
    """Answer when the documents passed (or no retries are left); otherwise rewrite the query."""
    passed = bool((state.get("document_grades") or {}).get("passed"))
    return "transform_query" if not passed and can_retry(state) else "generate_answer"


def after_answer(state: Mapping[str, Any]) -> Literal["grade_response", "__end__"]:
    """Grade the answer, unless grading is off or there was nothing to answer from."""
    options = _options(state)
    if options.get("reflection") and options.get("response_grading") and not _empty(state):
        return "grade_response"
    return "__end__"


def after_response_grading(
    state: Mapping[str, Any],
) -> Literal["transform_query", "__end__"]:
    """Done when the answer passed (or no retries are left); otherwise rewrite the query."""
    passed = bool((state.get("response_grade") or {}).get("passed"))
    return "transform_query" if not passed and can_retry(state) else "__end__"
