"""Answering without a model: extractive answer with citations, and the heuristic answer grade.

The extractive answer quotes whole passages (`agents.knowledge.passages`) of the sections that
answer the question; the grade checks each sentence (and list item) against the source it cites.

The answer-side half of the offline strategies (`agents.knowledge.strategies` holds the
query-side half and the `Hit` protocol both read; this module imports it, never the reverse).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from agents.knowledge.citations import Citation, source_key
from agents.knowledge.passages import LIST_ITEM, Passage, split_passages
from agents.knowledge.strategies import Hit
from agents.knowledge.text import (
    citations_in,
    content_terms,
    sentences,
    strip_citations,
    words,
)
from tools.knowledge.chunking import lines_of

# --- generate_answer: extractive with citations ---------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """One extracted passage (a sentence, or a list / code block with its lead-in) as it
    appears in the answer, its citation number and match score."""

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
#: Characters two consecutive chunks must share to be read as overlapping.
MIN_OVERLAP = 10


@dataclass(frozen=True, slots=True)
class _Candidate:
    rank: int
    passage: Passage
    terms: frozenset[str]
    section: tuple[str, str]
    source: str
    """The text the passage was read from (what its citation backs)."""


def extractive_answer(
    query: str,
    hits: Sequence[Hit],
    *,
    max_sentences: int = 3,
    min_score: float = 0.2,
    max_chars: int = 1200,
    section_ratio: float = 0.75,
    passage_ratio: float = 0.5,
) -> ExtractiveAnswer:
    """Answer with the passages of the hits that answer the query, quoted whole and cited.

    Each hit is read as passages (`agents.knowledge.passages`: sentences, and lists or code
    blocks kept whole with their lead-in, each under its section heading). Terms are weighted
    by their idf over the candidate passages, so words every passage has count little.

    1. Sections: a section (a heading of a document) scores half the query's share its heading
       covers plus half the share heading and text cover together. Only sections within
       ``section_ratio`` of the best are quoted from: a sentence that merely shares a word
       with the question, in a section about something else, is not an answer.
    2. Passages: a passage scores half the query's share it covers itself plus half the share
       it covers with its heading (in an FAQ the question is the heading, the answer the text
       below). Passages within ``passage_ratio`` of the best (and at least ``min_score``) are
       taken best first, up to ``max_sentences`` passages and ``max_chars`` characters (the
       best one always), near-duplicates (overlapping chunks) once.

    Chosen passages keep their documents' order; each ends with its document's ``[n]`` (a list
    carries it on its lead-in line).
    """
    query_terms = set(content_terms(query))
    candidates = _candidates(hits)
    if not query_terms or not candidates:
        return ExtractiveAnswer(NO_ANSWER, [], [], found=False)
    n = len(candidates)
    df = Counter(t for c in candidates for t in c.terms & query_terms)
    weight = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in query_terms}
    total = sum(weight.values())

    def cover(terms: Iterable[str]) -> float:
        return sum(weight[t] for t in query_terms.intersection(terms)) / total

    heading_terms = {c.section: frozenset(content_terms(c.passage.heading)) for c in candidates}
    section_text: dict[tuple[str, str], set[str]] = {}
    for c in candidates:
        section_text.setdefault(c.section, set()).update(c.terms)
    section_score = {
        key: 0.5 * cover(heading_terms[key]) + 0.5 * cover(heading_terms[key] | text)
        for key, text in section_text.items()
    }
    best_section = max(section_score.values())
    if best_section < min_score:
        return ExtractiveAnswer(NO_ANSWER, [], [], found=False)
    sections = {k for k, v in section_score.items() if v >= section_ratio * best_section}
    scored = [
        (0.5 * cover(c.terms) + 0.5 * cover(c.terms | heading_terms[c.section]), c)
        for c in candidates
        if c.section in sections
    ]
    best = max(score for score, _ in scored)
    floor = max(min_score, passage_ratio * best)
    scored.sort(key=lambda item: (-item[0], item[1].rank, item[1].passage.position))
    chosen: list[tuple[float, _Candidate]] = []
    used = 0
    for score, candidate in scored:
        if score < floor or len(chosen) >= max_sentences:
            break
        size = len(candidate.passage.words_text)
        if chosen and used + size > max_chars:
            continue
        if any(_jaccard(candidate.terms, c.terms) > 0.7 for _, c in chosen):
            continue
        chosen.append((score, candidate))
        used += size
    chosen.sort(key=lambda item: (item[1].rank, item[1].passage.position))
    numbers: dict[tuple[str, str | None], int] = {}
    citations: list[Citation] = []
    parts: list[AnswerSentence] = []
    # One number per document (per page of a paged one); its source text is every retrieved
    # chunk of it, so passages from two sections of one page are backed by the same citation.
    doc_text: dict[tuple[str, str | None], list[str]] = {}
    for h in hits:
        texts = doc_text.setdefault(source_key(h), [])
        if h.text not in texts:
            texts.append(h.text)
    for score, candidate in chosen:
        hit = hits[candidate.rank]
        key = source_key(hit)
        if key not in numbers:
            numbers[key] = len(numbers) + 1
            citations.append(
                Citation(numbers[key], hit.document_id, hit.title, hit.source, hit.chunk_id,
                         "\n\n".join(doc_text[key]), key[1])
            )  # fmt: skip
        number = numbers[key]
        text = _render(candidate.passage, number, candidate.source)
        parts.append(AnswerSentence(text, number, round(score, 4)))
    body = _join(parts, [c.passage for _, c in chosen])
    listing = "\n".join(f"[{c.number}] {c.label}" for c in citations)
    return ExtractiveAnswer(f"{body}\n\nSources:\n{listing}", citations, parts)


def _candidates(hits: Sequence[Hit]) -> list[_Candidate]:
    """Every passage of the hits that could be quoted (sentences of at least three words).

    Retrieved chunks that follow each other in one document are read as one text (their
    overlap once), so a list or a paragraph cut at a chunk boundary is whole again."""
    out: list[_Candidate] = []
    for rank, text, hit in _joined(hits):
        heading = getattr(hit, "heading", None) or hit.title
        for passage in split_passages(text, heading):
            if passage.kind == "sentence" and len(words(passage.text)) < 3:
                continue
            terms = frozenset(content_terms(passage.words_text))
            if terms:
                section = (hit.document_id, passage.heading)
                out.append(_Candidate(rank, passage, terms, section, text))
    return out


def _joined(hits: Sequence[Hit]) -> list[tuple[int, str, Hit]]:
    """``(rank, text, first hit)`` per run of consecutive chunks of one document (by
    ``chunk_index``; of one page, in a paged document), ranked by the run's best hit, in rank
    order."""
    by_document: dict[tuple[str, str | None], list[int]] = {}
    for rank, hit in enumerate(hits):
        # a page's chunks join only each other: a passage then lies on its hit's page
        by_document.setdefault(source_key(hit), []).append(rank)
    joined: list[tuple[int, str, Hit]] = []
    for ranks in by_document.values():
        ranks.sort(key=lambda r: _index(hits[r]))
        run = [ranks[0]]
        for r in ranks[1:] + [-1]:
            previous = _index(hits[run[-1]])
            if r >= 0 and previous >= 0 and _index(hits[r]) == previous + 1:
                run.append(r)
                continue
            text = hits[run[0]].text
            for later in run[1:]:
                text = _append_overlapping(text, hits[later].text)
            joined.append((min(run), text, hits[run[0]]))
            run = [r]
    return sorted(joined, key=lambda item: item[0])


def _index(hit: Hit) -> int:
    """The chunk's position in its document (-2 when unknown: it joins nothing)."""
    index = getattr(hit, "chunk_index", None)
    return index if isinstance(index, int) and index >= 0 else -2


