"""The lexical analyzer: the same one the tantivy index used, so BM25 rankings are unchanged.

Simple tokenizer (splits on non-alphanumerics, so ``IL-6`` -> ``il``, ``6``), drop tokens over
40 chars, lowercase, ASCII folding, Snowball English stemmer. No stop-word filter: BM25's idf
already discounts them. tantivy's analyzer runs in Rust (about 1 µs per token), and it is all
tantivy is still used for.
"""

from __future__ import annotations

import threading
from collections import Counter

import tantivy

_LOCAL = threading.local()


def _analyzer() -> tantivy.TextAnalyzer:
    found = getattr(_LOCAL, "analyzer", None)
    if found is None:  # one per thread: the analyzer object is not documented as thread-safe
        found = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
        _LOCAL.analyzer = found
    return found


def analyze(text: str) -> list[str]:
    """Index terms of `text` (lowercased, folded, stemmed), in order, repeats kept."""
    return list(_analyzer().analyze(text))


def term_frequencies(text: str) -> tuple[Counter[str], int]:
    """``(term -> count, length in terms)`` of a chunk's lexical text."""
    terms = analyze(text)
    return Counter(terms), len(terms)
