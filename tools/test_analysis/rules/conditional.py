"""conditional-logic: an assertion inside a branch, loop or comprehension of a test.

strict (SMELLS.md): every ``if``/``for``/``while``/comprehension/``match`` that holds an
assertion.

default: the ones that can hide a failure, on the judging lines of
``bench/data/frozen/README.md``:

- a loop over something the code under test computes (``for row in result:``) with no
  check of its length or contents (also through ``sorted(rows)``, ``rows.items()``, or each
  computed side of a ``zip``): when it is empty the assertions never run and the test
  passes;
- a test that is only a loop over a table of cases written inline, in the module or in the
  class (a few set-up statements before a loop over rows fed to the code count too):
  parametrize / ``subTest`` names the case, in either style;
- a branch on a computed value (``if result: assert ...``): the check may silently not run;
- while loops, comprehensions and match statements holding assertions.

Not reported there: a short loop at the tail of a larger scenario over a fixed list (inline,
the module's, the class's or set-up's, or a fixture's), in either style: a detail of the
scenario whose failing values the report shows; and branches on a test's parameters or on
the environment (``if isinstance(expected, str)`` in a parametrized test,
``if sys.platform == ...``).

The fix is style-specific: parametrization (``@pytest.mark.parametrize``) only for pytest
tests whose iterations are independent, ``self.subTest`` for unittest loops, and for loops
over computed values an assertion on the whole collection. Its example is printed from the
AST, so it parses.

Where a loop's rows come from and whether a test is a table of cases is decided in
:mod:`.loop_tables`, what a loop does with its rows in :mod:`.loop_rows`, whether a loop over
computed values has its length checked in :mod:`.length_checks`, and which branches are
guards on parameters or the environment in :mod:`.branch_guards`.
"""

from __future__ import annotations

import ast
import re

from tools.test_analysis.rules.branch_guards import (
    about_parameters_or_environment,
    explicit_failure,
    parameter_names,
    uses_locals,
)
from tools.test_analysis.rules.common import Emitter, segment, within
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.helpers import decorator_name
from tools.test_analysis.rules.length_checks import short_zip, size_checked
from tools.test_analysis.rules.loop_rows import (
    compares_with_target,
    independent,
    names_the_case,
    settings_only,
    target_used,
)
from tools.test_analysis.rules.loop_tables import (
    generated,
    inline_table,
    literal_table,
    suite_helper,
    whole_test,
    written_table,
)

__all__ = ["check_conditional_logic"]

_CONSTRUCT = {
    ast.If: "if statement",
    ast.For: "for loop",
    ast.AsyncFor: "async for loop",
    ast.While: "while loop",
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
    ast.Match: "match statement",
}
_BODY_LIMIT = 8  # statements of the loop body shown in an example


def _property_based(func: ast.AST) -> bool:
    """A hypothesis test (``@given(...)``): its data is drawn, many examples per run."""
    return any(decorator_name(d) == "given" for d in func.decorator_list)  # type: ignore[attr-defined]


#: Comment words of an assert written for the type checker (``assert x  # for mypy``).
_TYPE_CHECKER = re.compile(r"#.*\b(?:mypy|pyright|type[- ]?check|narrow)", re.IGNORECASE)


def _for_the_type_checker(em: Emitter, node: ast.AST) -> bool:
    if type(node) is not ast.Assert:
        return False
    line = em.parsed.line_text(node.end_lineno or node.lineno)
    return "#" in line and _TYPE_CHECKER.search(line) is not None


def _pytest_example(loop: ast.For | ast.AsyncFor, test_name: str, method: bool) -> str:
    params = ", ".join(n.id for n in ast.walk(loop.target) if type(n) is ast.Name)
    body = "\n".join(
        "    " + line for s in loop.body[:_BODY_LIMIT] for line in unparse(s).splitlines()
    )
    signature = f"self, {params}" if method else params
    return (
        f"@pytest.mark.parametrize({params!r}, {unparse(loop.iter)})\n"
        f"def {test_name}({signature}):\n{body or '    ...'}"
    )