def _append_overlapping(text: str, following: str, limit: int = 4000) -> str:
    """``text`` continued by the chunk after it, whose start may repeat the end of ``text``
    (the chunker's overlap starts at a word; shorter matches than ``MIN_OVERLAP`` are taken
    for chance)."""
    for size in range(min(len(text), len(following), limit), MIN_OVERLAP - 1, -1):
        at = len(text) - size
        if text.endswith(following[:size]) and (at == 0 or text[at - 1].isspace()):
            return text + following[size:]
    return f"{text}\n\n{following}"


def _render(passage: Passage, number: int, source: str) -> str:
    """A passage as answer text with its ``[n]``: a sentence cited at its end, a list or code
    block under its lead-in (or, when the cited text shows it, its heading), which carries the
    citation; a list with neither cites each item."""
    if passage.kind == "sentence":
        return _cite(passage.text, number)
    lead = passage.lead
    if not lead and passage.heading and passage.heading in source:
        lead = f"{passage.heading}:"
    lead_line = _cite(lead, number) if lead else ""
    if passage.kind == "code":
        block = "\n".join(["```", *passage.items, "```"])
        return f"{lead_line}\n{block}" if lead_line else f"[{number}]:\n{block}"
    if lead_line:
        return "\n".join([lead_line, *passage.items])
    return "\n".join(_cite(item, number) for item in passage.items)


