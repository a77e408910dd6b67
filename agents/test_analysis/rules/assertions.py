"""Assertion rules: roulette, duplicate, redundant, magic number, sensitive equality,
suboptimal assert, unknown test. Each reads :class:`TestFacts`; none walks the test again."""

from __future__ import annotations

import ast
import bisect
from typing import Any

from agents.test_analysis.rules.common import (
    Emitter,
    is_number,
    is_pure,
    literal_value,
    same_expr,
    segment,
    source_text,
)
from agents.test_analysis.rules.facts import Assertion, TestFacts
from agents.test_analysis.rules.suboptimal import check_suboptimal

# Positional index of unittest's ``msg`` argument per assertion method.
_MSG_INDEX: dict[str, int] = {}
for _names, _index in (
    ("assertTrue assertFalse assertIsNone assertIsNotNone failUnless failIf assert_", 1),
    (
        "assertEqual assertEquals assertNotEqual assertNotEquals assertIs assertIsNot assertIn "
        "assertNotIn assertIsInstance assertNotIsInstance assertGreater assertGreaterEqual "
        "assertLess assertLessEqual assertListEqual assertTupleEqual assertSetEqual "
        "assertDictEqual assertMultiLineEqual assertSequenceEqual assertCountEqual assertRegex "
        "assertNotRegex assertRegexpMatches assertNotRegexpMatches failUnlessEqual failIfEqual "
        "assertDictContainsSubset assertItemsEqual",
        2,
    ),
    (
        "assertAlmostEqual assertNotAlmostEqual assertAlmostEquals assertNotAlmostEquals "
        "failUnlessAlmostEqual failIfAlmostEqual",
        3,
    ),
    ("fail", 0),
):
    for _name in _names.split():
        _MSG_INDEX[_name] = _index

#: Assertions whose failure already names what failed (raised/warned/logged/called): they do
#: not make a test a roulette, and as context managers they are not duplicates either.
_SELF_DESCRIBING = frozenset(
    {
        "assertRaises",
        "assertRaisesRegex",
        "assertRaisesRegexp",
        "assertWarns",
        "assertWarnsRegex",
        "assertLogs",
        "assertNoLogs",
        "raises",
        "warns",
        "deprecated_call",
        "fnmatch_lines",
        "re_match_lines",
        "no_fnmatch_line",
        "no_re_match_line",
        "assert_called",
        "assert_called_once",
        "assert_called_with",
        "assert_called_once_with",
        "assert_any_call",
        "assert_has_calls",
        "assert_not_called",
        "assert_awaited",
        "assert_awaited_once",
        "assert_awaited_with",
        "assert_awaited_once_with",
        "assert_any_await",
        "assert_has_awaits",
        "assert_not_awaited",
    }
)
_MSG_KEYWORDS = frozenset({"msg", "err_msg", "message", "reason", "fail_msg"})
_EQUALITY_CALLS = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertIs",
        "assertAlmostEqual",
        "assertAlmostEquals",
        "assertCountEqual",
        "assertListEqual",
        "assertTupleEqual",
        "assertSetEqual",
        "assertDictEqual",
        "assertMultiLineEqual",
        "assertSequenceEqual",
        "assertItemsEqual",
        "assertGreaterEqual",
        "assertLessEqual",
        "failUnlessEqual",
    }
)
_TRUE_OPS = (ast.Eq, ast.Is, ast.LtE, ast.GtE)


def has_message(a: Assertion) -> bool:
    """Whether the assertion carries a failure message."""
    node = a.node
    if a.kind == "assert":
        return node.msg is not None  # type: ignore[attr-defined]
    if a.kind == "raise":
        return type(node.exc) is ast.Call and bool(node.exc.args)  # type: ignore[attr-defined]
    call: ast.Call = node  # type: ignore[assignment]
    if any(k.arg in _MSG_KEYWORDS for k in call.keywords):
        return True
    if a.kind == "unittest" or (a.kind == "pytest" and a.name == "fail"):
        index = _MSG_INDEX.get(a.name, 0 if a.kind == "pytest" else None)
        return index is not None and len(call.args) > index
    return False


def counts_for_roulette(a: Assertion) -> bool:
    """Value checks count; self-describing checks and inferred local helpers do not."""
    return a.kind != "local" and a.name not in _SELF_DESCRIBING


def _ordered(facts: TestFacts) -> list[Assertion]:
    return sorted(
        facts.assertions,
        key=lambda a: (a.node.lineno, a.node.col_offset),  # type: ignore[attr-defined]
    )