def _unittest_example(loop: ast.For | ast.AsyncFor) -> str:
    names = [n.id for n in ast.walk(loop.target) if type(n) is ast.Name]
    labels = ", ".join(f"{n}={n}" for n in names)
    body = "\n".join(
        "        " + line for s in loop.body[:_BODY_LIMIT] for line in unparse(s).splitlines()
    )
    return (
        f"for {unparse(loop.target)} in {unparse(loop.iter)}:\n"
        f"    with self.subTest({labels}):\n{body or '        ...'}"
    )


def _collection_example(loop: ast.For | ast.AsyncFor, unittest: bool) -> str:
    items = unparse(loop.iter)
    if unittest:
        return f"items = list({items})\nself.assertEqual(items, expected_items)"
    return f"items = list({items})\nassert items == expected_items"


def check_conditional_logic(em: Emitter, facts: TestFacts) -> None:
    """Report the branches and loops of one test that hold assertions."""
    test = facts.test
    unittest = test.cls is not None and test.cls.kind == "unittest"
    strict = em.rc.strict
    if not strict and _property_based(test.node):
        return  # default: a hypothesis test's branches and loops are over drawn data
    params = parameter_names(test.node, facts) if not strict else set()
    arguments = {a.arg for a in test.node.args.args + test.node.args.kwonlyargs} - {"self"}
    for ctrl in facts.control_hits.values():
        t = type(ctrl)
        construct = _CONSTRUCT.get(t, "branch")
        inside = [a for a in facts.assertions if within(a.node, ctrl)]
        if inside and all(_for_the_type_checker(em, a.node) for a in inside):
            continue  # `assert x  # for mypy` narrows a type; it checks nothing
        if not strict and t is ast.If and id(ctrl) in facts.nested_controls:
            continue  # default: a stub's branch decides what the double does (fail once)
        inner = _first_assertion_in(facts, ctrl)
        assertion = segment(em.parsed, inner) if inner is not None else "..."
        confidence = 0.9
        if t is ast.For or t is ast.AsyncFor:
            loop: ast.For = ctrl  # type: ignore[assignment]
            literal = literal_table(loop.iter, facts, em) or (
                # default: a fixture's list, iterated as given (not computed by the test)
                not strict and type(loop.iter) is ast.Name and loop.iter.id in arguments
            )
            # what the suite's own helper yields (backends, parsers) or a collection the test
            # checks for emptiness first cannot pass by running zero times
            helper = not literal and suite_helper(loop.iter, facts, em)
            guarded = not literal and not helper and size_checked(loop, facts, em)
            short = None if strict else short_zip(loop, facts, em)
            if short is not None:
                # default: whatever the outer loop walks, `zip(expected, computed)` inside
                # it stops at the shorter side: a short or empty result passes
                em.emit_node(
                    "conditional-logic",
                    ctrl,
                    f"An assertion inside a loop over {segment(em.parsed, short.iter, 50)} "
                    "runs only as long as the shorter side, so a short or empty result "
                    "passes without checking the rest.",
                    confidence=confidence,
                    context={
                        "construct": construct,
                        "test": test.name,
                        "assertion": assertion,
                        "advice": "compare the whole collections, or zip(..., strict=True), "
                        "so a short result fails",
                        "code": _collection_example(short, unittest),
                    },
                )
                continue
            if not strict and (helper or guarded):
                continue  # default: a sweep over the suite's variants, or a checked result
            if not strict and literal and generated(loop.iter, facts):
                continue  # default: range(1000), permutations(...): a sweep, not cases
            if (literal and independent(loop)) or helper or guarded:
                # default: a test that is only a loop over a table written inline is a table
                # of cases: parametrize / subTest names each case and runs all of them, which
                # the failing values alone do not (a short loop inside a larger scenario, or
                # over a module's list, stays a detail of that scenario)
                cases = (
                    inline_table(loop.iter, facts) or written_table(loop.iter, facts, em)
                ) and whole_test(loop, test.node, facts)
                if not strict and not cases:
                    # default (the judging line): a short loop at the tail of a larger
                    # scenario, over a fixed list, is a detail of that scenario (pytest
                    # shows the failing values, unittest's assertIn/assertEqual the row)
                    continue
                if not strict and not target_used(loop):
                    continue  # `for _ in range(5)`: a repetition, not a table of cases
                if not strict and not cases and compares_with_target(loop, facts):
                    # assertEqual(actual, expected) against the row's own expected value, in
                    # a loop that is a detail of a larger test: the failure prints the case.
                    # A test that is only that loop is a table of cases (issue 28: kept,
                    # parametrize / subTest runs every case and names the failing one)
                    continue
                if not strict and (names_the_case(loop, facts) or settings_only(loop, facts)):
                    # the assertion's msg shows the row, or the loop only switches an option
                    # (`flags=flags`) under the same check: a sweep of settings, not cases
                    continue
                over = "a fixed table" if literal else segment(em.parsed, loop.iter, 40)
                message = (
                    f"An assertion inside a {construct} over {over} checks every case in one "
                    "test, so a failure stops the other cases and does not name its case."
                )
                if unittest:
                    advice = (
                        f"wrap the body in `with self.subTest(...)` so each case of the "
                        f"{construct} is reported on its own"
                    )
                    example = _unittest_example(loop)
                else:
                    advice = "turn the table into @pytest.mark.parametrize cases"
                    example = _pytest_example(loop, test.name, test.cls is not None)
            else:
                if literal and not strict:
                    continue  # cases that depend on each other: a loop is the honest form
                message = (
                    f"An assertion inside a {construct} over {segment(em.parsed, loop.iter, 40)} "
                    "runs once per item, and not at all when there is none: the test then "
                    "passes without checking anything."
                )
                advice = (
                    "assert on the whole collection (its length or its expected items) so an "
                    "empty or short result fails"
                )
                example = _collection_example(loop, unittest)
        elif t is ast.If:
            branch: ast.If = ctrl  # type: ignore[assignment]
            if not strict and (
                about_parameters_or_environment(branch.test, params, facts)
                or not uses_locals(branch.test, facts)
                or explicit_failure(branch)
            ):
                continue  # default: only branches on a value the test computes
            message = (
                f"An assertion inside an if statement on {segment(em.parsed, branch.test, 40)} "
                "runs only when the condition holds, so the test can pass without it."
            )
            advice = (
                "assert the condition itself, or split the cases into separate tests so "
                "each check always runs"
            )
            condition = unparse(branch.test)
            example = (
                (f"self.assertTrue({condition})" if unittest else f"assert {condition}")
                + "\n"
                + "\n".join(unparse(s) for s in branch.body[:_BODY_LIMIT])
            )
        else:
            message = f"An assertion inside a {construct} runs only for some inputs or iterations."
            advice = "split the cases into separate tests, or assert on the collected result"
            example = ""
            confidence = 0.8
        em.emit_node(
            "conditional-logic",
            ctrl,
            message,
            confidence=confidence,
            context={
                "construct": construct,
                "test": test.name,
                "assertion": assertion,
                "advice": advice,
                "code": example,
            },
        )


def _first_assertion_in(facts: TestFacts, ctrl: ast.AST) -> ast.AST | None:
    start, end = ctrl.lineno, ctrl.end_lineno or ctrl.lineno  # type: ignore[attr-defined]
    inside = [a.node for a in facts.assertions if start <= a.node.lineno <= end]  # type: ignore[attr-defined]
    return min(inside, key=lambda n: (n.lineno, n.col_offset), default=None)  # type: ignore[attr-defined]
