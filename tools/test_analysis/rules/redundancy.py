"""duplicate-assert and redundant-assertion: checks that add nothing.

duplicate-assert (both profiles): the same assertion back to back, never when evaluating it
may change state (any call but a few pure builtins, awaits, yields: ``next(it)``,
``lock.acquire()``, ``rrset.count()`` filling a cache), never for context-manager guards,
never across the two branches of an if, never across the end of a ``with`` block (its
``__exit__`` ran in between: ``assert lock.is_locked`` inside and after a nested ``with lock``
checks two states), and never when the checks in between count calls (``assert str(dv) ==
"x"; assert dv.calls == 1; assert str(dv) == "x"``: the repeat is the second evaluation a
cache test observes). "Same" is the same code: whitespace inside string literals counts.

redundant-assertion: literals, builtins applied to literals and ``x is x`` always pass; the
strict profile also reports ``x == x`` on other objects, without claiming it always passes
(it runs ``__eq__``/ordering, which may be what is tested).
"""

from __future__ import annotations

import ast
import bisect

from tools.test_analysis.rules.common import (
    Emitter,
    is_pure,
    literal_value,
    same_expr,
    segment,
    source_text,
    walk,
)
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.kinds import EQUALITY_CALLS, SELF_DESCRIBING, TRUE_OPS

__all__ = ["check_duplicates", "check_redundant"]


#: Calls that read without changing anything: an assertion made only of these (and names,
#: attributes, literals, operators) checks the same state when repeated.
_PURE_CALLS = frozenset(
    {
        "len", "str", "repr", "int", "float", "bool", "type", "isinstance", "issubclass",
        "hasattr", "getattr", "abs", "round", "id", "hash", "callable", "ord", "chr",
    }
)  # fmt: skip


_ASSERT_CALLS_OK = ("assert", "fail")


def _reads_only(a: Assertion) -> bool:
    """True when evaluating the assertion cannot change state (no await/yield/walrus, and
    every call is a known reader); the assertion call itself does not count."""
    node = a.node
    for n in walk(node):
        t = type(n)
        if t is ast.Await or t is ast.Yield or t is ast.YieldFrom or t is ast.NamedExpr:
            return False
        if t is ast.Call and n is not node:
            func = n.func  # type: ignore[attr-defined]
            if type(func) is not ast.Name:
                return False  # a method may change its object (rrset.count() fills a cache)
            name = (
                func.attr
                if type(func) is ast.Attribute
                else func.id
                if type(func) is ast.Name
                else ""
            )
            if name not in _PURE_CALLS:
                return False
    if type(node) is ast.Call:
        name = a.name
        return a.kind in ("unittest", "helper") and name.startswith(_ASSERT_CALLS_OK)
    return True


def check_duplicates(em: Emitter, assertions: list[Assertion], facts: TestFacts) -> None:
    seen: dict[str, int] = {}
    # Statements that are not assertions may change the state the repeat checks again
    # (`x = ...; assert_(x)` twice): only back-to-back repeats are reported.
    # an assertion that calls something (`self.assertEqual(wrapper(0), 0)`) acts too
    reads = [_reads_only(a) for a in assertions]  # once per assertion: it walks the node
    assertion_lines = {a.node.lineno for a, r in zip(assertions, reads, strict=True) if r}  # type: ignore[attr-defined]
    actions: list[float] | None = None  # computed for the first repeat only
    nodes: dict[str, ast.AST] = {}
    for a, reads_only in zip(assertions, reads, strict=True):
        node = a.node
        if a.guard or a.kind in ("framework", "local", "raise"):
            continue  # `with pytest.raises(E):` twice guards two different blocks
        if a.name in SELF_DESCRIBING and a.kind != "helper" and len(node.args) <= 1:  # type: ignore[attr-defined]
            continue
        if not reads_only:
            continue  # `assert next(it) == 1` twice reads two items; `lock.acquire()` twice...
        # "Same normalised source": the assertion's text without whitespace. Cheaper than
        # ast.dump (whose recursive closure also leaves a reference cycle per call).
        key = "".join(source_text(em.parsed, node).split())
        if not key:
            continue
        first = seen.get(key)
        line: int = node.lineno  # type: ignore[attr-defined]
        seen[key] = line
        earlier = nodes.get(key)
        nodes[key] = node
        if first is None or earlier is None:
            continue
        if actions is None:
            actions = sorted(
                {line for line in facts.stmt_lines if line not in assertion_lines}
                # a with block's __exit__ runs after its last line
                | {end + 0.5 for end in _with_ends(facts.test.node)}
            )
        if bisect.bisect_right(actions, first) != bisect.bisect_left(actions, line):
            continue  # something happened in between
        if _other_branch(facts, first, line):
            continue  # `if x: assert a` / `else: assert a`: never both run
        if not same_expr(earlier, node):
            continue  # `"div/*"` and `"div /*"`: only whitespace inside a string differs
        if _counts_calls_between(assertions, a, first, line):
            continue  # the repeat is the evaluation a call counter observes
        em.emit_node(
            "duplicate-assert",
            node,
            f"This assertion repeats the one on line {first} and reads the same state, so "
            "the second check adds nothing.",
            confidence=0.9,
            context={
                "assertion": segment(em.parsed, node),
                "first_line": str(first),
                "code": unparse(node),
            },
        )


