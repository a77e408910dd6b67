"""The rule engine: every smell of SMELLS.md over a :class:`ParsedFile`.

One :class:`FactCollector` traversal per test feeds the rule families (``assertions``,
``suboptimal``, ``body``, ``classes``); ``# noqa`` comments and the config's ignore list
are applied last (ignored smells are not even computed). Findings are memoised per config in
the file's ``rule_memo``, which the parse cache shares, so an unchanged file analysed again
with the same config costs a dictionary lookup.
"""

from __future__ import annotations

import logging

from tools.test_analysis.catalogue import SYNTAX_ERROR, smell
from tools.test_analysis.parsing import ParsedFile, ParsedTree
from tools.test_analysis.rules.assertions import check_assertion_rules, check_unknown_test
from tools.test_analysis.rules.body import check_body_rules
from tools.test_analysis.rules.classes import check_class_rules, check_pytestmark
from tools.test_analysis.rules.common import Emitter, rule_config
from tools.test_analysis.rules.facts import FactCollector, TestFacts
from tools.test_analysis.rules.noqa import apply_noqa
from tools.test_analysis.schemas import AnalysisConfig, Finding, Source
from tools.test_analysis.templates import generic_suggestion

__all__ = ["DEFAULT_CONFIG", "check_file", "syntax_error_finding"]

log = logging.getLogger(__name__)

DEFAULT_CONFIG = AnalysisConfig()
#: Configs remembered per file; requests rarely vary the config, so a few suffice.
MEMO_CONFIGS = 4


def syntax_error_finding(parsed: ParsedFile) -> Finding:
    """The one ``syntax-error`` finding of a file that does not parse."""
    assert parsed.error is not None
    error = parsed.error
    return Finding(
        file=parsed.path,
        line=max(error.line, 1),
        end_line=max(error.end_line, error.line, 1),
        smell=SYNTAX_ERROR,
        severity=smell(SYNTAX_ERROR).severity,
        message=error.message[0].upper() + error.message[1:] + ".",
        suggestion=generic_suggestion(SYNTAX_ERROR),
        confidence=1.0,
        source=Source.RULE,
        context={"error": error.message, "line": str(error.line)},
    )


def check_file(
    parsed: ParsedFile, config: AnalysisConfig | None = None, *, strict: bool = False
) -> list[Finding]:
    """Rule findings of one parsed file, in no particular order. Never raises by default.

    A file that did not parse yields exactly one ``syntax-error`` finding. An unexpected
    error inside a rule (a bug) skips that test or class and is logged; ``strict=True``
    re-raises it instead (the test-suite uses that to surface bugs). The returned findings
    are shared with the memo: treat them as read-only (copy with ``model_copy``).
    """
    config = config or DEFAULT_CONFIG
    memo = parsed.rule_memo
    cached = memo.get(config)
    if cached is not None:
        return list(cached)
    findings = _check(parsed, config, strict)
    if len(memo) >= MEMO_CONFIGS:
        memo.pop(next(iter(memo)), None)
    memo[config] = findings
    return list(findings)


def _check(parsed: ParsedFile, config: AnalysisConfig, strict: bool) -> list[Finding]:
    if parsed.error is not None:
        return [] if SYNTAX_ERROR in config.ignore else [syntax_error_finding(parsed)]
    syntax = parsed.syntax_tree()
    if syntax is None:
        return []
    rc = rule_config(config)
    em = Emitter(parsed, syntax, rc)
    _run_rules(em, syntax, config, strict)
    return apply_noqa(parsed, em.findings, bare=config.honor_bare_noqa)


def _run_rules(em: Emitter, syntax: ParsedTree, config: AnalysisConfig, strict: bool) -> None:
    collector = FactCollector(syntax, em.rc)
    cohesion = em.on("lack-of-cohesion")
    min_tests = config.lack_of_cohesion_min_tests
    by_class: dict[int, list[TestFacts]] = {}
    path = em.parsed.path
    for test in syntax.tests:
        try:
            want_tokens = cohesion and test.cls is not None and test.cls.test_count >= min_tests
            facts = collector.collect(test, want_tokens=want_tokens)
            empty, skipped = check_body_rules(em, facts)
            check_assertion_rules(em, facts)
            if not empty and not skipped:
                teardown = (
                    not facts.assertions
                    and test.cls is not None
                    and collector.teardown_asserts(test.cls)
                )
                check_unknown_test(em, facts, teardown)
            if test.cls is not None:
                by_class.setdefault(id(test.cls), []).append(facts)
        except Exception:
            if strict:
                raise
            log.exception("rule engine failed on %s::%s; skipping it", path, test.qualname)
    for cls in syntax.classes:
        try:
            check_class_rules(em, cls, by_class.get(id(cls), []), collector)
        except Exception:
            if strict:
                raise
            log.exception("rule engine failed on %s::%s; skipping it", path, cls.qualname)
    for assign in syntax.module_marks:
        check_pytestmark(em, assign, "the module")
