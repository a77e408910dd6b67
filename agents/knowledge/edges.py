"""The knowledge agent's routing functions: the reflection loop as conditional edges.

Pure functions of the state (the switches were resolved into ``knowledge_options`` by
``evaluate_query``), each returning the next node's name:

| after | goes to |
|---|---|
| retrieve | grade_documents; generate_answer when grading is off or the base is empty |
| grade_documents | generate_answer when they passed or no retry is left; else transform_query |
| transform_query | retrieve (a plain edge) |
| generate_answer | grade_response; detect_handoff when grading is off or the base is empty |
| grade_response | detect_handoff when it passed or no retry is left; else transform_query |

A retry is allowed while ``iteration_count < max_iterations`` (``transform_query`` counts it),
so ``iteration_count`` never exceeds REFLECTION_MAX_ITERATIONS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal


def _options(state: Mapping[str, Any]) -> Mapping[str, Any]:
    return state.get("knowledge_options") or {}


def _empty(state: Mapping[str, Any]) -> bool:
    return bool((state.get("retrieval") or {}).get("empty_knowledge_base"))


def can_retry(state: Mapping[str, Any]) -> bool:
    """Whether a failed grade may rewrite the query and search again."""
    options = _options(state)
    if not (options.get("reflection") and options.get("query_transformation")) or _empty(state):
        return False
    return int(state.get("iteration_count", 0)) < int(options.get("max_iterations", 0))


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


def after_answer(state: Mapping[str, Any]) -> Literal["grade_response", "detect_handoff"]:
    """Grade the answer, unless grading is off or there was nothing to answer from."""
    options = _options(state)
    if options.get("reflection") and options.get("response_grading") and not _empty(state):
        return "grade_response"
    return "detect_handoff"


def after_response_grading(
    state: Mapping[str, Any],
) -> Literal["transform_query", "detect_handoff"]:
    """Done when the answer passed (or no retries are left); otherwise rewrite the query."""
    passed = bool((state.get("response_grade") or {}).get("passed"))
    return "transform_query" if not passed and can_retry(state) else "detect_handoff"
