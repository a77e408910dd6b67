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
"""

from __future__ import annotations

import ast
import re

from tools.test_analysis.rules.common import Emitter, dotted_name, segment, walk
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.helpers import decorator_name
from tools.test_analysis.rules.messages import message_of

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
_ENVIRONMENT = (
    "sys", "platform", "os", "py", "is_", "has_", "version", "pytest", "django", "supports_",
    "can_", "skip", "windows", "win", "linux", "darwin", "mac",
)  # fmt: skip
_MUTATORS = frozenset({"append", "extend", "add", "update", "pop", "insert", "remove", "clear"})
_BODY_LIMIT = 8  # statements of the loop body shown in an example


_FIXED_CALLS = frozenset(
    {"range", "enumerate", "zip", "product", "permutations", "combinations", "sorted",
     "reversed", "list", "tuple", "set", "dict", "chain", "repeat", "items", "keys", "values",
     "combinations_with_replacement"}
)  # fmt: skip


def _literal_table(expr: ast.expr, facts: TestFacts, em: Emitter, depth: int = 0) -> bool:
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
        return bool(parts) and all(_literal_table(p, facts, em, depth + 1) for p in parts)
    if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        return all(
            _literal_table(g.iter, facts, em, depth + 1)
            for g in expr.generators  # type: ignore[attr-defined]
        )
    if t is ast.Starred:
        return _literal_table(expr.value, facts, em, depth + 1)  # type: ignore[attr-defined]
    if t is ast.BinOp:
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        return _literal_table(left, facts, em, depth + 1) and _literal_table(
            right, facts, em, depth + 1
        )
    if t is ast.Name:
        bound = facts.bindings.get(expr.id) or facts.nested_bindings.get(expr.id)  # type: ignore[attr-defined]
        if bound is not None:
            return _literal_table(bound, facts, em, depth + 1)
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


def _independent(loop: ast.For | ast.AsyncFor) -> bool:
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


def _about_parameters_or_environment(
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
        for name in _names(n.target)
    }
    roots = {
        n.id
        for n in ast.walk(test_expr)
        if type(n) is ast.Name and id(n) not in called and n.id not in bound
    }
    local = roots & (facts.assigned | params)
    return bool(local) and local <= params


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if type(n) is ast.Name}


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef, facts: TestFacts) -> set[str]:
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


#: Calls that generate a sweep of values rather than list cases.
_GENERATORS = frozenset(
    {"range", "permutations", "product", "combinations", "combinations_with_replacement",
     "repeat", "count", "cycle"}
)  # fmt: skip
_WRAPPERS = frozenset({"enumerate", "list", "tuple", "sorted", "reversed", "set", "zip"})


def _generated(expr: ast.expr, facts: TestFacts, depth: int = 0) -> bool:
    """``range(1000)``, ``permutations("abcd")``: values generated, not rows written down."""
    if depth > 4:
        return False
    if type(expr) is ast.Name:
        bound = facts.bindings.get(expr.id)
        return bound is not None and _generated(bound, facts, depth + 1)
    if type(expr) is not ast.Call:
        return False
    name = dotted_name(expr.func).rsplit(".", 1)[-1]
    if name in _GENERATORS:
        return True
    return name in _WRAPPERS and bool(expr.args) and _generated(expr.args[0], facts, depth + 1)


def _suite_helper(expr: ast.expr, facts: TestFacts, em: Emitter) -> bool:
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


def _short_zip(
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
            a
            for a in it.args
            if not _literal_table(a, facts, em) and not _suite_helper(a, facts, em)
        ]
        if not computed or not any(_inside(a.node, inner) for a in facts.assertions):
            continue
        # a length check in the same pass of the outer loop (its names are per pass)
        checked = {
            ast.dump(x)
            for a in facts.assertions
            if _inside(a.node, loop) and not _inside(a.node, inner)
            for x in ast.walk(a.node)
        }
        if any(ast.dump(a) in checked for a in it.args):
            continue
        return inner
    return None


def _names_the_case(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
    """Every assertion in the loop passes a message built from the loop's variables
    (``assertEqual(f(x), y, msg=x)``): the failure names its case."""
    names = _names(loop.target)
    inside = [a for a in facts.assertions if _inside(a.node, loop)]
    if not inside:
        return False
    for a in inside:
        message = message_of(a)
        if message is None or not (_names(message) & names):
            return False
    return True


def _settings_only(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
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
    names = _names(loop.target)
    as_keyword: set[int] = set()
    used: list[ast.Name] = []
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if type(n) is ast.keyword and type(n.value) is ast.Name:
                as_keyword.add(id(n.value))
            elif type(n) is ast.Name and n.id in names and type(n.ctx) is ast.Load:
                used.append(n)
    return bool(used) and all(id(n) in as_keyword for n in used)


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
    params = _parameters(test.node, facts) if not strict else set()
    arguments = {a.arg for a in test.node.args.args + test.node.args.kwonlyargs} - {"self"}
    for ctrl in facts.control_hits.values():
        t = type(ctrl)
        construct = _CONSTRUCT.get(t, "branch")
        inside = [a for a in facts.assertions if _inside(a.node, ctrl)]
        if inside and all(_for_the_type_checker(em, a.node) for a in inside):
            continue  # `assert x  # for mypy` narrows a type; it checks nothing
        if not strict and t is ast.If and id(ctrl) in facts.nested_controls:
            continue  # default: a stub's branch decides what the double does (fail once)
        inner = _first_assertion_in(facts, ctrl)
        assertion = segment(em.parsed, inner) if inner is not None else "..."
        confidence = 0.9
        if t is ast.For or t is ast.AsyncFor:
            loop: ast.For = ctrl  # type: ignore[assignment]
            literal = _literal_table(loop.iter, facts, em) or (
                # default: a fixture's list, iterated as given (not computed by the test)
                not strict and type(loop.iter) is ast.Name and loop.iter.id in arguments
            )
            # what the suite's own helper yields (backends, parsers) or a collection the test
            # checks for emptiness first cannot pass by running zero times
            helper = not literal and _suite_helper(loop.iter, facts, em)
            guarded = not literal and not helper and _size_checked(loop, facts, em)
            short = None if strict else _short_zip(loop, facts, em)
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
            if not strict and literal and _generated(loop.iter, facts):
                continue  # default: range(1000), permutations(...): a sweep, not cases
            if (literal and _independent(loop)) or helper or guarded:
                # default: a test that is only a loop over a table written inline is a table
                # of cases: parametrize / subTest names each case and runs all of them, which
                # the failing values alone do not (a short loop inside a larger scenario, or
                # over a module's list, stays a detail of that scenario)
                cases = (
                    _inline_table(loop.iter, facts) or _written_table(loop.iter, facts, em)
                ) and _whole_test(loop, test.node, facts)
                if not strict and not cases:
                    # default (the judging line): a short loop at the tail of a larger
                    # scenario, over a fixed list, is a detail of that scenario (pytest
                    # shows the failing values, unittest's assertIn/assertEqual the row)
                    continue
                if not strict and not _target_used(loop):
                    continue  # `for _ in range(5)`: a repetition, not a table of cases
                if not strict and not cases and _compares_with_target(loop, facts):
                    # assertEqual(actual, expected) against the row's own expected value, in
                    # a loop that is a detail of a larger test: the failure prints the case.
                    # A test that is only that loop is a table of cases (issue 28: kept,
                    # parametrize / subTest runs every case and names the failing one)
                    continue
                if not strict and (_names_the_case(loop, facts) or _settings_only(loop, facts)):
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
                _about_parameters_or_environment(branch.test, params, facts)
                or not _uses_locals(branch.test, facts)
                or _explicit_failure(branch)
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


def _inline_table(expr: ast.expr, facts: TestFacts) -> bool:
    """The loop walks a table written in the test itself (not a module's or fixture's)."""
    if type(expr) is ast.Name:
        return _is_display(facts.bindings.get(expr.id))
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and not expr.args:
        if type(expr.func.value) is ast.Name and expr.func.attr in ("items", "keys", "values"):
            return _is_display(facts.bindings.get(expr.func.value.id))
    return _is_display(expr)


#: A table test may set up its subject in this many statements before the loop.
_MAX_SETUP_STATEMENTS = 3


def _whole_test(loop: ast.For | ast.AsyncFor, func: ast.AST, facts: TestFacts) -> bool:
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
        and all(_inside(a.node, loop) for a in facts.assertions)
        and _feeds_rows(loop)
    )


def _feeds_rows(loop: ast.For | ast.AsyncFor) -> bool:
    """A call in the loop body takes a loop variable as an argument: each row is an input."""
    names = _names(loop.target)
    for stmt in loop.body:
        for n in ast.walk(stmt):
            if type(n) is ast.Call:
                args = [*n.args, *(k.value for k in n.keywords)]
                if any(type(x) is ast.Name and x.id in names for a in args for x in ast.walk(a)):
                    return True
    return False


def _written_table(expr: ast.expr, facts: TestFacts, em: Emitter) -> bool:
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


def _explicit_failure(branch: ast.If) -> bool:
    """``if missing: raise AssertionError(...)`` / ``self.fail(...)``: the if is the check."""
    last = branch.body[-1] if branch.body else None
    if type(last) is ast.Raise and last.exc is not None:
        target = last.exc.func if type(last.exc) is ast.Call else last.exc
        return dotted_name(target).rsplit(".", 1)[-1] == "AssertionError"
    if type(last) is ast.Expr and type(last.value) is ast.Call:
        return dotted_name(last.value.func).rsplit(".", 1)[-1] == "fail"
    return False


def _uses_locals(test_expr: ast.expr, facts: TestFacts) -> bool:
    """The condition reads a name the test itself assigns (not a module flag or fixture)."""
    return any(type(n) is ast.Name and n.id in facts.assigned for n in ast.walk(test_expr))


def _target_used(loop: ast.For | ast.AsyncFor) -> bool:
    names = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
    return any(type(n) is ast.Name and n.id in names for s in loop.body for n in ast.walk(s))


def _compares_with_target(loop: ast.For | ast.AsyncFor, facts: TestFacts) -> bool:
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
    inside = [a for a in facts.assertions if _inside(a.node, loop) and a.kind == "unittest"]
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


#: Calls that walk their first argument as it is: checking the argument checks them.
_SAME_ITEMS = frozenset({"list", "tuple", "sorted", "reversed", "enumerate", "iter", "set"})


def _size_checked(
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
            if _size_checked(loop, facts, em, iterable.args[0]):
                return True
        elif name in ("items", "keys", "values") and type(func) is ast.Attribute:
            if not iterable.args and _size_checked(loop, facts, em, func.value):
                return True
        elif name == "zip" and len(iterable.args) >= 2:
            computed = [
                a
                for a in iterable.args
                if not _literal_table(a, facts, em) and not _suite_helper(a, facts, em)
            ]
            strict = any(
                k.arg == "strict" and type(k.value) is ast.Constant and k.value.value is True
                for k in iterable.keywords
            )
            if strict and len(computed) < len(iterable.args):
                return True  # zip(rows, EXPECTED, strict=True): the lengths must agree
            if computed and all(_size_checked(loop, facts, em, a) for a in computed):
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


def _inside(node: ast.AST, ctrl: ast.AST) -> bool:
    line = getattr(node, "lineno", 0)
    return ctrl.lineno <= line <= (ctrl.end_lineno or ctrl.lineno)  # type: ignore[attr-defined]


def _first_assertion_in(facts: TestFacts, ctrl: ast.AST) -> ast.AST | None:
    start, end = ctrl.lineno, ctrl.end_lineno or ctrl.lineno  # type: ignore[attr-defined]
    inside = [a.node for a in facts.assertions if start <= a.node.lineno <= end]  # type: ignore[attr-defined]
    return min(inside, key=lambda n: (n.lineno, n.col_offset), default=None)  # type: ignore[attr-defined]
