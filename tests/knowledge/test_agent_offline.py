"""The knowledge agent without a model, end to end through the graph on a small corpus: the
deterministic strategies at every stage, their retries, and an honest answer on an empty base."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents.knowledge.extractive import NO_ANSWER
from config import Settings
from tests.knowledge.graphkit import ReflectionScript, ask, knowledge_data, knowledge_graph, stages
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

OFFLINE_METHODS = {
    "evaluate_query": "heuristic",
    "retrieve": "relevance",
    "grade_documents": "score-threshold",
    "generate_answer": "extractive",
    "grade_response": "heuristic",
}


@pytest.fixture
def offline(
    make_settings: Callable[..., Settings],
    corpus_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> Callable[..., Any]:
    """``await offline(question, **settings)`` -> the final state, no model configured."""

    async def go(question: str, **settings: Any) -> dict[str, Any]:
        values = {"reflection_min_relevant_docs": 1, **settings}
        graph = knowledge_graph(make_settings(**values), corpus_store, embedder, None)
        return await ask(graph, question)

    return go


async def test_a_natural_question_gets_an_extractive_cited_answer(offline: Any) -> None:
    state = await offline("How long do cats sleep?")
    data = knowledge_data(state)
    assert data["methods"] == OFFLINE_METHODS
    assert state["lambda_mult"] > 0.5 and data["query_evaluation"]["query_type"] == "semantic"
    assert state["answer"].startswith(
        "Domestic cats sleep between twelve and sixteen hours a day [1]."
    )
    assert "Sources:\n[1] Cats (" in state["answer"]
    assert "extractive: sentences quoted from the cited documents" in state["answer"]
    (citation,) = data["citations"]
    assert citation["title"] == "Cats" and citation["source"].endswith("cats.rst")
    assert "Domestic cats sleep between twelve" in citation["snippet"]
    assert data["document_grades"]["passed"] and data["response_grade"]["passed"]
    assert data["response_grade"]["support"] == 1.0
    assert state["low_confidence"] is False and state["iteration_count"] == 0
    assert state["agent_answers"]["knowledge"]["method"] == "extractive"


async def test_an_identifier_query_leans_lexical_and_finds_its_document(offline: Any) -> None:
    state = await offline("E1042")
    assert state["lambda_mult"] < 0.5
    assert knowledge_data(state)["query_evaluation"]["query_type"] == "lexical"
    assert state["documents"][0]["title"] == "errors"
    assert "Error E1042 means the upload exceeded the size limit [1]" in state["answer"]


async def test_unanswerable_question_expands_by_feedback_then_says_so(offline: Any) -> None:
    question = "What is the capital of Peru?"
    state = await offline(question, reflection_max_iterations=2)
    # the feedback retry finds only chunks the first search found: a second one could not
    # change the outcome, so it is skipped although the bound allows it
    assert stages(state) == ["evaluate_query", "retrieve", "grade_documents", "transform_query",
                             "retrieve", "grade_documents", "generate_answer",
                             "grade_response"]  # fmt: skip
    first, second = state["query_history"]
    assert second.startswith(question) and len(second.split()) > len(question.split())
    assert state["retrieval"]["new_chunks"] == 0
    assert (
        "no retry: the last retry found only chunks that earlier searches had found"
        in (state["knowledge_trace"][-1]["note"])
    )
    assert {e["method"] for e in state["knowledge_trace"] if e["stage"] == "transform_query"} == {
        "prf-rm3"
    }
    # graded against the question, not the expanded query that borrowed the documents' words
    assert all(not g["passed"] for g in [state["document_grades"]])
    assert state["answer"].startswith(NO_ANSWER)
    assert state["low_confidence"] is True and "Low confidence" in state["answer"]


async def test_only_relevant_documents_back_the_answer(offline: Any) -> None:
    state = await offline("How often must API keys be rotated?")
    relevant = [g["title"] for g in state["document_grades"]["grades"] if g["relevant"]]
    assert relevant == ["Rotating API keys"]
    assert [c["title"] for c in knowledge_data(state)["citations"]] == ["Rotating API keys"]
    assert "API keys must be rotated every 90 days [1]." in state["answer"]
    assert "# Rotating" not in state["answer"].split("Sources:")[0]  # headings are not answers


async def test_an_empty_knowledge_base_is_said_so_with_the_fix(
    make_settings: Callable[..., Settings],
    store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    script = ReflectionScript()
    graph = knowledge_graph(make_settings(), store, embedder, script.model())
    state = await ask(graph, "How long do cats sleep?")
    assert stages(state) == ["evaluate_query", "retrieve", "generate_answer"]
    assert "knowledge base is empty" in state["answer"]
    assert "python main.py ingest" in state["answer"] and "POST /documents" in state["answer"]
    assert dict(script.counts) == {"QueryClassification": 1}  # no answer was asked of the model
    data = knowledge_data(state)
    assert data["citations"] == [] and data["retrieval"]["empty_knowledge_base"] is True
    assert state["agent_answers"]["knowledge"]["method"] == "none"
