"""Offline (no-LLM) strategies of the knowledge agent: real heuristics, deterministic and pure.

| step | function |
|---|---|
| evaluate_query | `evaluate_query`: query shape -> ``lambda_mult`` (0 lexical .. 1 semantic) |
| grade_documents | `grade_documents`: score threshold + minimum relevant documents |
| transform_query | `expand_query`: RM3-style pseudo-relevance feedback from the top documents |
| generate_answer | `extractive_answer`: the passages that answer (lists whole), cited ``[n]`` |
| grade_response | `grade_response`: query coverage + support of each sentence by its sources |

The answering pair (`extractive_answer`, `grade_response`) is in `agents.knowledge.extractive`,
which reads this module's `Hit`. No I/O: every input is passed in (hits are `SearchHit`-like
objects with ``document_id``, ``title``, ``source``, ``text``, ``chunk_id`` and ``score``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from agents.knowledge.text import (
    QUESTION_WORDS,
    STOPWORDS,
    content_terms,
    stem,
    words,
)


class Hit(Protocol):
    """What the strategies read from a search hit."""

    chunk_id: str
    document_id: str
    title: str
    source: str
    text: str

    @property
    def score(self) -> float: ...


# --- evaluate_query ------------------------------------------------------------------------

_QUOTED = re.compile(r'"[^"]+"|“[^”]+”|`[^`]+`')
_CODE_TOKEN = re.compile(
    r"""^(?:
        [A-Za-z]+[_.:/\\-]?\d+[A-Za-z0-9]*      # letters+digits: B12, IL-6, E404, v2, CVE-2021
      | \d+[A-Za-z]+\w*                         # digits+letters: 5xx, 3D, 1p36
      | [a-z]+[A-Z]\w*                          # camelCase / mixed case: getUser, mRNA, PrP
      | [A-Z]{2,}[a-z]?\d*                      # acronyms: HTTP, DNA, UKs
      | \w+(?:[_.]\w+)+                         # snake_case, dotted.path, file.ext
      | \w*[/\\]\w+\S*                          # paths and ratios: /etc/hosts, 1/2000
      | 0x[0-9a-fA-F]+                          # hex
    )$""",
    re.VERBOSE,
)
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*%?$")


@dataclass(frozen=True, slots=True)
class QueryEvaluation:
    """``lambda_mult`` for hybrid search and why (each signal's contribution)."""

    lambda_mult: float
    query_type: Literal["lexical", "semantic", "balanced"]
    signals: dict[str, float]
    reasons: list[str]
    method: str = "heuristic"


def evaluate_query(
    query: str, *, base: float = 0.5, floor: float = 0.15, ceiling: float = 0.85
) -> QueryEvaluation:
    """Weigh lexical vs semantic retrieval from the query's shape.

    Lexical (exact-match) evidence lowers lambda: quoted phrases or backticked code, identifiers
    and codes (``B12``, ``IL-6``, ``getUser``, ``HTTP``, ``snake_case``, paths), bare numbers, and
    short keyword queries. Natural-language evidence raises it: a question form, and longer
    queries rich in function words (paraphrase is what embeddings are good at). The result is
    clamped to [floor, ceiling]: neither leg is switched off on a guess.
    """
    text = query.strip()
    signals: dict[str, float] = {}
    reasons: list[str] = []
    quoted = _QUOTED.findall(text)
    if quoted:
        signals["quoted"] = -0.25
        reasons.append(f"exact phrase(s) {', '.join(quoted[:3])}")
    raw_tokens = [t.strip(".,;:!?()[]{}'\"“”") for t in _QUOTED.sub(" ", text).split()]
    raw_tokens = [t for t in raw_tokens if t]
    codes = sorted({t for t in raw_tokens if _CODE_TOKEN.match(t) and not _NUMBER.match(t)})
    if codes:
        signals["identifiers"] = -min(0.3, 0.15 * len(codes))
        reasons.append(f"identifiers/codes {', '.join(codes[:5])}")
    numbers = [t for t in raw_tokens if _NUMBER.match(t)]
    if numbers:
        signals["numbers"] = -min(0.1, 0.05 * len(numbers))
        reasons.append(f"numbers {', '.join(numbers[:3])}")
    tokens = words(text)
    function_words = [w for w in tokens if w in STOPWORDS]
    is_question = text.endswith("?") or (bool(tokens) and tokens[0] in QUESTION_WORDS)
    if is_question:
        signals["question"] = 0.15
        reasons.append("phrased as a question")
    if 0 < len(tokens) <= 3 and not is_question and not function_words:
        signals["keywords"] = -0.15
        reasons.append("short keyword query")
    if len(tokens) >= 8 and len(function_words) / len(tokens) >= 0.3:
        signals["natural_language"] = 0.1
        reasons.append("long natural-language sentence")
    value = min(ceiling, max(floor, base + sum(signals.values())))
    kind: Literal["lexical", "semantic", "balanced"] = (
        "lexical" if value < base - 0.05 else "semantic" if value > base + 0.05 else "balanced"
    )
    if not reasons:
        reasons.append("no strong signal: balanced")
    return QueryEvaluation(round(value, 4), kind, signals, reasons)


_SOURCE_WORDS = (
    r"(?:(?:uploaded|ingested|stored|saved|own)\s+)?(?:documents?|docs|documentation|files?|notes|"
    r"knowledge[\s-]?base|kb|sources|handbook|manual|wiki|runbooks?)"
)
_OWNER = r"(?:my|our|the|these|those|your|its)\s+"
_META = re.compile(
    "|".join(
        [
            rf"\b(?:according\s+to|based\s+on|from|in|using|per)\s+(?:{_OWNER})?{_SOURCE_WORDS}\b",
            rf"\bwhat\s+(?:(?:do|does|did)\s+)?(?:{_OWNER})?{_SOURCE_WORDS}\s+(?:says?|said|"
            rf"tells?\s+(?:me|us)|mentions?|states?)(?:\s+(?:about|on|regarding))?",
            rf"\b(?:search|check|look\s+(?:in|through)|find\s+in)\s+(?:{_OWNER})?{_SOURCE_WORDS}"
            rf"(?:\s+(?:for|about))?",
            r"\b(?:please\s+)?(?:and\s+)?cite\s+(?:your|the)\s+sources\b",
            r"\bwith\s+(?:citations|sources)\b",
        ]
    ),
    re.IGNORECASE,
)


def strip_meta(question: str) -> str:
    """The question without the words that point at the knowledge base itself ("according to
    my documents", "what do the docs say about", "cite your sources"): they route a message
    here, but are noise to search with and to grade an answer against. Returns the question
    unchanged when nothing else would be left."""
    if _META.search(question) is None:
        return question.strip()
    text = _META.sub(" ", question)
    text = re.sub(r"\s+([,.;:?!])", r"\1", " ".join(text.split()))
    text = re.sub(r"^[\s,.;:!-]+|[\s,;:-]+$", "", text)
    text = re.sub(r"([,.;:])(?=[?!.]$)", "", text)
    text = re.sub(r"([?!])[.]$", r"\1", text).strip()
    if len(words(text)) < 2:
        return question.strip()
    return text[0].upper() + text[1:] if text[0].islower() else text


# --- grade_documents -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DocumentGrade:
    """Grade of one retrieved document (its best chunk)."""

    chunk_id: str
    document_id: str
    title: str
    score: float
    relevant: bool


@dataclass(frozen=True, slots=True)
class DocumentGrading:
    """Outcome of grading: pass/fail, the per-document grades and the reason."""

    passed: bool
    grades: list[DocumentGrade]
    relevant_count: int
    mean_relevant_score: float
    reason: str
    method: str = "score-threshold"

    @property
    def relevant(self) -> list[DocumentGrade]:
        """The relevant documents, best first."""
        return [g for g in self.grades if g.relevant]


def grade_documents(
    hits: Sequence[Hit],
    *,
    threshold: float,
    min_relevant: int,
    relevance_threshold: float | None = None,
) -> DocumentGrading:
    """Score-threshold grading.

    A document (chunks of one document count once, by their best score) is relevant when its
    score >= ``relevance_threshold`` (default: ``threshold``). The set passes when at least
    ``min_relevant`` documents are relevant and their mean score >= ``threshold``.
    """
    cut = threshold if relevance_threshold is None else relevance_threshold
    best: dict[str, Hit] = {}
    for hit in hits:
        if hit.document_id not in best or hit.score > best[hit.document_id].score:
            best[hit.document_id] = hit
    grades = [
        DocumentGrade(h.chunk_id, h.document_id, h.title, h.score, h.score >= cut)
        for h in best.values()
    ]
    return judge_grades(grades, threshold=threshold, min_relevant=min_relevant, cut=cut)


def judge_grades(
    grades: Sequence[DocumentGrade],
    *,
    threshold: float,
    min_relevant: int,
    cut: float | None = None,
    method: str = "score-threshold",
) -> DocumentGrading:
    """The pass rule shared by every grader (score threshold or LLM): at least
    ``min_relevant`` documents are relevant and their mean score >= ``threshold``.

    ``cut`` is the per-document relevance bar, only used to explain a failure."""
    ordered = sorted(grades, key=lambda g: -g.score)
    relevant = [g for g in ordered if g.relevant]
    mean = sum(g.score for g in relevant) / len(relevant) if relevant else 0.0
    passed = len(relevant) >= min_relevant and (not relevant or mean >= threshold)
    top = f"best {ordered[0].score:.2f}" if ordered else "nothing retrieved"
    if passed:
        reason = f"{len(relevant)} relevant document(s) (>= {min_relevant}), mean {mean:.2f}"
    elif len(relevant) < min_relevant:
        bar = f"scored >= {cut:.2f}" if cut is not None else "were judged relevant"
        reason = f"only {len(relevant)} of {len(ordered)} document(s) {bar} ({top})"
    else:
        reason = f"mean score {mean:.2f} of the relevant documents is below {threshold:.2f}"
    return DocumentGrading(passed, ordered, len(relevant), round(mean, 6), reason, method)


# --- transform_query: pseudo-relevance feedback ---------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryExpansion:
    """The rewritten query and the feedback behind it."""

    query: str
    original: str
    added_terms: list[str]
    term_weights: dict[str, float]
    feedback_documents: list[str]
    method: str = "prf-rm3"


def expand_query(
    query: str,
    hits: Sequence[Hit],
    *,
    feedback_docs: int = 3,
    expansion_terms: int = 5,
    idf: Callable[[str], float] | Mapping[str, float] | None = None,
) -> QueryExpansion:
    """RM3-style expansion: add the terms most probable in the top documents.

    ``P(w|R) = sum_d P(w|d) * P(d|q)`` over the ``feedback_docs`` best documents, with
    ``P(w|d)`` the term's share of the document's content words and ``P(d|q)`` the documents'
    normalised scores; weights are multiplied by the corpus idf of the word when an ``idf``
    (a callable such as `LexicalIndex.idf_of`, or a mapping) is given. Query words,
    stop words, numbers and one-letter terms are never added; each added stem is written in its
    most frequent surface form so the dense leg can read it too. With no feedback documents the
    query is relaxed instead (quotes dropped, content words only).
    """
    query_stems = set(content_terms(query))
    docs: list[Hit] = []
    for hit in hits:
        if hit.document_id not in {d.document_id for d in docs}:
            docs.append(hit)
        if len(docs) >= feedback_docs:
            break
    if not docs:
        relaxed = " ".join(w for w in words(query) if w not in STOPWORDS) or query
        return QueryExpansion(relaxed, query, [], {}, [], method="relax")
    raw = [max(h.score, 0.0) for h in docs]
    total = sum(raw)
    doc_weights = [r / total for r in raw] if total > 0 else [1 / len(docs)] * len(docs)
    weights: dict[str, float] = {}
    surface: dict[str, Counter[str]] = {}
    for hit, doc_weight in zip(docs, doc_weights, strict=True):
        tokens = [w for w in words(f"{hit.title} {hit.text}") if w not in STOPWORDS]
        stems = [stem(w) for w in tokens]
        if not stems:
            continue
        counts = Counter(stems)
        for s, n in counts.items():
            weights[s] = weights.get(s, 0.0) + doc_weight * n / len(stems)
        for w, s in zip(tokens, stems, strict=True):
            surface.setdefault(s, Counter())[w] += 1
    scored: dict[str, float] = {}
    for s, weight in weights.items():
        if s in query_stems or len(s) < 3 or s.isdigit():
            continue
        factor = 1.0
        if idf is not None:  # looked up by surface word: the index may stem differently
            word = surface[s].most_common(1)[0][0]
            factor = idf(word) if callable(idf) else idf.get(word, 0.0)
        if factor > 0:
            scored[s] = weight * factor
    chosen = sorted(scored, key=lambda s: (-scored[s], s))[:expansion_terms]
    added = [surface[s].most_common(1)[0][0] for s in chosen]
    expanded = f"{query.strip()} {' '.join(added)}".strip()
    return QueryExpansion(
        expanded,
        query,
        added,
        {a: round(scored[s], 6) for a, s in zip(added, chosen, strict=True)},
        [d.document_id for d in docs],
    )


__all__ = [
    "DocumentGrade",
    "DocumentGrading",
    "Hit",
    "QueryEvaluation",
    "QueryExpansion",
    "evaluate_query",
    "expand_query",
    "grade_documents",
    "judge_grades",
    "strip_meta",
]
