"""The reflection loop through the real graph, judged by a scripted model: documents that fail
are retried with a rewritten query, the retry bound holds, a failed answer grade retries, and
every switch takes its stage out (checked on the stages that ran and on the model's calls)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from agents.knowledge.state import STAGES
from config import Settings
from tests.knowledge.graphkit import (
    ReflectionScript,
    ask,
    knowledge_data,
    knowledge_graph,
    stages,
)
from tests.support.graphs import agent_history
from tests.support.scripted import ScriptedChatModel
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings
from tools.rerank import CrossEncoderReranker

QUESTION = "How long do cats sleep?"
FIRST, RETRIEVE, GRADE, REWRITE = "evaluate_query", "retrieve", "grade_documents", "transform_query"
ANSWER, CHECK = "generate_answer", "grade_response"


def cats_after(rewrites: int) -> Callable[[int, str], bool]:
    """Only "Cats" is relevant, and only from the grading round after `rewrites` rewrites."""
    return lambda done, title: done >= rewrites and title == "Cats"


@pytest.fixture
def run(
    make_settings: Callable[..., Settings],
    corpus_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> Callable[..., Any]:
    """``await run(script, **settings)`` -> the final state of one turn asking QUESTION."""

    async def go(script: ReflectionScript, *, options: dict[str, Any] | None = None,
                 model: Any = None, **settings: Any) -> dict[str, Any]:  # fmt: skip
        values = {"reflection_min_relevant_docs": 1, **settings}
        chosen = model if model is not None else script.model()
        graph = knowledge_graph(make_settings(**values), corpus_store, embedder, chosen)
        return await ask(graph, QUESTION, **(options or {}))

    return go


async def test_failed_documents_are_retried_with_a_rewritten_query(run: Any) -> None:
    script = ReflectionScript(relevant=cats_after(1))
    state = await run(script)
    assert stages(state) == [FIRST, RETRIEVE, GRADE, REWRITE, RETRIEVE, GRADE, ANSWER, CHECK]
    assert set(STAGES) <= set(state["stage_ms"])
    assert state["iteration_count"] == 1
    assert state["query_history"] == [QUESTION, "cats sleeping hours per day (rewrite 1)"]
    assert script.counts["QueryRewrite"] == 1 and script.counts["AnswerGrade"] == 1
    assert state["document_grades"]["passed"] and state["document_grades"]["method"] == "llm"
    assert state["low_confidence"] is False and "Low confidence" not in state["answer"]
    # the rewrite was asked for with the reason the documents failed
    (rewrite_call,) = [c for c in script.prompts() if "Queries already tried" in c]
    assert "documents: only 0 of" in rewrite_call and QUESTION in rewrite_call
    data = knowledge_data(state)
    assert data["citations"][0]["title"] == "Cats" and data["citations"][0]["number"] == 1
    assert state["answer"].startswith("Domestic cats sleep between twelve and sixteen hours")
    assert "Sources:\n[1] Cats (" in state["answer"]
    assert data["methods"][ANSWER] == "llm" and data["response_grade"]["passed"]


#: Rewrites that each find chunks no earlier search found (so every retry may run).
TOPICS = ("rotating and revoking API keys", "nightly database backups and restores",
          "error E1042 upload size limit")  # fmt: skip


def elsewhere(n: int) -> str:
    """The n-th rewrite: a topic of the corpus no earlier query searched."""
    return TOPICS[n - 1]


@pytest.mark.parametrize("bound", [0, 1, 2])
async def test_the_retry_bound_holds_and_the_answer_is_marked_low_confidence(
    run: Any, bound: int
) -> None:
    script = ReflectionScript(relevant=lambda done, title: False,
                              answer_passes=lambda n: False, rewrite=elsewhere)  # fmt: skip
    state = await run(script, reflection_max_iterations=bound, retrieval_top_k=2)
    assert state["iteration_count"] == bound
    assert script.counts["QueryRewrite"] == bound
    assert stages(state) == [FIRST] + [RETRIEVE, GRADE, REWRITE] * bound + [
        RETRIEVE, GRADE, ANSWER, CHECK]  # fmt: skip
    assert (REWRITE in state["stage_ms"]) is (bound > 0)
    assert state["low_confidence"] is True
    assert "Low confidence: the documents found did not pass grading" in state["answer"]
    assert "the answer did not pass its check" in state["answer"]
    assert knowledge_data(state)["low_confidence"] is True
    assert state["knowledge_trace"][-1]["note"].startswith("failed (")  # not "retrying"


async def test_a_retry_that_found_nothing_new_is_not_repeated(run: Any) -> None:
    """The model rewrites the question the same way twice: the first retry finds only chunks
    the first search found, so a second could not change the outcome and does not run, although
    REFLECTION_MAX_ITERATIONS=2 allows it."""
    script = ReflectionScript(relevant=lambda done, title: False, answer_passes=lambda n: False)
    state = await run(script, reflection_max_iterations=2)
    assert stages(state) == [FIRST, RETRIEVE, GRADE, REWRITE, RETRIEVE, GRADE, ANSWER, CHECK]
    assert state["iteration_count"] == 1 and script.counts["QueryRewrite"] == 1
    assert state["retrieval"]["new_chunks"] == 0
    assert state["knowledge_trace"][5]["note"].endswith(
        "no retry: the last retry found only chunks that earlier searches had found"
    )
    assert state["low_confidence"] is True and "after 1 retry" in state["answer"]


async def test_iteration_count_never_exceeds_the_bound_at_any_step(
    make_settings: Callable[..., Settings],
    corpus_store: KnowledgeStore,
    embedder: SentenceTransformerEmbeddings,
) -> None:
    script = ReflectionScript(relevant=lambda done, title: False,
                              answer_passes=lambda n: False, rewrite=elsewhere)  # fmt: skip
    settings = make_settings(reflection_max_iterations=2, retrieval_top_k=2)
    graph = knowledge_graph(settings, corpus_store, embedder, script.model())
    history = await agent_history(
        graph, {"messages": [HumanMessage(QUESTION)], "target_agent": "knowledge"}, "knowledge"
    )
    seen = [values.get("iteration_count", 0) for values in history]
    assert len(seen) > 5  # every step of the agent's loop
    assert max(seen) == 2 and all(0 <= n <= 2 for n in seen)


async def test_a_failed_answer_grade_retries_with_a_new_query(run: Any) -> None:
    script = ReflectionScript(relevant=cats_after(0), answer_passes=lambda n: n >= 2)
    state = await run(script)
    assert stages(state) == [FIRST, RETRIEVE, GRADE, ANSWER, CHECK, REWRITE, RETRIEVE, GRADE,
                             ANSWER, CHECK]  # fmt: skip
    assert state["iteration_count"] == 1
    assert script.counts["AnswerGrade"] == 2 and script.counts["answer"] == 2
    (rewrite_call,) = [c for c in script.prompts() if "Queries already tried" in c]
    assert "answer: claims something the sources do not say" in rewrite_call
    assert state["response_grade"]["passed"] and state["low_confidence"] is False
    assert "failed, retrying" in state["knowledge_trace"][4]["note"]


SWITCHES = [
    # switch, relevance, stages that run, model calls that must not happen
    ("enable_reflection", cats_after(1), [FIRST, RETRIEVE, ANSWER],
     ("DocumentRelevance", "QueryRewrite", "AnswerGrade")),
    ("enable_document_grading", cats_after(1), [FIRST, RETRIEVE, ANSWER, CHECK],
     ("DocumentRelevance", "QueryRewrite")),
    ("enable_response_grading", cats_after(1),
     [FIRST, RETRIEVE, GRADE, REWRITE, RETRIEVE, GRADE, ANSWER], ("AnswerGrade",)),
    ("enable_query_transformation", cats_after(1), [FIRST, RETRIEVE, GRADE, ANSWER, CHECK],
     ("QueryRewrite",)),
]  # fmt: skip


@pytest.mark.parametrize("via", ["settings", "run options"])
@pytest.mark.parametrize(("switch", "relevant", "expected", "never"), SWITCHES,
                         ids=[s[0] for s in SWITCHES])  # fmt: skip
async def test_each_switch_takes_its_stage_out(
    run: Any, switch: str, relevant: Any, expected: list[str], never: tuple[str, ...], via: str
) -> None:
    script = ReflectionScript(relevant=relevant)
    if via == "settings":
        state = await run(script, **{switch: False})
    else:
        state = await run(script, options={switch: False})
    assert stages(state) == expected
    assert set(state["stage_ms"]) & set(STAGES) == set(expected)
    assert all(script.counts[name] == 0 for name in never), script.counts
    assert script.counts["answer"] == 1
    skipped = " ".join(knowledge_data(state)["skipped"])
    assert switch.upper() in skipped
    if switch == "enable_query_transformation":  # failed documents, no retry: said so
        assert state["low_confidence"] is True and state["iteration_count"] == 0


async def test_reranking_switch(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    corpus_dir: Path,
    tmp_path: Path,
) -> None:
    from tests.knowledge.test_rerank import build_tiny_cross_encoder

    reranker = CrossEncoderReranker(str(build_tiny_cross_encoder(tmp_path / "ce")))
    settings = make_settings(reflection_min_relevant_docs=1)
    store = await KnowledgeStore.open(settings, embeddings=embedder, name="kb", reranker=reranker)
    try:
        await store.ingest_paths([corpus_dir])
        graph = knowledge_graph(settings, store, embedder, ReflectionScript().model())
        on = await ask(graph, QUESTION, enable_reranking=True)
        off = await ask(graph, QUESTION)  # ENABLE_RERANKING defaults to off
    finally:
        await store.close()
    assert on["retrieval"]["reranked"] and on["retrieval"]["ordering"] == "cross-encoder"
    assert all(d["rerank_score"] is not None for d in on["documents"])
    assert on["knowledge_trace"][1]["method"] == "cross-encoder"
    assert not off["retrieval"]["reranked"] and off["retrieval"]["ordering"] == "relevance"
    assert all(d["rerank_score"] is None for d in off["documents"])
    assert "ENABLE_RERANKING" in " ".join(knowledge_data(off)["skipped"])


async def test_an_unloadable_reranker_costs_the_ranking_not_the_answer(
    run: Any, tmp_path: Path
) -> None:
    state = await run(ReflectionScript(), enable_reranking=True,
                      reranker_model=str(tmp_path / "no-such-model"))  # fmt: skip
    assert not state["retrieval"]["reranked"]
    assert any("reranking skipped" in e and "RERANKER_MODEL" in e for e in state["errors"])
    assert knowledge_data(state)["citations"][0]["title"] == "Cats"


async def test_a_failing_model_falls_back_to_the_offline_strategies(run: Any) -> None:
    def down(messages: Any, schema: Any) -> Any:
        raise ConnectionError("provider down")

    state = await run(ReflectionScript(), model=ScriptedChatModel(responder=down))
    methods = knowledge_data(state)["methods"]
    assert methods == {FIRST: "heuristic", RETRIEVE: "relevance", GRADE: "score-threshold",
                       ANSWER: "extractive", CHECK: "heuristic"}  # fmt: skip
    assert len([e for e in state["errors"] if "provider down" in e]) >= 4
    assert "[1]" in state["answer"] and "Cats" in state["answer"]
