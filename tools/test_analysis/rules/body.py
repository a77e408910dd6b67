"""Test-body rules: conditional logic, empty test, exception handling, ignored test, mystery
guest, obscure set-up, redundant print, sleepy test, verbose test.

:func:`check_body_rules` runs them for one test; their decisions live in a module each
(:mod:`.conditional`, :mod:`.exceptions`, :mod:`.guests`, :mod:`.skips`, :mod:`.prints`,
:mod:`.sleeps`, :mod:`.verbose`). The skip helpers are re-exported here, where
:mod:`.classes` imports them from.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import Emitter, join_names, segment
from tools.test_analysis.rules.conditional import check_conditional_logic
from tools.test_analysis.rules.exceptions import (
    PYTEST_STYLE,
    UNITTEST_STYLE,
    check_exception_handling,
)
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.guests import check_mystery_guests
from tools.test_analysis.rules.prints import (
    branch_calls,
    output_is_subject,
    prints_are_rare,
    written_for_a_reader,
)
from tools.test_analysis.rules.skips import (
    check_ignored_decorators,
    is_empty_body,
    skip_advice,
    skip_marker,
)
from tools.test_analysis.rules.sleeps import polling_sleeps, sleepy
from tools.test_analysis.rules.verbose import mixes_behaviours

__all__ = [
    "check_body_rules",
    "check_ignored_decorators",
    "is_empty_body",
    "skip_advice",
    "skip_marker",
]


def check_body_rules(em: Emitter, facts: TestFacts) -> tuple[bool, bool]:
    """Run the body rules of one test; returns ``(empty, skipped_unconditionally)``."""
    test = facts.test
    node = test.node
    parsed = em.parsed
    cfg = em.rc.config
    empty = is_empty_body(node.body)
    if empty:
        em.emit(
            "empty-test",
            test.line,
            test.end_line,
            f"{test.name} has no code, so it always passes.",
            context={"test": test.name},
        )
    skipped = False
    if em.on("ignored-test"):
        # a skipped test whose only code is the skip (and a docstring) is a placeholder
        skip_calls = {id(n) for n, _, _ in facts.skips}
        placeholder = is_empty_body(
            [s for s in node.body if not (type(s) is ast.Expr and id(s.value) in skip_calls)]
        )
        skipped = check_ignored_decorators(
            em, node.decorator_list, test.name, test.line, test.end_line, placeholder=placeholder
        )
        for skip_node, conditional, has_reason in facts.skips:
            if not conditional:
                skipped = True
                if has_reason and not (em.rc.strict or placeholder):
                    continue
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself unconditionally, so it never runs.",
                    confidence=0.8 if has_reason else 1.0,
                    context={
                        "test": test.name,
                        "marker": segment(parsed, skip_node, 60),
                        **skip_advice(False, has_reason),
                    },
                )
            elif not has_reason:
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself without a reason.",
                    confidence=0.9,
                    context={
                        "test": test.name,
                        "marker": segment(parsed, skip_node, 60),
                        **skip_advice(True, False),
                    },
                )
    if facts.control_hits and em.on("conditional-logic"):
        check_conditional_logic(em, facts)
    unittest = test.cls is not None and test.cls.kind == "unittest"
    style = UNITTEST_STYLE if unittest else PYTEST_STYLE
    if em.on("exception-handling"):
        check_exception_handling(em, facts, unittest, style)
    if facts.guests and em.on("mystery-guest"):
        check_mystery_guests(em, facts)
    # default: clear cases only, half as many locals again as the limit
    locals_limit = (
        cfg.obscure_setup_max_locals * (1 if em.rc.strict else 3) // (1 if em.rc.strict else 2)
    )
    if len(facts.assigned) > locals_limit:
        em.emit(
            "obscure-setup",
            test.line,
            test.end_line,
            f"{test.name} assigns {len(facts.assigned)} local variables (limit "
            f"{cfg.obscure_setup_max_locals}), hiding what the test depends on.",
            confidence=0.8,
            context={
                "test": test.name,
                "count": str(len(facts.assigned)),
                "limit": str(cfg.obscure_setup_max_locals),
                "names": join_names(facts.assigned),
            },
        )
    # A test that only prints checks nothing whatever its name says; otherwise printing is
    # fine where output is the subject (capsys, test_print_*).
    # default: in a test that asserts, a print is a diagnostic pytest/unittest show only when
    # the test fails; it is noise only in a test that checks nothing else
    # default: a print left in a test that asserts is a leftover debugging aid when printing
    # is rare in the file (pyparsing prints diagnostics in every test by design), the print
    # is on the test's main path (not a diagnostic in an `if`/`except` before failing), goes
    # to the console (not `print(..., file=buf)`, which is code under test) and prints a bare
    # value (`print(resp.text)`), not text written for a reader (a banner, a progress line,
    # a labelled value) or a repr whose printing is the check that it does not raise
    # Only a test that prints asks: the file's print share walks every test of the file.
    report_prints = bool(facts.prints) and (
        not facts.assertions
        or (not output_is_subject(em, test) and (em.rc.strict or prints_are_rare(em)))
    )
    if report_prints:
        branched = set() if em.rc.strict or not facts.assertions else branch_calls(test.node)
        for call in facts.prints:
            if (
                not em.rc.strict
                and facts.assertions
                and (
                    id(call) in branched
                    or any(k.arg == "file" for k in call.keywords)
                    or written_for_a_reader(call)
                )
            ):
                continue
            em.emit_node(
                "redundant-print",
                call,
                "The test prints output that nobody checks"
                + (" and asserts nothing." if not facts.assertions else "."),
                context={
                    "call": segment(parsed, call, 60),
                    "test": test.name,
                    "print_example": style["print"].format(test=test.name),
                },
            )
    if facts.sleeps:
        polls = polling_sleeps(node)
        for call, module in facts.sleeps:
            if id(call) not in polls:  # a poll interval in a wait loop is no fixed wait
                sleepy(em, call, module, test)
    # default (the judging line): a 60+ statement test mixing several behaviours is worth
    # splitting, while a flat table of one-line checks (or one scenario told at length, a
    # long walk through one function) is not; the strict profile counts statements only
    limit = cfg.verbose_test_max_statements
    if em.rc.strict:
        verbose = facts.statements > limit
    else:
        # the count the finding states (the labelers' "60+"), stubs and callbacks included
        verbose = facts.statements >= 2 * limit and mixes_behaviours(node, facts)
    if verbose:
        em.emit(
            "verbose-test",
            test.line,
            test.end_line,
            f"{test.name} has {facts.statements} statements (limit "
            f"{cfg.verbose_test_max_statements}), too many to see what it checks.",
            confidence=0.9,
            context={
                "test": test.name,
                "count": str(facts.statements),
                "limit": str(cfg.verbose_test_max_statements),
            },
        )
    return empty, skipped