def check_assertion_rules(em: Emitter, facts: TestFacts) -> None:
    """All per-assertion rules of one test."""
    if not facts.assertions:
        return
    assertions = _ordered(facts)
    test = facts.test
    if em.on("assertion-roulette") and len(assertions) >= 2:
        counted = [a for a in assertions if counts_for_roulette(a)]
        if len(counted) >= 2:
            bare = [a for a in counted if not has_message(a)]
            if bare:
                first = bare[0].node
                # pytest rewrites bare asserts to show the failing expression, so a roulette
                # of plain asserts is milder than one of unittest/helper calls.
                confidence = 0.7 if all(a.kind == "assert" for a in bare) else 0.9
                em.emit(
                    "assertion-roulette",
                    test.line,
                    test.end_line,
                    f"{test.name} has {len(counted)} assertions and {len(bare)} of them carry "
                    f"no message, so a failure does not say which check broke (first at line "
                    f"{first.lineno}).",  # type: ignore[attr-defined]
                    confidence=confidence,
                    context={
                        "test": test.name,
                        "count": str(len(counted)),
                        "unlabelled": str(len(bare)),
                        "first": segment(em.parsed, first),
                    },
                )
    if em.on("duplicate-assert") and len(assertions) >= 2:
        _duplicates(em, assertions, facts)
    redundant = em.on("redundant-assertion")
    magic = em.on("magic-number")
    sensitive = em.on("sensitive-equality") and not formatting_is_subject(em, test.name)
    suboptimal = em.on("suboptimal-assert")
    for a in assertions:
        if a.kind == "local" or a.kind == "raise":
            continue
        if redundant and not a.nested:  # nested: likely a test of an assertion helper
            _redundant(em, a)
        if magic and a.kind != "pytest":
            _magic(em, a)
        if sensitive:
            _sensitive(em, a)
        if suboptimal and (a.kind == "unittest" or a.kind == "assert"):
            check_suboptimal(em, a)


def check_unknown_test(em: Emitter, facts: TestFacts) -> None:
    """unknown-test: the test contains no assertion (direct, helper or inferred)."""
    if facts.assertions:
        return
    test = facts.test
    confidence = 0.7 if facts.helperish_calls else 0.9
    em.emit(
        "unknown-test",
        test.line,
        test.end_line,
        f"{test.name} contains no assertion, so it passes whenever nothing raises.",
        confidence=confidence,
        context={"test": test.name},
    )


# --------------------------------------------------------------------------- rules


def _duplicates(em: Emitter, assertions: list[Assertion], facts: TestFacts) -> None:
    seen: dict[str, int] = {}
    # Statements that are not assertions may change the state the repeat checks again
    # (`x = ...; assert_(x)` twice): only back-to-back repeats are reported.
    assertion_lines = {a.node.lineno for a in assertions}  # type: ignore[attr-defined]
    actions = sorted({line for line in facts.stmt_lines if line not in assertion_lines})
    for a in assertions:
        node = a.node
        if a.name in _SELF_DESCRIBING and a.kind != "helper" and len(node.args) <= 1:  # type: ignore[attr-defined]
            continue  # `with pytest.raises(E):` twice guards two different blocks
        # "Same normalised source": the assertion's text without whitespace. Cheaper than
        # ast.dump (whose recursive closure also leaves a reference cycle per call).
        key = "".join(source_text(em.parsed, node).split())
        if not key:
            continue
        first = seen.get(key)
        line: int = node.lineno  # type: ignore[attr-defined]
        seen[key] = line
        if first is None:
            continue
        if bisect.bisect_right(actions, first) != bisect.bisect_left(actions, line):
            continue  # something happened in between
        em.emit_node(
            "duplicate-assert",
            node,
            f"This assertion repeats the one on line {first}; the second check adds nothing "
            "unless the state changed in between.",
            confidence=0.9,
            context={"assertion": segment(em.parsed, node), "first_line": str(first)},
        )