def _with_ends(node: ast.AST) -> list[int]:
    """Last lines of the test's ``with`` blocks (nested defs included: cheap and harmless)."""
    return [
        n.end_lineno or n.lineno
        for n in walk(node)
        if (type(n) is ast.With or type(n) is ast.AsyncWith) and n is not node
    ]


#: Attributes that count calls or evaluations (mock's, functools' caches, hand-made counters).
_COUNTERS = frozenset(
    {"call_count", "called", "calls", "call_args", "call_args_list", "mock_calls",
     "await_count", "hits", "misses", "currsize", "cache_info", "count", "counter"}
)  # fmt: skip


def _counts(node: ast.AST) -> bool:
    for n in walk(node):
        t = type(n)
        if t is ast.Attribute and (n.attr in _COUNTERS or n.attr.endswith("_count")):  # type: ignore[attr-defined]
            return True
        if t is ast.Name and (n.id in _COUNTERS or n.id.endswith("_count")):  # type: ignore[attr-defined]
            return True
    return False


def _counts_calls_between(
    assertions: list[Assertion], repeat: Assertion, first: int, line: int
) -> bool:
    """Assertions between the two copies, and the repeat itself, of which one reads a call
    counter: the repeat is a second evaluation whose effect (or its absence) is checked."""
    between = [a for a in assertions if first < a.node.lineno < line]  # type: ignore[attr-defined]
    return bool(between) and any(_counts(a.node) for a in [*between, repeat])


def _other_branch(facts: TestFacts, first: int, second: int) -> bool:
    """Lines ``first`` and ``second`` sit in the body and the else of one if statement."""
    for node in ast.walk(facts.test.node):
        if type(node) is ast.If and node.orelse:
            body_end = node.body[-1].end_lineno or node.body[-1].lineno
            else_start = node.orelse[0].lineno
            else_end = node.orelse[-1].end_lineno or else_start
            if node.lineno <= first <= body_end and else_start <= second <= else_end:
                return True
    return False


def check_redundant(em: Emitter, a: Assertion) -> None:
    reason = _fixed_outcome(em, a)
    if reason is None:
        return
    fixed = "itself" not in reason or "always" in reason
    message = (
        f"This assertion {reason}, so it checks nothing."
        if fixed
        else f"This assertion {reason}; it checks nothing unless its __eq__ or ordering is "
        "what is being tested."
    )
    em.emit_node(
        "redundant-assertion",
        a.node,
        message,
        confidence=1.0 if fixed else 0.6,
        context={
            "assertion": segment(em.parsed, a.node),
            "reason": reason,
            "code": unparse(a.node),
        },
    )


