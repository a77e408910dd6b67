"""conditional-logic: whether a loop over computed values can pass by running zero times.

The test checks the iterable itself outside the loop (its length or contents, also through
wrappers that keep the items: ``sorted(rows)``, ``rows.items()``, each computed side of a
``zip``) or stops before the loop when it is empty; and a ``zip`` of a computed side nested in
a loop stops at the shorter side unless a length check or ``strict=True`` rules that out.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import Emitter, dotted_name, walk, within
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.loop_tables import literal_table, suite_helper

__all__ = ["short_zip", "size_checked"]


def short_zip(
    loop: ast.For | ast.AsyncFor, facts: TestFacts, em: Emitter
) -> ast.For | ast.AsyncFor | None:
    """A loop nested in ``loop`` over ``zip(...)`` of something the code under test computed
    (not strict, no length checked by an assertion), holding an assertion."""
    for n in ast.walk(loop):
        if n is loop or type(n) not in (ast.For, ast.AsyncFor):
            continue
        inner: ast.For = n  # type: ignore[assignment]
        it = inner.iter
        if not (type(it) is ast.Call and dotted_name(it.func) == "zip" and len(it.args) >= 2):
            continue
        if any(k.arg == "strict" for k in it.keywords):
            continue
        computed = [
            a for a in it.args if not literal_table(a, facts, em) and not suite_helper(a, facts, em)
        ]
        if not computed or not any(within(a.node, inner) for a in facts.assertions):
            continue
        # a length check in the same pass of the outer loop (its names are per pass)
        checked = {
            ast.dump(x)
            for a in facts.assertions
            if within(a.node, loop) and not within(a.node, inner)
            for x in ast.walk(a.node)
        }
        if any(ast.dump(a) in checked for a in it.args):
            continue
        return inner
    return None


#: Calls that walk their first argument as it is: checking the argument checks them.
_SAME_ITEMS = frozenset({"list", "tuple", "sorted", "reversed", "enumerate", "iter", "set"})


def size_checked(
    loop: ast.For | ast.AsyncFor, facts: TestFacts, em: Emitter, iterable: ast.expr | None = None
) -> bool:
    """The test asserts something about the iterable itself outside the loop (its length,
    its contents), or skips / stops before the loop when it is empty (``if not parsers:
    pytest.skip(...)``), so an empty one cannot pass silently. Looks through wrappers that
    keep the items (``sorted(rows)``, ``rows.items()``) and, for ``zip``, needs every
    computed side checked (or ``strict=True`` beside a side the test writes down)."""
    if iterable is None:
        iterable = loop.iter
    if type(iterable) is ast.Call:
        func = iterable.func
        name = dotted_name(func).rsplit(".", 1)[-1]
        if name in _SAME_ITEMS and iterable.args:
            if size_checked(loop, facts, em, iterable.args[0]):
                return True
        elif name in ("items", "keys", "values") and type(func) is ast.Attribute:
            if not iterable.args and size_checked(loop, facts, em, func.value):
                return True
        elif name == "zip" and len(iterable.args) >= 2:
            computed = [
                a
                for a in iterable.args
                if not literal_table(a, facts, em) and not suite_helper(a, facts, em)
            ]
            strict = any(
                k.arg == "strict" and type(k.value) is ast.Constant and k.value.value is True
                for k in iterable.keywords
            )
            if strict and len(computed) < len(iterable.args):
                return True  # zip(rows, EXPECTED, strict=True): the lengths must agree
            if computed and all(size_checked(loop, facts, em, a) for a in computed):
                return True
    text = ast.dump(iterable)
    for a in facts.assertions:
        for n in ast.walk(a.node):
            if isinstance(n, ast.expr) and n is not iterable and ast.dump(n) == text:
                return True
    for stmt in walk(facts.test.node):
        if (
            type(stmt) is ast.If
            and stmt.lineno < loop.lineno
            and _stops(stmt.body)
            and any(ast.dump(n) == text for n in ast.walk(stmt.test))
        ):
            return True
    return False


def _stops(body: list[ast.stmt]) -> bool:
    """The block ends the test: a skip, a failure, a raise or a return."""
    last = body[-1] if body else None
    if type(last) in (ast.Raise, ast.Return):
        return True
    return (
        type(last) is ast.Expr
        and type(last.value) is ast.Call
        and dotted_name(last.value.func).rsplit(".", 1)[-1] in ("skip", "skipTest", "fail", "xfail")
    )
