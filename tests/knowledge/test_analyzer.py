"""The lexical leg's analyzer (KNOWLEDGE_ANALYZER) and quoted phrases, on the real engine
(Postgres 16 + pgvector, MiniLM): stemming end to end, the analyzer recorded with the
postings and rebuilt on change, and phrase / proximity scoring of quoted queries."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from config import Settings
from tools.knowledge.analysis import analyze
from tools.knowledge.loaders import LoadedDocument
from tools.knowledge.phrases import NEAR, phrase_match, quoted_phrases
from tools.knowledge.reanalyze import recorded_analyzer
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

HANDBOOK = [
    LoadedDocument(
        key="oncall.md",
        title="On-call handbook",
        text="# Paging\n\nEscalation goes to the team lead after 20 minutes without an "
        "acknowledgement. Escalations after midnight also page the duty manager.",
        source="oncall.md",
    ),
    LoadedDocument(
        key="release.md",
        title="Release process",
        text="# Canary\n\nThe canary stage rolls back automatically when the error rate "
        "threshold of 2 percent is crossed for five minutes.",
        source="release.md",
    ),
    LoadedDocument(
        key="expenses.md",
        title="Expenses",
        text="# Meals\n\nMeals are reimbursed up to 40 euros a day with receipts.",
        source="expenses.md",
    ),
]


def test_the_english_analyzer_stems_and_the_simple_one_does_not() -> None:
    assert analyze("escalate") == analyze("Escalation") == analyze("escalated")
    assert analyze("rotated keys") == analyze("rotating key")
    assert analyze("Escalation", "simple") == ["escalation"]
    assert analyze("escalate", "simple") != analyze("Escalation", "simple")
    assert analyze("Café IL-6", "simple") == ["cafe", "il", "6"]  # folded, split, no stemming
    with pytest.raises(ValueError, match="english, simple"):
        analyze("x", "klingon")


def test_the_setting_is_validated_and_named() -> None:
    from config import SettingsError, load_settings

    assert load_settings(knowledge_analyzer="simple").knowledge.analyzer == "simple"
    with pytest.raises(SettingsError, match="KNOWLEDGE_ANALYZER"):
        load_settings(knowledge_analyzer="porter")


async def _open(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    analyzer: str,
    name: str = "kb",
) -> KnowledgeStore:
    settings = make_settings(knowledge_analyzer=analyzer)
    return await KnowledgeStore.open(settings, embeddings=embedder, name=name)


async def _lexical_titles(store: KnowledgeStore, query: str) -> list[str]:
    result = await store.search(query, lambda_mult=0.0, top_k=3)
    return [h.title for h in result.hits]


async def test_escalate_finds_escalation_end_to_end(
    make_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> None:
    store = await _open(make_settings, embedder, "english")
    try:
        await store.ingest_documents(HANDBOOK)
        # the lexical leg alone: only the stemmer joins the question's verbs to the nouns
        assert (await _lexical_titles(store, "who do I escalate to?"))[0] == "On-call handbook"
        assert (await _lexical_titles(store, "does a canary roll back?"))[0] == "Release process"
        assert (await _lexical_titles(store, "reimbursement of meal"))[0] == "Expenses"
        # and the hybrid default ranks it first as well
        hybrid = await store.search("when do we escalate a page?", top_k=1)
        assert hybrid.hits[0].title == "On-call handbook"
        assert recorded_analyzer(store.engine) == "english"
    finally:
        await store.close()


async def test_a_changed_analyzer_rebuilds_the_postings_once(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = await _open(make_settings, embedder, "english")
    await store.ingest_documents(HANDBOOK)
    await store.close()

    caplog.set_level("WARNING", logger="tools.knowledge.reanalyze")
    simple = await _open(make_settings, embedder, "simple")
    fresh = await _open(make_settings, embedder, "simple", name="fresh")
    try:
        assert recorded_analyzer(simple.engine) == "simple"
        rebuilt = [r.getMessage() for r in caplog.records if "re-analyzed" in r.getMessage()]
        assert len(rebuilt) == 1 and "'english'" in rebuilt[0] and "3 chunks" in rebuilt[0]
        # exact word forms now: "escalate" no longer meets "Escalation"
        assert await _lexical_titles(simple, "escalate") == []
        assert (await _lexical_titles(simple, "Escalation"))[0] == "On-call handbook"
        # the rebuilt postings score exactly as a knowledge base built by `simple` from scratch
        await fresh.ingest_documents(HANDBOOK)
        for query in ("Escalation after midnight", "canary error rate threshold", "meals"):
            old = await simple.search(query, lambda_mult=0.0, top_k=3)
            new = await fresh.search(query, lambda_mult=0.0, top_k=3)
            assert [(h.title, round(h.lexical_score or 0, 6)) for h in old.hits] == [
                (h.title, round(h.lexical_score or 0, 6)) for h in new.hits
            ]
        assert await simple.stats() == await fresh.stats()
    finally:
        await simple.close()
        await fresh.close()

    caplog.clear()
    again = await _open(make_settings, embedder, "simple")  # recorded: nothing to rebuild
    await again.close()
    assert not [r for r in caplog.records if "re-analyzed" in r.getMessage()]


def test_quoted_phrases_and_their_match() -> None:
    assert quoted_phrases('the "error budget" of “roll back” and "canary"') == [
        ["error", "budget"],
        ["roll", "back"],
    ]  # a one-word quote is left to BM25
    terms = analyze("roll the canary back to the previous stage")
    assert phrase_match(analyze("canary back"), terms, slop=3) == 1.0
    assert phrase_match(analyze("roll back"), terms, slop=3) == NEAR  # two words between
    assert phrase_match(analyze("roll back"), terms, slop=1) == 0.0
    assert phrase_match(analyze("back roll"), terms, slop=9) == 0.0  # order matters
    assert phrase_match(analyze("rolling backs"), analyze("we rolled back"), slop=0) == 1.0


async def test_a_quoted_phrase_ranks_the_chunk_holding_it_first(
    make_settings: Callable[..., Settings], embedder: SentenceTransformerEmbeddings
) -> None:
    store = await _open(make_settings, embedder, "english")
    docs = [
        LoadedDocument(
            key="a.md",
            title="Notes A",
            text="The budget for errors in the report was reviewed; the error count fell "
            "while the budget grew, and the budget error was fixed.",
            source="a.md",
        ),
        LoadedDocument(
            key="b.md",
            title="Notes B",
            text="Our error budget is spent when availability drops below the objective.",
            source="b.md",
        ),
    ]
    try:
        await store.ingest_documents(docs)
        bag = await store.search("error budget", lambda_mult=0.0, top_k=2)
        assert bag.hits[0].title == "Notes A"  # more occurrences win a bag of words
        quoted = await store.search('"error budget"', lambda_mult=0.0, top_k=2)
        assert [h.title for h in quoted.hits] == ["Notes B", "Notes A"]
        exact, plain = quoted.hits[0].lexical_score, bag.hits[1].lexical_score
        assert exact is not None and plain is not None
        assert exact == pytest.approx(2 * plain)  # (1 + PHRASE_BOOST) x its BM25
        hybrid = await store.search('"error budget"', top_k=2)
        assert hybrid.hits[0].title == "Notes B"
    finally:
        await store.close()
