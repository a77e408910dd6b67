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

:class:`FileWork` is the test-analysis capability's engine: the test-analysis component
(``app/components/test_analysis.py``) opens one per process (:meth:`FileWork.from_settings`:
the parse cache, the request limits and this deployment's rule settings), and the agent's
stages and the ``analyze_tests`` operation find it with ``engine(FileWork)``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tools.test_analysis.cache import ParseCache, cache_key
from tools.test_analysis.gcpause import gc_paused
from tools.test_analysis.parsing import ParsedFile, parse_file
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig, Finding
from tools.test_analysis.validation import DEFAULT_MAX_FILES, DEFAULT_MAX_TOTAL_BYTES

if TYPE_CHECKING:
    from config import Settings

__all__ = ["FileWork", "base_config"]

_STRIPES = 64


class FileWork:
    """Single-flight parsing and rule checking over one :class:`ParseCache`."""

    def __init__(
        self,
        cache: ParseCache,
        *,
        max_files: int = DEFAULT_MAX_FILES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        config: AnalysisConfig | None = None,
    ) -> None:
        self.cache = cache
        #: The request limits (MAX_FILES, MAX_REQUEST_BYTES).
        self.max_files = max_files
        self.max_total_bytes = max_total_bytes
        #: This deployment's rule settings (a request overrides single fields).
        self.config = config or AnalysisConfig()
        self._locks = [threading.Lock() for _ in range(_STRIPES)]

    @classmethod
    def from_settings(cls, settings: Settings) -> FileWork:
        """The process's engine as configured: cache size and TTL, limits, rule settings."""
        cache = ParseCache(
            settings.analysis.parse_cache_size, settings.analysis.parse_cache_ttl_seconds
        )
        return cls(
            cache,
            max_files=settings.api.max_files,
            max_total_bytes=settings.api.max_request_bytes,
            config=base_config(settings),
        )

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
            # The full object holds the AST; hand out the light copy, and drop the tree here,
            # while the collector is paused: alive when the pause ends, its ~10^4 tracked
            # nodes would be traversed by the young-generation pass that the first allocation
            # after the pause triggers (a tenth of the cold rules time, once per file).
            light = parsed.light() if parsed.syntax is not None else parsed
            del parsed
        return light

    def findings(
        self, path: str, text: str, *, patterns: Sequence[str], rules: AnalysisConfig
    ) -> list[Finding]:
        """Rule findings of one file (shared, frozen objects: copy before changing)."""
        return check_file(self.parsed(path, text, patterns=patterns, rules=rules), rules)


def base_config(settings: Settings) -> AnalysisConfig:
    """The rule and review settings of this deployment (requests override single fields)."""
    return AnalysisConfig(
        verbose_test_max_statements=settings.analysis.verbose_test_max_statements,
        obscure_setup_max_locals=settings.analysis.obscure_setup_max_locals,
        lack_of_cohesion_threshold=settings.analysis.lack_of_cohesion_threshold,
        max_findings=settings.analysis.max_findings,
        llm_batch_size=settings.analysis.llm_batch_size,
        llm_min_confidence=settings.analysis.llm_min_confidence,
    )
