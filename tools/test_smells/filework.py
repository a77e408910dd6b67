"""Parse each file once per run, whichever stage needs it first.

``parse_files`` and ``check_rules`` run in parallel, and both need the file parsed; in LLM
modes ``plan_analysis`` needs it earlier still (to cut the test batches). The AST is the
expensive part and must not be kept around (see :mod:`parsing`: live trees slow every GC
pass), so the rule is: **the first stage that touches a file in a run parses it and, while the
tree is alive, runs the rules the run needs**, leaving the light file plus its rule findings
(the ``rule_memo``) in the parse cache. Every later stage gets a cache hit and a memo hit.

Two stages reaching the same file at the same moment would both miss the cache, so each file
is *single-flight*: a lock striped by path makes the second caller wait for the first and
then hit. ``parse_files`` walks the files forward and ``check_rules`` backward, so on a cold
cache they meet in the middle and each parses about half, instead of queueing behind each
other.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from tools.test_smells.cache import ParseCache, cache_key
from tools.test_smells.gcpause import gc_paused
from tools.test_smells.parsing import ParsedFile, parse_file
from tools.test_smells.rules import check_file
from tools.test_smells.schemas import AnalysisConfig, Finding

__all__ = ["FileWork"]

_STRIPES = 64


class FileWork:
    """Single-flight parsing and rule checking over one :class:`ParseCache`."""

    def __init__(self, cache: ParseCache) -> None:
        self.cache = cache
        self._locks = [threading.Lock() for _ in range(_STRIPES)]

    def is_cached(self, path: str, text: str, patterns: Sequence[str]) -> bool:
        """Whether ``path`` with this ``text`` is in the cache (a peek: not counted)."""
        return cache_key(path, text, tuple(patterns)) in self.cache

    def parsed(
        self,
        path: str,
        text: str,
        *,
        patterns: Sequence[str],
        rules: AnalysisConfig | None,
    ) -> ParsedFile:
        """The light parsed file (no AST). With ``rules``, their findings for that config are
        in its ``rule_memo`` when this returns (computed now, while the tree is alive, if
        nobody did before)."""
        with self._locks[hash(path) % _STRIPES], gc_paused():
            parsed = parse_file(path, text, test_file_patterns=patterns, cache=self.cache)
            if rules is not None and rules not in parsed.rule_memo:
                check_file(parsed, rules)
            # The full object holds the AST; hand out the light copy so the tree is freed by
            # reference counting as soon as this frame ends.
            return parsed.light() if parsed.syntax is not None else parsed

    def findings(
        self, path: str, text: str, *, patterns: Sequence[str], rules: AnalysisConfig
    ) -> list[Finding]:
        """Rule findings of one file (shared, frozen objects: copy before changing)."""
        return check_file(self.parsed(path, text, patterns=patterns, rules=rules), rules)
