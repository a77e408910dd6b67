"""conditional-logic: what a loop over cases does with its rows.

Whether its iterations share no state (parametrization fits), whether it uses its row at
all (``for _ in range(5)`` is a repetition), and whether a failure inside it already names
its case: every assertion's message built from the row, an ``assertEqual`` against the
row's own expected value, or a sweep of named settings passed as keyword arguments.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import names_in, within
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.messages import message_of

__all__ = ["compares_with_target", "independent", "names_the_case", "settings_only", "target_used"]


_MUTATORS = frozenset({"append", "extend", "add", "update", "pop", "insert", "remove", "clear"})


def independent(loop: ast.For | ast.AsyncFor) -> bool:
    """Iterations share no state: no break/continue/return, no augmented assignment, no
    mutation of a collection, no else block."""
    if loop.orelse:
        return False
    for n in ast.walk(loop):
        t = type(n)
        if t in (ast.Break, ast.Continue, ast.Return, ast.AugAssign, ast.Nonlocal, ast.Global):
            return False
        if t is ast.Call and type(n.func) is ast.Attribute and n.func.attr in _MUTATORS:  # type: ignore[attr-defined]
            return False
    return True


def names_the_case(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
    """Every assertion in the loop passes a message built from the loop's variables
    (``assertEqual(f(x), y, msg=x)``): the failure names its case."""
    names = names_in(loop.target)
    inside = [a for a in facts.assertions if within(a.node, loop)]
    if not inside:
        return False
    for a in inside:
        message = message_of(a)
        if message is None or not (names_in(message) & names):
            return False
    return True


def settings_only(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
    """The loop walks named modes (``(0, sv.NOCACHE)``, ``(util.PYHTML, util.HTML5)``) and
    its variables are only passed as keyword arguments (``flags=flags``): the same check
    under each setting (a backend or cache sweep), not a table of cases. Rows that are
    values (``for wait in (None, 0)``) are cases."""
    rows = loop.iter
    if type(rows) is ast.Name:
        rows = facts.bindings.get(rows.id, rows)
    elts = getattr(rows, "elts", None)
    if not elts or not any(type(e) in (ast.Attribute, ast.Name) for e in elts):
        return False
    names = names_in(loop.target)
    as_keyword: set[int] = set()
    used: list[ast.Name] = []
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if type(n) is ast.keyword and type(n.value) is ast.Name:
                as_keyword.add(id(n.value))
            elif type(n) is ast.Name and n.id in names and type(n.ctx) is ast.Load:
                used.append(n)
    return bool(used) and all(id(n) in as_keyword for n in used)


def target_used(loop: ast.For | ast.AsyncFor) -> bool:
    names = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    return any(type(n) is ast.Name and n.id in names for s in loop.body for n in ast.walk(s))


def compares_with_target(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
    """Every equality assertion in the loop compares with a loop variable (the table's
    expected value), so its failure message shows which case broke."""
    names = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    # names the loop body assigns (`actual = f(row)`): per-row values, not fixed ones
    inner = {
        n.id
        for s in loop.body
        for n in ast.walk(s)
        if type(n) is ast.Name and type(n.ctx) is ast.Store
    }
    inside = [a for a in facts.assertions if within(a.node, loop) and a.kind == "unittest"]
    if not inside:
        return False
    for a in inside:
        args = getattr(a.node, "args", [])[:2]
        if not a.name.startswith("assert") or "Equal" not in a.name or len(args) < 2:
            return False
        if not any(type(x) is ast.Name and x.id in names for x in args):
            return False
        # `for actual in [variant_a, variant_b]: assertEqual(actual, expected)`: the rows
        # are the computed values and the other side is one fixed name, so the failure
        # prints the same expected value whichever variant broke
        if any(type(x) is ast.Name and x.id not in names and x.id not in inner for x in args):
            return False
    return True
