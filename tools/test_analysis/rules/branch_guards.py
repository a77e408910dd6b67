"""conditional-logic: which branches of a test are guards rather than hidden checks.

A branch on the test's parameters (and the names it unpacks from them) or on the
environment (``if sys.platform == ...``, ``if has_numpy:``), a condition that reads no name
the test assigns, and an ``if`` whose body fails explicitly (``raise AssertionError`` /
``self.fail``) are not reported by the default profile.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import dotted_name, names_in
from tools.test_analysis.rules.facts import TestFacts

__all__ = ["about_parameters_or_environment", "explicit_failure", "parameter_names", "uses_locals"]


_ENVIRONMENT = (
    "sys", "platform", "os", "py", "is_", "has_", "version", "pytest", "django", "supports_",
    "can_", "skip", "windows", "win", "linux", "darwin", "mac",
)  # fmt: skip


def about_parameters_or_environment(
    test_expr: ast.expr, params: set[str], facts: TestFacts
) -> bool:
    names = [
        n.id if type(n) is ast.Name else n.attr  # type: ignore[attr-defined]
        for n in ast.walk(test_expr)
        if type(n) in (ast.Name, ast.Attribute)
    ]
    if not names:
        return True  # `if True:` / constants
    lowered = [name.lower() for name in names]
    if any(n.startswith(_ENVIRONMENT) or n.endswith("_available") for n in lowered):
        return True  # `if has_pympler:`, `if sys.platform == ...`: the environment decides
    # the test's own names in the condition (not the functions it calls, not a
    # comprehension's variables, not module names) must all be parameters
    called = {id(n.func) for n in ast.walk(test_expr) if type(n) is ast.Call}
    bound = {
        name
        for n in ast.walk(test_expr)
        if type(n) is ast.comprehension
        for name in names_in(n.target)
    }
    roots = {
        n.id
        for n in ast.walk(test_expr)
        if type(n) is ast.Name and id(n) not in called and n.id not in bound
    }
    local = roots & (facts.assigned | params)
    return bool(local) and local <= params


def parameter_names(func: ast.FunctionDef | ast.AsyncFunctionDef, facts: TestFacts) -> set[str]:
    """The test's parameters and the names it unpacks from them without computing anything
    (``structured, raw = case``, ``kind = case.kind``): a branch on those is a branch on the
    parameters."""
    params = {a.arg for a in func.args.args + func.args.kwonlyargs} - {"self"}
    for _ in range(2):
        for name, value in facts.bindings.items():
            if name in params:
                continue
            parts = list(ast.walk(value))
            if (
                all(type(n) in _PLAIN for n in parts)
                and {n.id for n in parts if type(n) is ast.Name} <= params
            ):
                params.add(name)
    return params


#: Nodes of an expression that only reads what it is given (no call, no operator).
_PLAIN = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load, ast.Tuple})


def explicit_failure(branch: ast.If) -> bool:
    """``if missing: raise AssertionError(...)`` / ``self.fail(...)``: the if is the check."""
    last = branch.body[-1] if branch.body else None
    if type(last) is ast.Raise and last.exc is not None:
        target = last.exc.func if type(last.exc) is ast.Call else last.exc
        return dotted_name(target).rsplit(".", 1)[-1] == "AssertionError"
    if type(last) is ast.Expr and type(last.value) is ast.Call:
        return dotted_name(last.value.func).rsplit(".", 1)[-1] == "fail"
    return False


def uses_locals(test_expr: ast.expr, facts: TestFacts) -> bool:
    """The condition reads a name the test itself assigns (not a module flag or fixture)."""
    return any(type(n) is ast.Name and n.id in facts.assigned for n in ast.walk(test_expr))
