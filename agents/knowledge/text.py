"""Small, dependency-free text helpers for the offline strategies: words, stems, sentences.

Deliberately simple and deterministic: the strategies need "does this sentence talk about the
query's words", not linguistics. The stemmer strips common English inflections only, so
"rotating", "rotated" and "rotates" meet at "rotat".
"""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n|\n(?=[-*#] )")
_CITATION = re.compile(r"\[(\d+)\]")
_CITATION_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\d+\])+)")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each either else ever few for from further get gets got had
    hadn't has hasn't have haven't having he her here hers herself him himself his how however i
    if in into is isn't it it's its itself just let's may me might more most much must mustn't my
    myself neither no nor not now of off on once only or other ought our ours ourselves out over
    own per please same shall shan't she should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they this those though through thus to too
    under until up upon us very via was wasn't we were weren't what what's when where which while
    who whom whose why will with within without won't would wouldn't yet you your yours yourself
    yourselves tell explain describe show give know find say use using used""".split()
)

QUESTION_WORDS = frozenset(
    "what why how when where who whom whose which is are can could should would does do did "
    "explain describe compare".split()
)

_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ation", "ingly", "ings",
             "ing", "edly", "ies", "ied", "ers", "ed", "es", "er", "ly", "s")  # fmt: skip


def words(text: str) -> list[str]:
    """Lowercased word tokens (letters/digits, with an inner apostrophe kept)."""
    return [w.lower().replace("’", "'") for w in WORD.findall(text)]


def stem(word: str) -> str:
    """Strip one common English suffix when at least three letters remain."""
    if word.isdigit() or len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ies":
                return base + "y"
            if suffix in ("s",) and word.endswith("ss"):
                return word
            return base
    return word


def content_terms(text: str) -> list[str]:
    """Stems of the non-stop-words of `text`, in order (duplicates kept)."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]


def sentences(text: str) -> list[str]:
    """Split text into sentences / list items / paragraphs, stripped, non-empty."""
    # "... days. [1] Next" -> "... days [1]. Next": a citation belongs to the sentence before it.
    text = _CITATION_AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", text)
    parts = _SENTENCE.split(text)
    out: list[str] = []
    for part in parts:
        cleaned = " ".join(part.split())
        if cleaned:
            out.append(cleaned)
    return out


def citations_in(text: str) -> list[int]:
    """Citation numbers ``[n]`` in `text`, in order of appearance."""
    return [int(n) for n in _CITATION.findall(text)]


def strip_citations(text: str) -> str:
    """`text` without its ``[n]`` markers."""
    return " ".join(_CITATION.sub("", text).split())