def _redundant(em: Emitter, a: Assertion) -> None:
    reason = _fixed_outcome(em, a)
    if reason is not None:
        em.emit_node(
            "redundant-assertion",
            a.node,
            f"This assertion {reason}, so it checks nothing.",
            # x == x may be a deliberate check of a custom __eq__
            confidence=0.7 if "same expression" in reason else 1.0,
            context={"assertion": segment(em.parsed, a.node), "reason": reason},
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
    if len(args) >= 2 and (name in _EQUALITY_CALLS or (a.kind == "helper" and "equal" in name)):
        return _compare_fixed(em, args[0], args[1], ast.Eq)
    return None


def _compare_fixed(em: Emitter, left: ast.expr, right: ast.expr, op: type) -> str | None:
    left_lit, _ = literal_value(left)
    right_lit, _ = literal_value(right)
    if left_lit and right_lit:
        return "compares a literal with a literal, so its outcome is fixed"
    if (
        issubclass(op, _TRUE_OPS)
        and type(left) is type(right)
        and source_text(em.parsed, left) == source_text(em.parsed, right)
        and same_expr(left, right)  # confirms: the texts could differ only in spacing
        and is_pure(left)
    ):
        return "compares the same expression with itself and always passes"
    return None


def _assertion_args(a: Assertion, ignored: frozenset[str]) -> list[ast.expr]:
    node = a.node
    if a.kind == "assert":
        return [node.test]  # type: ignore[attr-defined]
    call: ast.Call = node  # type: ignore[assignment]
    # Only the compared values: later positionals are tolerances (places, rtol, decimal).
    out = list(call.args[:2])
    out.extend(k.value for k in call.keywords if k.arg is not None and k.arg not in ignored)
    return out


def _magic(em: Emitter, a: Assertion) -> None:
    allowed = em.rc.allowed_numbers
    found: list[str] = []
    budget = 64  # long literal tables are data, not assertions; stop looking
    stack: list[ast.AST] = list(_assertion_args(a, em.rc.ignored_keywords))
    while stack and budget:
        budget -= 1
        n = stack.pop()
        t = type(n)
        if t is ast.Constant:
            v = n.value  # type: ignore[attr-defined]
            if is_number(v) and v not in allowed:
                found.append(repr(v))
        elif t is ast.UnaryOp:
            operand = n.operand  # type: ignore[attr-defined]
            negative = type(n.op) is ast.USub  # type: ignore[attr-defined]
            if negative and type(operand) is ast.Constant and is_number(operand.value):
                value: Any = operand.value
                if -value not in allowed:
                    found.append(repr(-value))
            else:
                stack.append(operand)
        elif t is ast.Compare:
            stack.append(n.left)  # type: ignore[attr-defined]
            stack.extend(n.comparators)  # type: ignore[attr-defined]
        elif t is ast.BinOp:
            stack.append(n.left)  # type: ignore[attr-defined]
            if type(n.op) is not ast.Pow:  # type: ignore[attr-defined]
                stack.append(n.right)  # type: ignore[attr-defined]  # 2**31: the 31 is no mystery
        elif t is ast.BoolOp:
            stack.extend(n.values)  # type: ignore[attr-defined]
        elif t is ast.Tuple or t is ast.List or t is ast.Set:
            stack.extend(n.elts)  # type: ignore[attr-defined]
    if not found:
        return
    found = list(dict.fromkeys(found))
    shown = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
    text = segment(em.parsed, a.node)
    em.emit_node(
        "magic-number",
        a.node,
        f"The assertion uses the unexplained number{'s' if len(found) > 1 else ''} {shown}.",
        confidence=0.8,
        context={
            "numbers": shown,
            "number": found[0],
            "assertion": text,
            "constant": "VALUE",
            "fixed": text.replace(found[0], "EXPECTED_VALUE", 1),
        },
    )


def _stringified(node: ast.expr) -> str | None:
    if type(node) is not ast.Call:
        return None
    func = node.func
    if type(func) is ast.Name and func.id in ("str", "repr") and len(node.args) == 1:
        return func.id
    if type(func) is ast.Attribute and func.attr in ("__str__", "__repr__") and not node.args:
        return func.attr
    return None


_FORMATTING_WORDS = ("repr", "print", "format", "display", "render", "pretty", "__str__")


def formatting_is_subject(em: Emitter, test_name: str) -> bool:
    """True when the test (or its file) is about text output, where str()/repr() is the
    behaviour under test rather than a shortcut."""
    file_name = em.parsed.path.rsplit("/", 1)[-1]
    for text in (test_name.lower(), file_name.lower()):
        if any(w in text for w in _FORMATTING_WORDS) or "str" in text.split("_"):
            return True
    return False


def _sensitive(em: Emitter, a: Assertion) -> None:
    operands: list[ast.expr] = []
    if a.kind == "assert":
        test = a.node.test  # type: ignore[attr-defined]
        if type(test) is ast.Compare and any(type(op) in (ast.Eq, ast.NotEq) for op in test.ops):
            operands = [test.left, *test.comparators]
    elif (
        a.name in _EQUALITY_CALLS
        or a.name in ("assertNotEqual", "assertNotEquals")
        or (a.kind == "helper" and "equal" in a.name)
    ):
        operands = list(a.node.args[:2])  # type: ignore[attr-defined]
    for operand in operands:
        func = _stringified(operand)
        if func is not None:
            subject = operand.args[0] if operand.args else operand.func.value  # type: ignore[attr-defined]
            em.emit_node(
                "sensitive-equality",
                a.node,
                f"The assertion compares {func}() output, which changes with any formatting "
                "change.",
                confidence=0.8,
                context={
                    "assertion": segment(em.parsed, a.node),
                    "func": func,
                    "subject": segment(em.parsed, subject, 40),
                },
            )
            return
