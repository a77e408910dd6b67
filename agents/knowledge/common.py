"""Helpers the knowledge agent's nodes share: this turn's options, the store, hits from state."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agents.contract.context import AgentServices, RunContext, context_of
from agents.knowledge.citations import Citation, source_key
from agents.knowledge.state import EffectiveOptions, KnowledgeOptions, TraceEntry
from tools.knowledge.scope import Scope
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import SearchHit

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from config import Settings

_HIT_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchHit))
#: Characters of a cited source returned to API callers (the graph keeps the full chunks).
SNIPPET_CHARS = 300


def _pick(value: Any, setting: Any) -> Any:
    return setting if value is None else value


def resolve_options(settings: Settings, run: KnowledgeOptions) -> EffectiveOptions:
    """This turn's switches and bounds: the settings, overridden by the run's options."""
    return EffectiveOptions(
        reflection=bool(_pick(run.enable_reflection, settings.knowledge.enable_reflection)),
        document_grading=bool(
            _pick(run.enable_document_grading, settings.knowledge.enable_document_grading)
        ),
        response_grading=bool(
            _pick(run.enable_response_grading, settings.knowledge.enable_response_grading)
        ),
        query_transformation=bool(
            _pick(run.enable_query_transformation, settings.knowledge.enable_query_transformation)
        ),
        reranking=bool(_pick(run.enable_reranking, settings.knowledge.enable_reranking)),
        max_iterations=int(
            _pick(run.reflection_max_iterations, settings.knowledge.reflection_max_iterations)
        ),
        min_relevant_docs=settings.knowledge.reflection_min_relevant_docs,
        doc_score_threshold=settings.knowledge.reflection_doc_score_threshold,
        top_k=int(_pick(run.retrieval_top_k, settings.knowledge.retrieval_top_k)),
        fetch_k=settings.knowledge.reranker_fetch_k,
    )


def store_of(services: AgentServices) -> KnowledgeStore:
    """The process's knowledge base, which the app's knowledge component opened (the agent
    never opens one): `EngineNotOpen` when it is not open in this process."""
    return services.engine(KnowledgeStore)


def scope_for(context: RunContext) -> Scope:
    """What a run's searches read: the run's owner's private collection and the shared ones
    (the owner is set by the app, never by the caller's input), with the run's ``filters``
    option. The agent's retrieval, its routing probe and its model-free answer all search
    this scope, so none of them reads what the others would not."""
    return Scope(owner=context.owner, filters=context.options(KnowledgeOptions).filters)


def scope_of(runtime: Runtime[Any]) -> Scope:
    """`scope_for` the run of a node's ``runtime``."""
    return scope_for(context_of(runtime))


def hits_from(documents: Iterable[Mapping[str, Any]]) -> list[SearchHit]:
    """`SearchHit`s back from their state form (``to_dict()`` output)."""
    return [SearchHit(**{k: v for k, v in d.items() if k in _HIT_FIELDS}) for d in documents]


def asked_query(state: Mapping[str, Any]) -> str:
    """What the user asked, as `evaluate_query` understood it (the turn's first query):
    documents and answers are judged against it, never against the rewrite that found them."""
    history = state.get("query_history") or []
    return str(history[0]) if history else str(state.get("question") or "")


def trace(stage: str, method: str, note: str) -> TraceEntry:
    """One entry of ``knowledge_trace``."""
    return TraceEntry(stage=stage, method=method, note=note)


def number_sources(hits: Sequence[SearchHit]) -> list[Citation]:
    """One numbered source per document (per page of a paged document), in rank order; its
    text is every retrieved chunk of it (so ``[n]`` backs any sentence taken from any of them)."""
    citations: list[Citation] = []
    texts: dict[tuple[str, str | None], list[str]] = {}
    best: dict[tuple[str, str | None], SearchHit] = {}
    for hit in hits:
        key = source_key(hit)
        if key not in best:
            best[key] = hit
            texts[key] = []
        if hit.text not in texts[key]:
            texts[key].append(hit.text)
    for number, (key, hit) in enumerate(best.items(), start=1):
        text = "\n\n".join(texts[key])
        citations.append(
            Citation(number, hit.document_id, hit.title, hit.source, hit.chunk_id, text, key[1])
        )
    return citations


def citation_data(citation: Citation) -> dict[str, Any]:
    """A citation as state / API data: number, title, source, page, ids and a snippet."""
    snippet = " ".join(citation.text.split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return {
        "number": citation.number,
        "title": citation.title,
        "source": citation.source,
        "page": citation.page,
        "document_id": citation.document_id,
        "chunk_id": citation.chunk_id,
        "snippet": snippet,
    }


def sources_listing(citations: Sequence[Citation]) -> str:
    """The ``Sources:`` block appended to an answer: ``[n] Title (source[, p. N])`` per line."""
    lines = "\n".join(f"[{c.number}] {c.label}" for c in citations)
    return f"Sources:\n{lines}"
