"""verbose-test, default profile: whether a long test mixes several behaviours.

A flat table of one-line checks, or one scenario told at length, is long without being
worth splitting; several act-then-check steps whose actions spread over several functions
are.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import dotted_name
from tools.test_analysis.rules.facts import TestFacts

__all__ = ["mixes_behaviours"]


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: default: a test whose checks are this share of its statements is a table of checks.
_TABLE_CHECKS = 2 / 3
#: default: a test whose actions call one function this often (share) walks that function.
_ONE_SUBJECT = 3 / 4
#: default: several behaviours are several act-then-check steps.
_MIN_BEHAVIOURS = 3


def _own_statements(node: ast.AST) -> list[ast.stmt]:
    """The test's statements in source order, compound bodies included, without the defs and
    classes it nests (a stub's or a callback's code)."""
    out: list[ast.stmt] = []
    todo: list[ast.AST] = list(reversed(node.body))  # type: ignore[attr-defined]
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFS):
            continue
        if isinstance(n, ast.stmt):
            out.append(n)
        children = [
            c
            for name in ("body", "orelse", "finalbody", "handlers", "cases")
            for c in getattr(n, name, ())
        ]
        todo.extend(reversed(children))
    return out


def _is_check(stmt: ast.stmt, checks: set[int]) -> bool:
    """One check: an assert, an assertion call, or a ``with pytest.raises(...)`` block."""
    t = type(stmt)
    if t is ast.Assert:
        return True
    if t is ast.Expr:
        value = stmt.value  # type: ignore[attr-defined]
        if type(value) is ast.Await:
            value = value.value
        return id(value) in checks
    if t is ast.With or t is ast.AsyncWith:
        return any(id(i.context_expr) in checks for i in stmt.items)  # type: ignore[attr-defined]
    return False


def mixes_behaviours(node: ast.AST, facts: TestFacts) -> bool:
    """default: the long test exercises several behaviours, each checked, rather than being a
    flat table of one-line checks (most statements are checks, or its actions call one
    function: ``r = parse(...)`` / ``assert r == ...`` rows) or one scenario told at length
    (building a document, then one comparison): at least three act-then-check steps, and its
    actions spread over several functions."""
    checks = {id(a.node) for a in facts.assertions if not a.nested}
    statements = _own_statements(node)
    inside_checks: set[int] = set()
    steps = 0
    acted = False
    n_checks = 0
    subjects: dict[str, int] = {}
    for stmt in statements:
        if id(stmt) in inside_checks:
            continue
        if _is_check(stmt, checks):
            n_checks += 1
            steps += acted
            acted = False
            inside_checks.update(id(s) for s in ast.walk(stmt) if isinstance(s, ast.stmt))
            continue
        acted = True
        value = getattr(stmt, "value", None)
        if type(value) is ast.Await:
            value = value.value
        if type(value) is ast.Call:
            name = dotted_name(value.func).rsplit(".", 1)[-1]
            subjects[name] = subjects.get(name, 0) + 1
    if n_checks >= _TABLE_CHECKS * len(statements) or steps < _MIN_BEHAVIOURS:
        return False
    calls = sum(subjects.values())
    return not calls or max(subjects.values()) < _ONE_SUBJECT * calls
