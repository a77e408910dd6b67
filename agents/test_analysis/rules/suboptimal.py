"""suboptimal-assert: an assertion a more specific form expresses better.

unittest: ``assertTrue(a == b)`` -> ``assertEqual(a, b)`` (and the other comparison operators,
``isinstance``, ``not``), ``assertEqual(x, None/True/False)`` -> ``assertIsNone(x)`` /
``assertTrue(x)``, and deprecated aliases (``assertEquals``, ``failUnless``, ...).
pytest: ``assert x == None`` / ``== True`` / ``== False`` -> ``is`` comparisons.
"""

from __future__ import annotations

import ast

from agents.test_analysis.rules.common import Emitter, segment
from agents.test_analysis.rules.facts import Assertion

_TRUE_MAP: dict[type, str] = {
    ast.Eq: "assertEqual",
    ast.NotEq: "assertNotEqual",
    ast.Is: "assertIs",
    ast.IsNot: "assertIsNot",
    ast.In: "assertIn",
    ast.NotIn: "assertNotIn",
    ast.Lt: "assertLess",
    ast.LtE: "assertLessEqual",
    ast.Gt: "assertGreater",
    ast.GtE: "assertGreaterEqual",
}
_FALSE_MAP: dict[type, str] = {
    ast.Eq: "assertNotEqual",
    ast.NotEq: "assertEqual",
    ast.Is: "assertIsNot",
    ast.IsNot: "assertIs",
    ast.In: "assertNotIn",
    ast.NotIn: "assertIn",
    ast.Lt: "assertGreaterEqual",
    ast.LtE: "assertGreater",
    ast.Gt: "assertLessEqual",
    ast.GtE: "assertLess",
}
_DEPRECATED = {
    "assertEquals": "assertEqual",
    "assertNotEquals": "assertNotEqual",
    "assertAlmostEquals": "assertAlmostEqual",
    "assertNotAlmostEquals": "assertNotAlmostEqual",
    "assert_": "assertTrue",
    "failUnless": "assertTrue",
    "failIf": "assertFalse",
    "failUnlessEqual": "assertEqual",
    "failIfEqual": "assertNotEqual",
    "failUnlessAlmostEqual": "assertAlmostEqual",
    "failIfAlmostEqual": "assertNotAlmostEqual",
    "failUnlessRaises": "assertRaises",
    "assertRegexpMatches": "assertRegex",
    "assertNotRegexpMatches": "assertNotRegex",
    "assertRaisesRegexp": "assertRaisesRegex",
    "assertItemsEqual": "assertCountEqual",
}


def _src(em: Emitter, node: ast.AST) -> str:
    return segment(em.parsed, node, 60)


def _emit(em: Emitter, a: Assertion, better: str, fixed: str, why: str) -> None:
    em.emit_node(
        "suboptimal-assert",
        a.node,
        f"Use {better} here: {why}.",
        confidence=0.9,
        context={"assertion": segment(em.parsed, a.node), "fixed": fixed, "better": better},
    )


def check_suboptimal(em: Emitter, a: Assertion) -> None:
    """Report one suboptimal-assert finding for ``a`` if a better form exists."""
    if a.kind == "assert":
        _pytest_style(em, a)
        return
    call: ast.Call = a.node  # type: ignore[assignment]
    name = a.name
    args = call.args
    if name in _DEPRECATED:
        better = _DEPRECATED[name]
        rest = ", ".join(_src(em, arg) for arg in args)
        _emit(em, a, better, f"self.{better}({rest})", f"{name} is a deprecated alias")
        return
    if not args:
        return
    first = args[0]
    if name in ("assertTrue", "assertFalse"):
        positive = name == "assertTrue"
        if type(first) is ast.Compare and len(first.ops) == 1:
            op = type(first.ops[0])
            left, right = first.left, first.comparators[0]
            if type(right) is ast.Constant and right.value is None and op in (ast.Is, ast.IsNot):
                better = "assertIsNone" if (op is ast.Is) == positive else "assertIsNotNone"
                _emit(
                    em,
                    a,
                    better,
                    f"self.{better}({_src(em, left)})",
                    "it states the intent and reports the value",
                )
                return
            better = (_TRUE_MAP if positive else _FALSE_MAP)[op]
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, left)}, {_src(em, right)})",
                f"{name}(a {_op_text(op)} b) only reports 'False is not true'",
            )
        elif (
            type(first) is ast.Call
            and type(first.func) is ast.Name
            and first.func.id == "isinstance"
            and len(first.args) == 2
        ):
            better = "assertIsInstance" if positive else "assertNotIsInstance"
            obj, typ = first.args
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, obj)}, {_src(em, typ)})",
                "it reports the actual type on failure",
            )
        elif type(first) is ast.UnaryOp and type(first.op) is ast.Not:
            better = "assertFalse" if positive else "assertTrue"
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, first.operand)})",
                "a negated condition reads better as the opposite assertion",
            )
        return
    if name in ("assertEqual", "assertNotEqual", "assertIs", "assertIsNot") and len(args) >= 2:
        equal = name in ("assertEqual", "assertIs")
        for value, other in ((args[1], args[0]), (args[0], args[1])):
            if type(value) is not ast.Constant:
                continue
            if value.value is None:
                better = "assertIsNone" if equal else "assertIsNotNone"
            elif value.value is True and name == "assertEqual":
                better = "assertTrue"
            elif value.value is False and name == "assertEqual":
                better = "assertFalse"
            else:
                continue
            _emit(
                em, a, better, f"self.{better}({_src(em, other)})", "it states the intent directly"
            )
            return


_OP_TEXT: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


def _op_text(op: type) -> str:
    return _OP_TEXT.get(op, "?")


def _pytest_style(em: Emitter, a: Assertion) -> None:
    test = a.node.test  # type: ignore[attr-defined]
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return
    op = type(test.ops[0])
    if op not in (ast.Eq, ast.NotEq):
        return
    left, right = test.left, test.comparators[0]
    for value, other in ((right, left), (left, right)):
        if type(value) is ast.Constant and (value.value is None or isinstance(value.value, bool)):
            word = "is" if op is ast.Eq else "is not"
            fixed = f"assert {_src(em, other)} {word} {value.value!r}"
            _emit(
                em,
                a,
                f"'{word} {value.value!r}'",
                fixed,
                f"comparing with {value.value!r} by == can be fooled by __eq__",
            )
            return
