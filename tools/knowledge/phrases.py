"""Phrase and proximity scoring for quoted queries (``"error budget" policy``).

BM25 scores bags of terms: ``"roll back the canary"`` ranks a chunk that says "roll the
canary back ... the back office" as high as one holding the phrase. A quoted part of the query
is a phrase: the lexical leg's candidates (BM25 over all the query's terms, as before) are
re-scored here, in Python over their analyzed text, by how much of each phrase they hold:

- the exact phrase (its index terms consecutive): 1;
- its terms in order within PHRASE_SLOP extra terms: 0.5 (proximity);
- otherwise 0.

A candidate's lexical score becomes ``bm25 * (1 + PHRASE_BOOST * mean phrase match)`` and the
candidates are re-sorted; the same mean match scales the lexical part of the hybrid relevance
(`tools.knowledge.retriever`). Phrases are matched as index terms (the analyzer's), so
``"escalation policy"`` also finds "escalating policies" with the ``english`` analyzer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tools.knowledge.analysis import DEFAULT_ANALYZER, analyze

#: A quoted phrase: straight or typographic double quotes.
_QUOTED = re.compile(r'["“”]([^"“”]+)["“”]')
#: Score of a phrase whose terms appear in order but not adjacent (within the slop).
NEAR = 0.5


def quoted_phrases(query: str, analyzer: str = DEFAULT_ANALYZER) -> list[list[str]]:
    """The quoted phrases of `query` as index-term sequences (phrases of one term, which BM25
    already scores, are left out)."""
    phrases = []
    for match in _QUOTED.finditer(query):
        terms = analyze(match.group(1), analyzer)
        if len(terms) > 1:
            phrases.append(terms)
    return phrases


def phrase_match(phrase: Sequence[str], terms: Sequence[str], slop: int) -> float:
    """1.0 when `terms` hold `phrase` consecutively, `NEAR` when they hold its terms in order
    with at most `slop` other terms in between (in total), else 0.0."""
    n = len(phrase)
    if n == 0 or len(terms) < n:
        return 0.0
    first = phrase[0]
    best = 0.0
    for start, term in enumerate(terms):
        if term != first:
            continue
        if list(terms[start : start + n]) == list(phrase):
            return 1.0
        if best or slop == 0:
            continue
        # in order, each next term as early as possible: the tightest window from `start`
        pos, gaps, held = start, 0, True
        for want in phrase[1:]:
            nxt = pos + 1
            while nxt < len(terms) and terms[nxt] != want:
                nxt += 1
            gaps += nxt - pos - 1
            if nxt >= len(terms) or gaps > slop:
                held = False
                break
            pos = nxt
        if held:
            best = NEAR
    return best


def phrase_score(phrases: Sequence[Sequence[str]], terms: Sequence[str], slop: int) -> float:
    """The mean match of `phrases` in a text's index `terms` (0..1; 0 without phrases)."""
    if not phrases:
        return 0.0
    return sum(phrase_match(p, terms, slop) for p in phrases) / len(phrases)


def boosted(score: float, match: float, boost: float) -> float:
    """A BM25 score with its phrase match's boost."""
    return score * (1.0 + boost * match)
