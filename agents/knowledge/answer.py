"""Answering without a model: extractive answer with citations, and the heuristic answer grade.

Part of the offline strategies (`agents.knowledge.strategies` re-exports everything here).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.knowledge.text import (
    citations_in,
    content_terms,
    sentences,
    strip_citations,
    words,
)

if TYPE_CHECKING:
    from agents.knowledge.strategies import Hit


# --- generate_answer: extractive with citations ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Citation:
    """A numbered source: ``[number]`` in the answer text refers to it.

    ``text`` is all retrieved text of the document (its chunks in rank order); ``chunk_id`` is
    its best chunk."""

    number: int
    document_id: str
    title: str
    source: str
    chunk_id: str
    text: str


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One extracted sentence, its citation number and match score."""

    text: str
    citation: int
    score: float


@dataclass(frozen=True, slots=True)
class ExtractiveAnswer:
    """The answer text (with ``[n]`` markers and a Sources list) and its parts."""

    text: str
    citations: list[Citation]
    sentences: list[AnswerSentence] = field(default_factory=list)
    found: bool = True
    method: str = "extractive"

    @property
    def sources(self) -> list[str]:
        """Source texts in citation order (``sources[n-1]`` backs ``[n]``)."""
        return [c.text for c in self.citations]


NO_ANSWER = "I could not find an answer to that in the ingested documents."


def extractive_answer(
    query: str,
    hits: Sequence[Hit],
    *,
    max_sentences: int = 3,
    min_score: float = 0.2,
    max_sentence_chars: int = 600,
) -> ExtractiveAnswer:
    """Answer with the sentences of the hits that best cover the query's content words.

    A sentence scores the idf-weighted share of query terms it contains (idf over all candidate
    sentences, so words every sentence has count little), plus a small bonus for coming from a
    better-ranked hit. Near-duplicate sentences (overlapping chunks) are picked once. Chosen
    sentences are ordered by hit rank then position, each ending with its ``[n]``.
    """
    query_terms = set(content_terms(query))
    candidates: list[tuple[int, int, str, set[str]]] = []
    for rank, hit in enumerate(hits):
        for pos, sentence in enumerate(sentences(hit.text)):
            if len(sentence) > max_sentence_chars or len(words(sentence)) < 3:
                continue
            if sentence.startswith("#"):  # a section heading names a topic, it answers nothing
                continue
            candidates.append((rank, pos, sentence, set(content_terms(sentence))))
    if not query_terms or not candidates:
        return ExtractiveAnswer(NO_ANSWER, [], [], found=False)
    n = len(candidates)
    df = Counter(t for *_, terms in candidates for t in terms & query_terms)
    weight = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in query_terms}
    total = sum(weight.values())
    scored = []
    for rank, pos, sentence, terms in candidates:
        coverage = sum(weight[t] for t in terms & query_terms) / total
        scored.append((coverage + 0.05 / (rank + 1), rank, pos, sentence, terms, coverage))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    chosen: list[tuple[float, int, int, str, set[str], float]] = []
    for item in scored:
        if item[5] < min_score or len(chosen) >= max_sentences:
            break
        if any(_jaccard(item[4], c[4]) > 0.7 for c in chosen):
            continue
        chosen.append(item)
    if not chosen:
        return ExtractiveAnswer(NO_ANSWER, [], [], found=False)
    chosen.sort(key=lambda item: (item[1], item[2]))
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    parts: list[AnswerSentence] = []
    # One number per document; its source text is every retrieved chunk of that document, so
    # sentences from two sections of one document are backed by the same citation.
    doc_text: dict[str, list[str]] = {}
    for h in hits:
        if h.text not in doc_text.setdefault(h.document_id, []):
            doc_text[h.document_id].append(h.text)
    for score, rank, _pos, sentence, _terms, _cov in chosen:
        hit = hits[rank]
        if hit.document_id not in numbers:
            numbers[hit.document_id] = len(numbers) + 1
            citations.append(
                Citation(numbers[hit.document_id], hit.document_id, hit.title, hit.source,
                         hit.chunk_id, "\n\n".join(doc_text[hit.document_id]))
            )  # fmt: skip
        parts.append(AnswerSentence(sentence, numbers[hit.document_id], round(score, 4)))
    body = " ".join(_cite(p.text, p.citation) for p in parts)
    listing = "\n".join(f"[{c.number}] {c.title} ({c.source})" for c in citations)
    return ExtractiveAnswer(f"{body}\n\nSources:\n{listing}", citations, parts)


def _cite(sentence: str, number: int) -> str:
    """``"It is." -> "It is [1]."``: the marker goes before the closing punctuation."""
    stripped = sentence.rstrip()
    if stripped and stripped[-1] in ".!?":
        return f"{stripped[:-1]} [{number}]{stripped[-1]}"
    return f"{stripped} [{number}]"


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# --- grade_response ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResponseGrade:
    """Heuristic answer grade: coverage of the query, support of the sentences by sources."""

    passed: bool
    score: float
    coverage: float
    support: float
    unsupported: list[str]
    reasons: list[str]
    method: str = "heuristic"


def grade_response(
    query: str,
    answer: str,
    sources: Sequence[str],
    *,
    min_coverage: float = 0.5,
    min_support: float = 0.6,
    sentence_overlap: float = 0.6,
) -> ResponseGrade:
    """Grade an answer whose sentences cite ``[n]`` = ``sources[n-1]``.

    - coverage: share of the query's content words that the answer mentions;
    - support: share of answer sentences whose content words are at least
      ``sentence_overlap`` present in the sources they cite (uncited sentences are unsupported;
      the trailing "Sources:" list is not graded).
    Passes when coverage >= ``min_coverage`` and support >= ``min_support``.
    """
    body = answer.split("\nSources:")[0].strip()
    reasons: list[str] = []
    if not body or body == NO_ANSWER:
        return ResponseGrade(False, 0.0, 0.0, 0.0, [], ["no answer was produced"])
    query_terms = set(content_terms(query))
    answer_terms = set(content_terms(strip_citations(body)))
    coverage = len(query_terms & answer_terms) / len(query_terms) if query_terms else 1.0
    source_terms = [set(content_terms(s)) for s in sources]
    graded = 0
    unsupported: list[str] = []
    for sentence in sentences(body):
        terms = set(content_terms(strip_citations(sentence)))
        if not terms:
            continue
        graded += 1
        cited = [n for n in citations_in(sentence) if 1 <= n <= len(sources)]
        backing = set().union(*(source_terms[n - 1] for n in cited)) if cited else set()
        if not cited or len(terms & backing) / len(terms) < sentence_overlap:
            unsupported.append(sentence)
    support = (graded - len(unsupported)) / graded if graded else 0.0
    if coverage < min_coverage:
        reasons.append(f"covers {coverage:.0%} of the question's terms (< {min_coverage:.0%})")
    if support < min_support:
        reasons.append(
            f"{len(unsupported)} of {graded} sentence(s) not supported by their cited sources"
        )
    passed = coverage >= min_coverage and support >= min_support
    if passed:
        reasons.append(f"coverage {coverage:.0%}, support {support:.0%}")
    score = round((coverage + support) / 2, 4)
    return ResponseGrade(passed, score, round(coverage, 4), round(support, 4), unsupported, reasons)
