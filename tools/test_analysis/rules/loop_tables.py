"""conditional-logic: where a loop's rows come from, and whether a test is a table of cases.

A loop cannot silently run zero times over cases the test writes down (a literal collection,
``range(3)``, a module's, class's or set-up's table, or something built only from those);
a sweep of generated values (``range(1000)``) is no table of cases; what the suite's own
helpers yield comes from the test suite, not the code under test; and a test that is only a
loop over a table written inline, in the module or in the class is a table of cases
(parametrize / ``subTest`` names each case). Used by :mod:`.conditional` and
:mod:`.length_checks`.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import Emitter, dotted_name, names_in, within
from tools.test_analysis.rules.facts import TestFacts

_FIXED_CALLS = frozenset(
    {"range", "enumerate", "zip", "product", "permutations", "combinations", "sorted",
     "reversed", "list", "tuple", "set", "dict", "chain", "repeat", "items", "keys", "values",
     "combinations_with_replacement"}
)  # fmt: skip

__all__ = [
    "generated",
    "inline_table",
    "literal_table",
    "suite_helper",
    "whole_test",
    "written_table",
]


def literal_table(expr: ast.expr, facts: TestFacts, em: Emitter, depth: int = 0) -> bool:
    """Cases the test writes down: a literal collection, ``range(3)``, a module table, or
    something built only from those (``itertools.product(A, B)``, a comprehension over a
    literal): the loop cannot silently run zero times."""
    if depth > 6:
        return False
    t = type(expr)
    if t is ast.Constant:
        return True
    if t in (ast.List, ast.Tuple, ast.Set):
        # `results = []` filled later is an accumulator of computed values, not a table
        return bool(expr.elts)  # type: ignore[attr-defined]
    if t is ast.Dict:
        return bool(expr.keys)  # type: ignore[attr-defined]
    if t is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        name = dotted_name(func).rsplit(".", 1)[-1]
        if name not in _FIXED_CALLS:
            return False
        parts = list(expr.args)  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and name in ("items", "keys", "values"):
            parts.append(func.value)
        return bool(parts) and all(literal_table(p, facts, em, depth + 1) for p in parts)
    if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        return all(
            literal_table(g.iter, facts, em, depth + 1)
            for g in expr.generators  # type: ignore[attr-defined]
        )
    if t is ast.Starred:
        return literal_table(expr.value, facts, em, depth + 1)  # type: ignore[attr-defined]
    if t is ast.BinOp:
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        return literal_table(left, facts, em, depth + 1) and literal_table(
            right, facts, em, depth + 1
        )
    if t is ast.Name:
        bound = facts.bindings.get(expr.id) or facts.nested_bindings.get(expr.id)  # type: ignore[attr-defined]
        if bound is not None:
            return literal_table(bound, facts, em, depth + 1)
        # CASES = [...] at module level
        return expr.id in em.syntax.tables or expr.id.isupper()  # type: ignore[attr-defined]
    if t is ast.Attribute and type(expr.value) is ast.Name and expr.value.id in ("self", "cls"):  # type: ignore[attr-defined]
        cls = facts.test.cls
        if cls is not None and _class_table(cls.node, expr.attr):  # type: ignore[attr-defined]
            return True  # `values = [...]` in the class body
        if cls is not None and any(
            _setup_table(m, expr.attr)  # type: ignore[attr-defined]
            for m in cls.setup_methods
        ):
            return True  # `self.names = [...]` in setUp: the fixture's fixed list
        return expr.attr.isupper()  # type: ignore[attr-defined]
    return False


def _setup_table(method: ast.AST, name: str) -> bool:
    """``self.<name> = [...]`` (a literal collection) in a set-up method."""
    for n in ast.walk(method):
        if type(n) is ast.Assign and any(
            type(t) is ast.Attribute
            and t.attr == name
            and type(t.value) is ast.Name
            and t.value.id in ("self", "cls")
            for t in n.targets
        ):
            return type(n.value) in (ast.List, ast.Tuple, ast.Set, ast.Dict)
    return False


def _class_table(node: ast.ClassDef, name: str) -> bool:
    for stmt in node.body:
        if type(stmt) is ast.Assign and any(
            type(t) is ast.Name and t.id == name for t in stmt.targets
        ):
            return type(stmt.value) in (ast.List, ast.Tuple, ast.Set, ast.Dict)
    return False


#: Calls that generate a sweep of values rather than list cases.
_GENERATORS = frozenset(
    {"range", "permutations", "product", "combinations", "combinations_with_replacement",
     "repeat", "count", "cycle"}
)  # fmt: skip
_WRAPPERS = frozenset({"enumerate", "list", "tuple", "sorted", "reversed", "set", "zip"})


def generated(expr: ast.expr, facts: TestFacts, depth: int = 0) -> bool:
    """``range(1000)``, ``permutations("abcd")``: values generated, not rows written down."""
    if depth > 4:
        return False
    if type(expr) is ast.Name:
        bound = facts.bindings.get(expr.id)
        return bound is not None and generated(bound, facts, depth + 1)
    if type(expr) is not ast.Call:
        return False
    name = dotted_name(expr.func).rsplit(".", 1)[-1]
    if name in _GENERATORS:
        return True
    return name in _WRAPPERS and bool(expr.args) and generated(expr.args[0], facts, depth + 1)


def suite_helper(expr: ast.expr, facts: TestFacts, em: Emitter) -> bool:
    """The iterable comes from the test suite's own code, not the code under test: a
    function of a support module (``util.available_parsers(...)``), or a helper of this
    file or class that yields, asserts or skips (``self.soups()``)."""
    while type(expr) is ast.Call and dotted_name(expr.func) in _WRAPPERS and expr.args:
        expr = expr.args[0]
    if type(expr) is not ast.Call:
        return False
    func = expr.func
    syntax = em.syntax
    if type(func) is ast.Name:
        if func.id in syntax.suite_names:
            return True
        return _produces_cases(syntax.functions.get(func.id))
    if type(func) is ast.Attribute and type(func.value) is ast.Name:
        owner = func.value.id
        if owner in syntax.suite_names:
            return True
        if owner in ("self", "cls") and facts.test.cls is not None:
            return _produces_cases(_method(em, facts.test.cls.node, func.attr, 0))
    return False


def _method(em: Emitter, node: ast.ClassDef, name: str, depth: int) -> ast.AST | None:
    for stmt in node.body:
        if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == name:  # type: ignore[attr-defined]
            return stmt
    if depth < 4:
        for base in node.bases:
            found = em.syntax.all_classes.get(dotted_name(base).rsplit(".", 1)[-1])
            if found is not None and found is not node:
                method = _method(em, found, name, depth + 1)
                if method is not None:
                    return method
    return None


def _produces_cases(func: ast.AST | None) -> bool:
    """A helper that yields its cases or asserts / skips when it has none."""
    if func is None:
        return False
    for n in ast.walk(func):
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom or t is ast.Assert:
            return True
        if t is ast.Call and dotted_name(n.func).rsplit(".", 1)[-1] in ("skip", "skipTest"):  # type: ignore[attr-defined]
            return True
    return False


#: A table of cases has at least this many rows.
_MIN_CASES = 2
#: A test is "only the loop" when it has at most this many other statements (besides its
#: docstring and the table's own assignment).
_MAX_OTHER_STATEMENTS = 1


def _is_display(expr: ast.expr | None) -> bool:
    """A literal list/tuple/set/dict of at least two rows (``.items()`` of one too)."""
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and not expr.args:
        if expr.func.attr in ("items", "keys", "values"):
            expr = expr.func.value
    if type(expr) is ast.Dict:
        return len(expr.keys) >= _MIN_CASES
    if type(expr) in (ast.List, ast.Tuple, ast.Set):
        return len(expr.elts) >= _MIN_CASES  # type: ignore[union-attr]
    return False


def inline_table(expr: ast.expr, facts: TestFacts) -> bool:
    """The loop walks a table written in the test itself (not a module's or fixture's)."""
    if type(expr) is ast.Name:
        return _is_display(facts.bindings.get(expr.id))
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and not expr.args:
        if type(expr.func.value) is ast.Name and expr.func.attr in ("items", "keys", "values"):
            return _is_display(facts.bindings.get(expr.func.value.id))
    return _is_display(expr)


#: A table test may set up its subject in this many statements before the loop.
_MAX_SETUP_STATEMENTS = 3


def whole_test(loop: ast.For | ast.AsyncFor, func: ast.AST, facts: TestFacts) -> bool:
    """The loop is a top-level statement and nearly all of the test: at most one other
    statement, or a few set-up statements before it (``registry = Registry()``,
    ``registry.load()``) when the loop ends the test, holds all of its checks, walks rows
    of cases (``for key, expected in ...``) and feeds each row to the code
    (``registry.lookup(key)``), rather than checking a scenario's outcome item by item
    (``for name in ("ann", "bob"): assert db.find(name)`` after an import)."""
    body: list[ast.stmt] = func.body  # type: ignore[attr-defined]
    if not any(s is loop for s in body):
        return False
    # the docstring, the table's assignment and the functions or classes the test defines
    # (rows of the table: `for boom in (boom_a, boom_b)`) are no steps of a scenario, unless
    # they keep state across calls (`nonlocal`: the rows are successive states)
    others = [
        s
        for s in body
        if s is not loop
        and not (type(s) is ast.Expr and type(s.value) is ast.Constant)
        and not (type(s) is ast.Assign and _is_display(s.value))
        and not (
            type(s) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            and not any(type(n) in (ast.Nonlocal, ast.Global) for n in ast.walk(s))
        )
    ]
    if len(others) <= _MAX_OTHER_STATEMENTS:
        return True
    setup = [s for s in others if type(s) not in (ast.Import, ast.ImportFrom)]
    return (
        body[-1] is loop
        and type(loop.target) is ast.Tuple
        and len(setup) <= _MAX_SETUP_STATEMENTS
        and all(within(a.node, loop) for a in facts.assertions)
        and _feeds_rows(loop)
    )


def _feeds_rows(loop: ast.For | ast.AsyncFor) -> bool:
    """A call in the loop body takes a loop variable as an argument: each row is an input."""
    names = names_in(loop.target)
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if type(n) is ast.Call:
                args = [*n.args, *(k.value for k in n.keywords)]
                if any(type(x) is ast.Name and x.id in names for a in args for x in ast.walk(a)):
                    return True
    return False


def written_table(expr: ast.expr, facts: TestFacts, em: Emitter) -> bool:
    """The loop walks a table the module or the test's class writes down (``CASES = [...]``
    at module level, ``values = [...]`` in the class body): a whole test over it is a table
    of cases as much as over an inline one (CALIBRATION3A.md's call; the frozen README's
    reason, "parametrize / subTest names the case", holds for it too)."""
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and not expr.args:
        if expr.func.attr in ("items", "keys", "values"):
            expr = expr.func.value
    if type(expr) is ast.Name:
        return expr.id in em.syntax.tables
    cls = facts.test.cls
    return (
        cls is not None
        and type(expr) is ast.Attribute
        and type(expr.value) is ast.Name
        and expr.value.id in ("self", "cls")
        and _class_table(cls.node, expr.attr)
    )