def _join(parts: Sequence[AnswerSentence], passages: Sequence[Passage]) -> str:
    """Consecutive sentences as one paragraph; lists and code blocks as blocks of their own."""
    blocks: list[str] = []
    paragraph: list[str] = []
    for part, passage in zip(parts, passages, strict=True):
        if passage.kind == "sentence":
            paragraph.append(part.text)
            continue
        if paragraph:
            blocks.append(" ".join(paragraph))
            paragraph = []
        blocks.append(part.text)
    if paragraph:
        blocks.append(" ".join(paragraph))
    return "\n\n".join(blocks)


def _cite(sentence: str, number: int) -> str:
    """``"It is." -> "It is [1]."``: the marker goes before the closing punctuation (a lead-in's
    colon too)."""
    stripped = sentence.rstrip()
    if stripped and stripped[-1] in ".!?:":
        return f"{stripped[:-1]} [{number}]{stripped[-1]}"
    return f"{stripped} [{number}]"


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
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
      a list item or code line is cited by the lead-in above it, "First steps [1]:", unless it
      cites a source itself; the trailing "Sources:" list is not graded).
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
    for sentence, numbers in answer_units(body):
        terms = set(content_terms(strip_citations(sentence)))
        if not terms:
            continue
        graded += 1
        cited = [n for n in numbers if 1 <= n <= len(sources)]
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


def answer_units(body: str) -> list[tuple[str, list[int]]]:
    """The gradable units of an answer with the sources each cites: its sentences, and each
    list item or code line on its own, which inherits the citations of the lead-in line right
    above its list ("First steps [1]:") when it has none of its own."""
    units: list[tuple[str, list[int]]] = []
    paragraph: list[str] = []
    inherited: list[int] = []
    in_fence = False

    def flush() -> None:
        nonlocal inherited
        if not paragraph:
            return
        parts = sentences(" ".join(paragraph))
        paragraph.clear()
        units.extend((part, citations_in(part)) for part in parts)
        last = strip_citations(parts[-1]) if parts else ""
        inherited = citations_in(parts[-1]) if last.endswith(":") else []

    for line in lines_of(body):  # not splitlines(): U+2028, "\f", ... do not end a line
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            in_fence = not in_fence
            continue
        if in_fence or LIST_ITEM.match(line):
            flush()
            own = citations_in(stripped)
            units.append((stripped, own or list(inherited)))
            if own and strip_citations(stripped).endswith(":"):
                inherited = own  # an item can introduce the items below it
        elif not stripped:
            flush()
            if not in_fence:
                inherited = []
        else:
            paragraph.append(stripped)
    flush()
    return units
