"""Assertion helpers a test calls: functions and methods of the same file that assert.

A call counts as an assertion when its target (a module function, a method of the test's
class, or of a base class defined in the same file) contains an assertion, followed two calls
deep. A factory (a function that returns what it builds, or a fixture that yields it) with
one sanity ``assert`` inside is not an assertion helper: calling it checks nothing about the
test's own outcome. Check-named functions (``check_*``, ``assert_*``, ...) stay helpers.
"""

from __future__ import annotations

import ast

from tools.test_analysis.parsing import ParsedTree, TestClass
from tools.test_analysis.rules.common import RuleConfig, walk

__all__ = ["PYTEST_ASSERTS", "HelperResolver", "decorator_name", "is_factory"]

# pytest functions that assert (``pytest.raises`` & co. fail the test when unmet).
PYTEST_ASSERTS = frozenset({"raises", "warns", "fail", "deprecated_call"})


class HelperResolver:
    """Finds helpers and whether they assert (a mixin of the fact collector)."""

    syntax: ParsedTree
    rc: RuleConfig
    _asserts_memo: dict[int, bool]

    def _is_local_helper(
        self, name: str, receiver: str | None, tf: type, cls: TestClass | None
    ) -> bool:
        if tf is ast.Name:
            func = self.syntax.functions.get(name) or self._module_test(name)
        elif receiver == "self" and cls is not None:
            # `self.test_logs(exc_info=True)`: another test run with a parameter asserts
            func = self.method(cls, name)
        else:
            return False
        return func is not None and not is_factory(func) and self.function_asserts(func, cls)

    def _module_test(self, name: str) -> ast.AST | None:
        """The module-level test called ``name`` (a test reused with another argument:
        ``test_literal_dicts(cbor2_make_converter)``)."""
        if not name.startswith("test"):
            return None
        for test in self.syntax.tests:
            if test.cls is None and test.name == name:
                return test.node
        return None

    def suite_check(self, name: str) -> bool:
        """A check of the suite's support code: imported from the tests package and named
        as one (``check_warnings``, ``assert_rendered``, ``elementary_test``)."""
        if name not in self.syntax.suite_names:
            return False
        lowered = name.lower()
        return lowered.startswith(_CHECK_WORDS) or "test" in lowered

    def method(self, cls: TestClass, name: str) -> ast.AST | None:
        """``name`` defined by ``cls`` or, through its bases, by a class of this file."""
        found = cls.methods.get(name)
        if found is not None:
            return found
        return self._inherited(cls.node, name, 0)

    def _inherited(self, node: ast.ClassDef, name: str, depth: int) -> ast.AST | None:
        if depth > 8:
            return None
        for base in node.bases:
            base_node = self.syntax.all_classes.get(_base_id(base))
            if base_node is None or base_node is node:
                continue
            for stmt in base_node.body:
                if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name == name:  # type: ignore[attr-defined]
                    return stmt
            found = self._inherited(base_node, name, depth + 1)
            if found is not None:
                return found
        return None

    def _defined_here(self, name: str, cls: TestClass | None) -> bool:
        return cls is not None and self.method(cls, name) is not None

    def teardown_asserts(self, cls: TestClass) -> bool:
        """Whether a tearDown of ``cls`` (or of a base of this file) asserts: then every test
        of the class is checked there (tornado's ``assert self.finished`` pattern)."""
        for name in ("tearDown", "asyncTearDown", "teardown_method"):
            func = self.method(cls, name)
            if func is not None and self.function_asserts(func, cls):
                return True
        return False

    def function_asserts(self, func: ast.AST, cls: TestClass | None, depth: int = 0) -> bool:
        """Whether ``func`` (a helper of this file) contains an assertion (memoised)."""
        key = id(func)
        memo = self._asserts_memo
        if key in memo:
            return memo[key]
        memo[key] = False  # recursion guard
        result = False
        for node in ast.walk(func):
            t = type(node)
            if t is ast.Assert:
                result = True
            elif t is ast.Raise:
                result = "AssertionError" in ast.dump(node.exc) if node.exc else False  # type: ignore[attr-defined]
            elif t is ast.Call:
                result = self._call_asserts(node, cls, depth)  # type: ignore[arg-type]
            if result:
                break
        memo[key] = result
        return result

    def _call_asserts(self, node: ast.Call, cls: TestClass | None, depth: int) -> bool:
        func = node.func
        if type(func) is ast.Attribute:
            name = func.attr
            value = func.value
            receiver = value.id if type(value) is ast.Name else None
        elif type(func) is ast.Name:
            name, receiver = func.id, None
        else:
            return False
        if receiver == "self" and name.startswith(("assert", "fail")):
            return True
        if receiver == "pytest" and name in PYTEST_ASSERTS:
            return True
        if self.rc.is_helper(name):
            return True
        if depth >= 2:
            return False
        target = None
        if receiver is None:
            target = self.syntax.functions.get(name)
        elif receiver == "self" and cls is not None:
            target = self.method(cls, name)  # type: ignore[assignment]
        return target is not None and self.function_asserts(target, cls, depth + 1)


def _base_id(expr: ast.expr) -> str:
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return ""


def decorator_name(dec: ast.expr) -> str:
    target = dec.func if type(dec) is ast.Call else dec
    if type(target) is ast.Attribute:
        return target.attr
    if type(target) is ast.Name:
        return target.id
    return ""


_CHECK_WORDS = ("assert", "check", "verify", "expect", "ensure", "validate", "_assert", "_check")


def is_factory(func: ast.AST) -> bool:
    """A function that builds and returns something (``make_app()`` with one sanity
    ``assert`` inside) is a factory, not an assertion helper: calling it checks nothing
    about the test's own outcome. Check-named functions stay helpers whatever they return."""
    name: str = getattr(func, "name", "")
    if name.lower().lstrip("_").startswith(_CHECK_WORDS):
        return False
    fixture = any(decorator_name(d) == "fixture" for d in getattr(func, "decorator_list", ()))
    for node in walk(func):
        if type(node) is ast.Return and node.value is not None:
            if not (type(node.value) is ast.Constant and node.value.value is None):
                return True
        elif fixture and type(node) is ast.Yield and node.value is not None:
            return True  # a generator fixture yields what it built (a coroutine's yield waits)
    return False
