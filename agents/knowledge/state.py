"""The knowledge agent's own state: its subgraph's schema (the root state never holds it).

Every value is plain data (str, numbers, lists, dicts), so the Redis saver checkpoints it as is.
The subgraph starts from a fresh state every turn (it is a node of the root graph), so nothing
is reset by hand.

The reflection loop reads only counters and verdicts kept here: ``iteration_count`` (retries so
far, bounded by ``options["max_iterations"]``), ``document_grades["passed"]`` and
``response_grade["passed"]``.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from pydantic import Field

from agents.contract.context import AgentOptions, override
from agents.contract.state import AgentState
from tools.knowledge.scope import Filters

#: The agent's registry name (routing, ``agent_answers`` key, ``agent_contexts`` domain).
AGENT = "knowledge"
#: The agent's stage nodes, in pipeline order (the names Studio shows).
STAGES = (
    "evaluate_query",
    "retrieve",
    "grade_documents",
    "transform_query",
    "generate_answer",
    "grade_response",
)


class KnowledgeOptions(AgentOptions):
    """Per-run overrides of the knowledge agent's settings (unset = the setting)."""

    enable_reflection: bool | None = override("enable_reflection")
    enable_document_grading: bool | None = override("enable_document_grading")
    enable_response_grading: bool | None = override("enable_response_grading")
    enable_query_transformation: bool | None = override("enable_query_transformation")
    enable_reranking: bool | None = override("enable_reranking")
    reflection_max_iterations: int | None = override("reflection_max_iterations")
    retrieval_top_k: int | None = override("retrieval_top_k")
    filters: Filters | None = Field(
        None,
        description="Search only documents matching these (collection, source, title, metadata "
        "conditions), as POST /documents/search's filters; applied inside the search.",
    )


class EffectiveOptions(TypedDict):
    """The switches and bounds of this turn: settings, overridden by the run's options."""

    reflection: bool
    """ENABLE_REFLECTION: master switch of grading, query rewriting and retries."""
    document_grading: bool
    """ENABLE_DOCUMENT_GRADING (only with reflection on)."""
    response_grading: bool
    """ENABLE_RESPONSE_GRADING (only with reflection on)."""
    query_transformation: bool
    """ENABLE_QUERY_TRANSFORMATION (only with reflection on); without it nothing is retried."""
    reranking: bool
    """ENABLE_RERANKING: the cross-encoder reorders the fetched candidates."""
    max_iterations: int
    """REFLECTION_MAX_ITERATIONS: retries (query rewrites) allowed in one turn."""
    min_relevant_docs: int
    """REFLECTION_MIN_RELEVANT_DOCS."""
    doc_score_threshold: float
    """REFLECTION_DOC_SCORE_THRESHOLD."""
    top_k: int
    """RETRIEVAL_TOP_K: hits given to the answer."""
    fetch_k: int
    """RERANKER_FETCH_K: candidates scored (and reranked) before the top-k cut."""


class TraceEntry(TypedDict):
    """One stage run: what it did, in a few words."""

    stage: str
    """The node name."""
    method: str
    """The strategy used (``llm``, ``heuristic``, ``score-threshold``, ``prf-rm3``, ...)."""
    note: str
    """What happened (or why the stage passed through)."""


# --- the state -------------------------------------------------------------------------------


class KnowledgeState(AgentState, total=False):
    """The knowledge agent's working state within a turn."""

    question: str
    """The user's question (the latest human message)."""
    query: str
    """The query searched for now: the question, its standalone form, or a rewrite."""
    query_history: Annotated[list[str], operator.add]
    """Every query searched for in this turn, in order."""
    lambda_mult: float
    """Hybrid weight from `evaluate_query`: 0 = lexical only, 1 = semantic only."""
    query_evaluation: dict[str, Any]
    """How `lambda_mult` was chosen: method, query type, reasons."""
    knowledge_options: EffectiveOptions
    """This turn's switches and bounds (read by the routing functions)."""
    documents: list[dict[str, Any]]
    """The hits of the latest retrieval (`SearchHit.to_dict()`), best first."""
    retrieval: dict[str, Any]
    """How the latest retrieval ran: ordering, reranked, timings, empty knowledge base."""
    document_grades: dict[str, Any] | None
    """The latest document grading: passed, per-document grades, reason, method."""
    iteration_count: int
    """Retries so far (query rewrites); never above `knowledge_options["max_iterations"]`."""
    draft_answer: str
    """The latest generated answer, with its ``[n]`` citations and Sources list."""
    citations: list[dict[str, Any]]
    """The sources the answer cites: number, title, source, document and chunk ids, snippet."""
    response_grade: dict[str, Any] | None
    """The latest answer grade: passed, score, reasons, method."""
    low_confidence: bool
    """True when the answer was given although the documents or the answer failed grading."""
    knowledge_trace: Annotated[list[TraceEntry], operator.add]
    """The stages run in this turn, with the method and a note each."""
