"""Extractive answers on the handbook (policies, runbooks, an FAQ), without a model: right-sized
(no sentences from sections about something else), whole procedures and lists, confident when
one document answers, and retries only when another search can change the outcome."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.knowledge.extractive import answer_units, extractive_answer, grade_response
from config import Settings
from tests.knowledge.conftest import HANDBOOK
from tests.knowledge.graphkit import ask, knowledge_data, knowledge_graph, stages
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings


@pytest.fixture
def offline(
    handbook_settings: Callable[..., Settings],
    handbook_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> Callable[..., Any]:
    """``await offline(question, **settings)`` -> the final state, no model, default settings
    (REFLECTION_MIN_RELEVANT_DOCS included) over the handbook."""

    async def go(question: str, **settings: Any) -> dict[str, Any]:
        graph = knowledge_graph(handbook_settings(**settings), handbook_store, embedder, None)
        return await ask(graph, question)

    return go


@pytest.fixture
async def one_document(
    handbook_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> Any:
    """``await one_document(name)`` -> a knowledge base holding only that handbook file."""
    opened: list[KnowledgeStore] = []

    async def make(name: str) -> KnowledgeStore:
        store = await KnowledgeStore.open(handbook_settings(), embeddings=embedder, name="one")
        opened.append(store)
        assert (await store.ingest_paths([HANDBOOK / name])).ok
        return store

    yield make
    for store in opened:
        await store.close()


def body(state: dict[str, Any]) -> str:
    """The answer without its Sources list and notes."""
    return str(state["answer"]).split("\n\nSources:")[0]


async def test_only_the_section_that_answers_is_quoted(offline: Any) -> None:
    state = await offline("Which day is the office day?")
    text = body(state)
    assert text.startswith("Wednesday is the office day [1].")
    # other sections of the same policy share words ("day") but answer something else
    assert "core hours" not in text.lower() and "organise your day" not in text
    assert "laptop budget" not in text and "2,000 EUR" not in text
    assert [c["title"] for c in knowledge_data(state)["citations"]] == [
        "Remote work and office policy"
    ]


async def test_a_runbook_procedure_is_quoted_whole_with_its_lead_in(offline: Any) -> None:
    state = await offline("What should I do when the payments API returns 503?")
    text = body(state)
    steps = (
        "First steps [1]:\n"
        "1. Check the provider status page at https://status.payprovider.example for an "
        "incident.\n"
        "2. Open the Payments dashboard in Grafana and look at the worker queue depth.\n"
        "3. If the queue depth is above 1,000, restart the payments worker (see below).\n"
        "4. If the errors continue for more than 10 minutes, page the payments on-call engineer."
    )
    assert steps in text
    assert text.startswith("A 503 means the API cannot reach the payments worker")
    assert "SEPA" not in text  # the runbook's introduction answers nothing here
    assert state["response_grade"]["passed"] and state["response_grade"]["support"] == 1.0


async def test_a_list_is_kept_together_with_the_sentence_that_introduces_it(
    offline: Any,
) -> None:
    state = await offline("What is the hotel cap in North America?")
    text = body(state)
    assert text.startswith(
        "Hotel stays are capped per night, taxes included [1]:\n"
        "- North America: 250 USD per night (New York and San Francisco: 320 USD).\n"
        "- Europe: 180 EUR per night (London and Zurich: 240 EUR).\n"
    )
    assert "per diem" not in text  # the meals section also names North America


async def test_an_faq_answer_is_the_text_under_its_question(offline: Any) -> None:
    state = await offline("How do I connect to the VPN?")
    text = body(state)
    assert "Install the WireGuard client, download your profile from the IT portal" in text
    assert "reset" not in text.lower()


async def test_a_list_under_a_heading_is_cited_on_the_heading(offline: Any) -> None:
    state = await offline("Who do I page for a severity 1 payments incident?")
    assert (
        "Escalation [1]:\n- Severity 1 (all payments failing): page the payments on-call and "
        "the engineering manager." in body(state)
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I restart the payments worker?", "kubectl rollout restart"),
        ("What is the hotel cap in North America?", "250 USD per night"),
        ("How many vacation days do I get?", "28 vacation days"),
        ("How do I fail over the Postgres primary?", "patronictl failover"),
    ],
)
async def test_one_relevant_document_answers_confidently_without_retries(
    offline: Any, question: str, expected: str
) -> None:
    state = await offline(question)
    assert expected in body(state)
    assert state["document_grades"]["passed"] and state["iteration_count"] == 0
    assert "transform_query" not in stages(state)
    assert state["low_confidence"] is False and "Low confidence" not in state["answer"]


async def test_a_bar_above_what_the_knowledge_base_holds_is_lowered_to_it(
    handbook_settings: Callable[..., Settings],
    one_document: Any,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    """REFLECTION_MIN_RELEVANT_DOCS=2 with a one-document knowledge base: the one document
    answers, confidently, and no retry searches the same document again."""
    store = await one_document("payments-runbook.md")
    settings = handbook_settings(reflection_min_relevant_docs=2)
    state = await ask(knowledge_graph(settings, store, embedder, None),
                      "How do I restart the payments worker?")  # fmt: skip
    grades = state["document_grades"]
    assert grades["passed"] and grades["min_relevant"] == 1
    assert grades["min_relevant_setting"] == 2
    assert state["iteration_count"] == 0 and state["low_confidence"] is False
    assert "the retrieved set holds 1 document(s)" in state["knowledge_trace"][2]["note"]


async def test_no_retry_when_every_chunk_was_already_retrieved(
    handbook_settings: Callable[..., Settings],
    one_document: Any,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    store = await one_document("leave-policy.md")  # a chunk per section: RETRIEVAL_TOP_K fits
    chunks = (await store.stats())["chunks"]
    assert chunks <= handbook_settings().knowledge.retrieval_top_k
    graph = knowledge_graph(handbook_settings(), store, embedder, None)
    state = await ask(graph, "What is the capital of Peru?")
    assert stages(state) == ["evaluate_query", "retrieve", "grade_documents", "generate_answer",
                             "grade_response"]  # fmt: skip
    assert state["iteration_count"] == 0 and state["low_confidence"] is True  # honest
    note = state["knowledge_trace"][2]["note"]
    assert f"no retry: all {chunks} chunk(s) of the knowledge base were already retrieved" in note


# --- the answer grade reads lists ------------------------------------------------------------


def test_list_items_are_graded_against_the_source_their_lead_in_cites() -> None:
    source = (HANDBOOK / "payments-runbook.md").read_text(encoding="utf-8")
    answer = (
        "First steps [1]:\n"
        "1. Check the provider status page at https://status.payprovider.example.\n"
        "2. Open the Payments dashboard in Grafana.\n\n"
        "Sources:\n[1] Payments API runbook (payments-runbook.md)"
    )
    units = answer_units(answer.split("\nSources:")[0])
    assert [numbers for _, numbers in units] == [[1], [1], [1]]
    grade = grade_response("What should I do first when payments fail?", answer, [source])
    assert grade.support == 1.0
    invented = answer.replace("Open the Payments dashboard in Grafana", "Reboot every router")
    assert grade_response("payments", invented, [source]).unsupported == ["2. Reboot every router."]
    uncited = "First steps:\n1. Check the provider status page."
    assert grade_response("status page", uncited, [source]).support == 0.0


def test_chunks_that_follow_each_other_are_read_as_one_text(tmp_path: Path) -> None:
    """A procedure cut at a chunk boundary (with the chunker's overlap) is quoted whole."""
    from tests.knowledge.test_strategies import hit

    first = "Restart steps:\n\n1. Drain the queue.\n2. Stop the worker."
    second = "2. Stop the worker.\n3. Start the worker again."
    hits = [hit("ops", second, 0.9, "Ops", chunk=4), hit("ops", first, 0.8, "Ops", chunk=3)]
    answer = extractive_answer("How do I restart the worker?", hits)
    assert (
        "Restart steps [1]:\n1. Drain the queue.\n2. Stop the worker.\n3. Start the worker again."
        in answer.text
    )
