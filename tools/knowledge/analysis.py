"""The lexical analyzers: what text becomes as BM25 index terms, the same at ingest and query.

- ``english`` (the default, KNOWLEDGE_ANALYZER): tantivy's simple tokenizer (splits on
  non-alphanumerics, so ``IL-6`` -> ``il``, ``6``), drop tokens over 40 chars, lowercase, ASCII
  folding, Snowball English stemmer -- so "escalate" meets "Escalation" and "rotated" meets
  "rotation". The analyzer the old tantivy index used, so its rankings are unchanged.
- ``simple``: the same without the stemmer (exact word forms; for corpora that are not English,
  or codes and identifiers a stemmer would conflate).

No stop-word filter: BM25's idf already discounts them. tantivy's analyzers run in Rust (about
1 µs per token), and they are all tantivy is still used for. A knowledge base records which
analyzer built its postings (`tools.knowledge.reanalyze`) and rebuilds them when it changes.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Literal, get_args

import tantivy

AnalyzerName = Literal["english", "simple"]
ANALYZERS: tuple[str, ...] = get_args(AnalyzerName)
DEFAULT_ANALYZER: AnalyzerName = "english"
#: What a knowledge base built before the analyzer was recorded used.
LEGACY_ANALYZER: AnalyzerName = "english"

_LOCAL = threading.local()


def _build(name: str) -> tantivy.TextAnalyzer:
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if name == "english":
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    elif name != "simple":
        raise ValueError(f"unknown analyzer {name!r}; choose one of {', '.join(ANALYZERS)}")
    return builder.build()


def _analyzer(name: str) -> tantivy.TextAnalyzer:
    cache: dict[str, tantivy.TextAnalyzer] | None = getattr(_LOCAL, "analyzers", None)
    if cache is None:  # one per thread: the analyzer object is not documented as thread-safe
        cache = _LOCAL.analyzers = {}
    found = cache.get(name)
    if found is None:
        found = cache[name] = _build(name)
    return found


def analyze(text: str, analyzer: str = DEFAULT_ANALYZER) -> list[str]:
    """Index terms of `text` (lowercased, folded, stemmed with ``english``), in order, repeats
    kept. Raises ValueError for an unknown analyzer name."""
    return list(_analyzer(analyzer).analyze(text))


def term_frequencies(text: str, analyzer: str = DEFAULT_ANALYZER) -> tuple[Counter[str], int]:
    """``(term -> count, length in terms)`` of a chunk's lexical text."""
    terms = analyze(text, analyzer)
    return Counter(terms), len(terms)
