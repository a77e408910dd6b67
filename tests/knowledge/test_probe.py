"""The knowledge agent's data probe on the handbook, and questions about the documents reaching
the agent through the whole graph without a model (routed by the data tier)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from agents.contract.context import AgentServices, RunContext, context_schema_for
from agents.knowledge.probe import PROBE_MAX_CHARS, knowledge_probe, probe_query
from agents.knowledge.state import KnowledgeOptions
from config import Settings
from tests.knowledge.graphkit import knowledge_graph
from tests.support.graphs import agent_services, run_with_agent_state
from tools.knowledge.loaders import LoadedDocument
from tools.knowledge.scope import private_collection
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

QUESTIONS = [
    "How do I restart the payments worker?",
    "What is the hotel cap in North America?",
    "How do I reset my password?",
    "When do carried-over vacation days expire?",
]
NOT_QUESTIONS = [
    "hello",
    "Tell me a joke.",
    "What is the capital of France?",
    "def test_total():\n    cart = Cart()\n    assert cart.total() == 0",
]


def run(services: AgentServices, owner: str, filters: dict[str, Any] | None = None) -> RunContext:
    """The context of a run of ``owner`` with the knowledge ``filters`` option (None: none)."""
    context: RunContext = context_schema_for([KnowledgeOptions])(
        services=services, owner=owner, filters=filters
    )
    return context


@pytest.fixture
def probe(
    handbook_settings: Callable[..., Settings],
    handbook_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> Callable[[str], Any]:
    services = agent_services(handbook_settings(), embeddings=embedder, resources=[handbook_store])
    return lambda message: knowledge_probe(message, run(services, "alice"))


async def test_questions_the_documents_answer_score_above_the_threshold(
    probe: Callable[[str], Any], handbook_settings: Callable[..., Settings]
) -> None:
    threshold = handbook_settings().routing.data_threshold
    scores = {q: await probe(q) for q in QUESTIONS + NOT_QUESTIONS}
    assert all(scores[q] >= threshold for q in QUESTIONS), scores
    assert all(scores[q] is not None and scores[q] < threshold for q in NOT_QUESTIONS), scores


async def test_nothing_to_search_or_an_empty_knowledge_base_skips_the_probe(
    make_settings: Callable[..., Settings],
    store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    empty = agent_services(make_settings(), embeddings=embedder, resources=[store])
    alice = run(empty, "alice")
    assert await knowledge_probe("?!", alice) is None
    assert await knowledge_probe("How do I restart the payments worker?", alice) is None


async def test_the_probe_searches_the_owners_collections_only(
    make_settings: Callable[..., Settings],
    store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    """Another key's private documents never pull a message to the knowledge agent: the probe
    searches exactly the owner's private collection and the shared ones."""
    runbook = LoadedDocument(
        "runbook", "Payments runbook",
        "Restart the payments worker with `svc restart payments-worker` after a deploy.",
        "runbook.md",
    )  # fmt: skip
    await store.ingest_documents([runbook], collection=private_collection("alice"))
    services = agent_services(make_settings(), embeddings=embedder, resources=[store])
    question = "How do I restart the payments worker?"
    alices = await knowledge_probe(question, run(services, "alice"))
    assert alices is not None and alices >= make_settings().routing.data_threshold
    assert await knowledge_probe(question, run(services, "bob")) is None  # bob reads nothing
    await store.ingest_documents([LoadedDocument("cats", "Cats", "Cats sleep a lot.", "c.md")])
    bobs = await knowledge_probe(question, run(services, "bob"))  # only the shared note
    assert bobs is not None and bobs < make_settings().routing.data_threshold


async def test_the_probe_searches_what_the_runs_filters_leave(
    make_settings: Callable[..., Settings],
    store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    """The run's ``filters`` option narrows the probe as it narrows the agent's retrieval: a
    filter that leaves out the only document that answers leaves nothing to score."""
    runbook = LoadedDocument(
        "runbook", "Payments runbook",
        "Restart the payments worker with `svc restart payments-worker` after a deploy.",
        "runbook.md",
    )  # fmt: skip
    await store.ingest_documents(
        [runbook], collection=private_collection("alice"), metadata={"team": "ops"}
    )
    await store.ingest_documents([LoadedDocument("cats", "Cats", "Cats sleep a lot.", "c.md")])
    services = agent_services(make_settings(), embeddings=embedder, resources=[store])
    question = "How do I restart the payments worker?"
    threshold = make_settings().routing.data_threshold
    unfiltered = await knowledge_probe(question, run(services, "alice"))
    assert unfiltered is not None and unfiltered >= threshold
    kept: list[dict[str, Any]] = [
        {"metadata": {"team": "ops"}},
        {"collection": "private"},
        {"title": "Payments runbook"},
    ]
    for filters in kept:
        score = await knowledge_probe(question, run(services, "alice", filters))
        assert score is not None and score >= threshold, (filters, score)
    for left_out in ({"metadata": {"team": "payments"}}, {"source": "elsewhere.md"}):
        assert await knowledge_probe(question, run(services, "alice", left_out)) is None
    shared = await knowledge_probe(question, run(services, "alice", {"collection": "shared"}))
    assert shared is not None and shared < threshold  # only the cats note is searched


def test_the_probe_searches_what_the_agent_would_within_bounds() -> None:
    assert probe_query("According to my documents, how long is parental leave?") == (
        "How long is parental leave?"
    )
    assert len(probe_query("word " * 10_000)) <= PROBE_MAX_CHARS


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I restart the payments worker?", "kubectl rollout restart"),
        ("What is the hotel cap in North America?", "250 USD per night"),
    ],
)
async def test_a_document_question_reaches_the_knowledge_agent_without_a_model(
    handbook_settings: Callable[..., Settings],
    handbook_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
    question: str,
    expected: str,
) -> None:
    graph = knowledge_graph(handbook_settings(), handbook_store, embedder, None)
    state = await run_with_agent_state(
        graph, {"messages": [HumanMessage(question)]}, "knowledge", owner="alice"
    )
    assert state["route"]["agent"] == "knowledge" and state["route"]["method"] == "data"
    assert state["route"]["confidence"] >= handbook_settings().routing.data_threshold
    assert expected in state["answer"] and state["low_confidence"] is False


async def test_a_filter_that_leaves_out_every_document_routes_nothing_on_their_evidence(
    handbook_settings: Callable[..., Settings],
    handbook_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    """Routing's knowledge probe runs with the run's ``filters``: under a filter no document
    passes, the handbook is no evidence for the knowledge agent (no data route, no "closest
    data match"); under one the handbook passes, the data tier routes as without a filter."""
    question = "How do I restart the payments worker?"
    graph = knowledge_graph(handbook_settings(), handbook_store, embedder, None)
    state = await run_with_agent_state(
        graph, {"messages": [HumanMessage(question)]}, "knowledge", owner="alice",
        filters={"metadata": {"team": "payments"}},
    )  # fmt: skip
    route = state["route"]
    assert route["method"] != "data", route
    assert "knowledge agent's" not in route["reason"], route
    assert "kubectl rollout restart" not in state["answer"]
    state = await run_with_agent_state(
        graph, {"messages": [HumanMessage(question)]}, "knowledge", owner="alice",
        filters={"collection": "shared"},
    )  # fmt: skip
    assert (state["route"]["agent"], state["route"]["method"]) == ("knowledge", "data")
    assert "kubectl rollout restart" in state["answer"]