def _fixed_outcome(em: Emitter, a: Assertion) -> str | None:
    node = a.node
    if a.kind == "assert":
        test = node.test  # type: ignore[attr-defined]
        if type(test) is ast.Constant and test.value:
            return "asserts a truthy constant and always passes"
        if type(test) is ast.Tuple and test.elts:
            return (
                "asserts a non-empty tuple, which is always true (write `assert x, msg`, "
                "not `assert (x, msg)`)"
            )
        if type(test) is ast.Compare and len(test.ops) == 1:
            return _compare_fixed(em, test.left, test.comparators[0], type(test.ops[0]))
        return None
    call: ast.Call = node  # type: ignore[assignment]
    args = call.args
    name = a.name
    if not args:
        return None
    if name in ("assertTrue", "failUnless", "assert_", "assertFalse", "failIf") and (
        type(args[0]) is ast.Compare and len(args[0].ops) == 1
    ):
        cmp = args[0]
        return _compare_fixed(em, cmp.left, cmp.comparators[0], type(cmp.ops[0]))
    if name in ("assertTrue", "failUnless", "assert_"):
        ok, value = literal_value(args[0])
        return "asserts a truthy literal and always passes" if ok and value else None
    if name in ("assertFalse", "failIf"):
        ok, value = literal_value(args[0])
        return "asserts a falsy literal and always passes" if ok and not value else None
    if name == "assertIsNone":
        ok, value = literal_value(args[0])
        return "asserts that None is None" if ok and value is None else None
    if name == "assertIsNotNone":
        ok, value = literal_value(args[0])
        return "asserts that a literal is not None" if ok and value is not None else None
    if name in ("assertIs", "assertIsNot") and len(args) >= 2:
        return _compare_fixed(em, args[0], args[1], ast.Is)
    if len(args) >= 2 and (name in EQUALITY_CALLS or (a.kind == "helper" and "equal" in name)):
        return _compare_fixed(em, args[0], args[1], ast.Eq)
    return None


#: Builtins whose results compare equal to themselves (ints, strings, tuples of them).
_SELF_EQUAL_BUILTINS = frozenset(
    {"len", "str", "repr", "bool", "type", "id", "isinstance", "issubclass", "hasattr",
     "sorted", "tuple", "list", "frozenset", "set", "dict", "bytes", "ord", "chr", "hash"}
)  # fmt: skip


def _builtin_value(node: ast.expr) -> bool:
    """A literal, or a builtin applied to literals (``len("abc")``). ``list(x) == list(x)``
    is not: iterating ``x`` twice is what such a test checks."""
    ok, _ = literal_value(node)
    if ok:
        return True
    return (
        type(node) is ast.Call
        and type(node.func) is ast.Name
        and node.func.id in _SELF_EQUAL_BUILTINS
        and all(_builtin_value(arg) for arg in node.args)
        and not node.keywords
    )


#: Builtins whose result is a plain int, bool or type whatever their argument.
_PLAIN_RESULT = frozenset({"len", "type", "id", "isinstance", "issubclass", "hasattr", "callable"})


def _builtin_result(node: ast.expr) -> bool:
    """``len(x)``, ``type(x)``: a builtin whose result compares with itself by value."""
    return (
        type(node) is ast.Call
        and type(node.func) is ast.Name
        and node.func.id in _PLAIN_RESULT
        and not node.keywords
    )


def _compare_fixed(em: Emitter, left: ast.expr, right: ast.expr, op: type) -> str | None:
    left_lit, _ = literal_value(left)
    right_lit, _ = literal_value(right)
    if left_lit and right_lit:
        return "compares a literal with a literal, so its outcome is fixed"
    if not (
        issubclass(op, TRUE_OPS)
        and type(left) is type(right)
        and source_text(em.parsed, left) == source_text(em.parsed, right)
        and same_expr(left, right)  # confirms: the texts could differ only in spacing
        and is_pure(left, allow=_SELF_EQUAL_BUILTINS)
    ):
        return None
    if op is ast.Is and type(left) is ast.Name:
        return "checks that a name is itself and always passes"
    if _builtin_value(left):
        return "compares a builtin value with itself and always passes"
    if _builtin_result(left):
        # `len(b) == len(b)`: an int compared with itself; no __eq__ of the test's is run
        return "compares a builtin's result with itself and always passes"
    if em.rc.strict:
        # `x == x` / `x <= x` on a user object runs its __eq__ / ordering: not fixed.
        return "compares an expression with itself"
    return None
