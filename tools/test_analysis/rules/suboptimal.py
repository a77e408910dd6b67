"""suboptimal-assert: an assertion a more specific form expresses better.

unittest: ``assertTrue(a == b)`` -> ``assertEqual(a, b)`` (and the other comparison operators,
``isinstance``, ``not``), ``assertEqual(x, None/True/False)`` -> ``assertIsNone(x)`` /
``assertTrue(x)``, and deprecated aliases (``assertEquals``, ``failUnless``, ...).
pytest: ``assert x == None`` / ``== True`` / ``== False`` -> ``is`` comparisons.

default: only where the better form shows what the failure hides. Not reported there:

- ``assertEqual(x, None/True/False)`` and pytest's ``assert x == None/True/False``: the
  failure already prints ``x`` whole (a bool or None has nothing more to show); kept when
  ``x`` is ``isinstance(...)``, ``hasattr(...)`` or a comparison, whose specific assertion
  would show the type, the object or the container;
- ``assertTrue(a == b)`` / ``assertTrue(a is b)`` between two objects the test holds (no
  literal, no call, neither named as the expected value): equality or identity itself is
  the subject (a copy, a pickle, a cache), and ``assertEqual`` would add two reprs;
- ``assertTrue(isinstance(err, E))`` inside ``except E as err``: it cannot fail, so a
  better assertion cannot say more.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import Emitter, dotted_name, literal_value, segment
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import unparse

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
#: assertFalse(a <op> b) -> the assertion that runs the *same* operator and negates it.
#: Only identity and membership have one (``is not`` and ``not in`` are defined as the
#: negations); ``assertNotEqual`` runs ``!=`` and ``assertGreaterEqual`` runs ``>=``, which a
#: class may define differently from ``not ==`` / ``not <``.
_FALSE_MAP: dict[type, str] = {
    ast.Is: "assertIsNot",
    ast.IsNot: "assertIs",
    ast.In: "assertNotIn",
    ast.NotIn: "assertIn",
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
    # the whole expression, printed from the AST: the fix must be valid code
    return unparse(node)


def _msg_suffix(call: ast.Call, position: int) -> str:
    """The assertion's message, carried over to the better form (``, msg=...``)."""
    for k in call.keywords:
        if k.arg == "msg":
            return f", msg={unparse(k.value)}"
    if len(call.args) > position:
        return f", msg={unparse(call.args[position])}"
    return ""


def _emit(em: Emitter, a: Assertion, better: str, fixed: str, why: str) -> None:
    em.emit_node(
        "suboptimal-assert",
        a.node,
        f"Use {better} here: {why}.",
        confidence=0.9,
        context={
            "assertion": segment(em.parsed, a.node),
            "original": unparse(a.node),
            "fixed": fixed,
            "better": better,
            "why": why,
        },
    )


#: Builtin checks whose specific assertion shows more than their bool (the type, the object).
_REVEALING_CALLS = frozenset({"isinstance", "issubclass", "hasattr", "callable"})
#: Names of an expected value: ``assertTrue(result == expected)`` hides the result.
_EXPECTED_WORDS = ("expect", "want", "correct", "golden", "truth", "reference")


def _reveals_more(node: ast.expr) -> bool:
    """A check whose specific assertion would show what its bool hides."""
    if type(node) is ast.Compare:
        return True
    return (
        type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in _REVEALING_CALLS
    )


def _held_object(node: ast.expr) -> bool:
    """A name, attribute or subscript of one (no literal, no call): an object the test holds,
    not an expected value written down."""
    while type(node) in (ast.Attribute, ast.Subscript):
        if type(node) is ast.Subscript:
            ok, _ = literal_value(node.slice)
            if not ok:
                return False
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return False
    return not node.id.lower().startswith(_EXPECTED_WORDS)


def _compares_held_objects(left: ast.expr, right: ast.expr) -> bool:
    text = (unparse(left) + " " + unparse(right)).lower()
    return (
        _held_object(left)
        and _held_object(right)
        and not any(word in text for word in _EXPECTED_WORDS)
    )


def _caught_type(facts: TestFacts, a: Assertion, name: str) -> list[str]:
    """The exception types of the ``except ... as <name>`` whose body holds ``a``."""
    line: int = a.node.lineno  # type: ignore[attr-defined]
    for n in ast.walk(facts.test.node):
        if type(n) is ast.ExceptHandler and n.name == name and n.type is not None:
            if n.body[0].lineno <= line <= (n.body[-1].end_lineno or line):
                types = n.type.elts if type(n.type) is ast.Tuple else [n.type]
                return [dotted_name(t).rsplit(".", 1)[-1] for t in types]
    return []


#: Builtin names of one exception class.
_ALIASES = {"IOError": "OSError", "EnvironmentError": "OSError", "error": "OSError"}


def _cannot_fail(facts: TestFacts, a: Assertion, check: ast.Call) -> bool:
    """``isinstance(err, E)`` inside ``except E as err``: always true."""
    if len(check.args) != 2 or type(check.args[0]) is not ast.Name:
        return False
    caught = {_ALIASES.get(t, t) for t in _caught_type(facts, a, check.args[0].id)}
    wanted = check.args[1]
    names = wanted.elts if type(wanted) is ast.Tuple else [wanted]
    asked = {_ALIASES.get(n, n) for n in (dotted_name(x).rsplit(".", 1)[-1] for x in names)}
    return bool(caught) and caught <= asked


def check_suboptimal(em: Emitter, a: Assertion, facts: TestFacts) -> None:
    """Report one suboptimal-assert finding for ``a`` if a better form exists."""
    if a.kind == "assert":
        if em.rc.strict:
            _pytest_style(em, a)  # default: pytest's report prints the value anyway
        return
    call: ast.Call = a.node  # type: ignore[assignment]
    name = a.name
    args = call.args
    if name in _DEPRECATED:
        better = _DEPRECATED[name]
        rest = ", ".join(
            [_src(em, arg) for arg in args]
            + [
                f"{k.arg}={_src(em, k.value)}" if k.arg else f"**{_src(em, k.value)}"
                for k in call.keywords
            ]
        )
        _emit(em, a, better, f"self.{better}({rest})", f"{name} is a deprecated alias")
        return
    if not args:
        return
    first = args[0]
    msg = _msg_suffix(call, 1 if name in ("assertTrue", "assertFalse") else 2)
    if name in ("assertTrue", "assertFalse"):
        positive = name == "assertTrue"
        if type(first) is ast.Compare and len(first.ops) == 1:
            op = type(first.ops[0])
            left, right = first.left, first.comparators[0]
            if (
                not em.rc.strict
                and op in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
                and _compares_held_objects(left, right)
            ):
                return  # default: `a == b` / `a is b` of two held objects is the subject
            if type(right) is ast.Constant and right.value is None and op in (ast.Is, ast.IsNot):
                better = "assertIsNone" if (op is ast.Is) == positive else "assertIsNotNone"
                _emit(
                    em,
                    a,
                    better,
                    f"self.{better}({_src(em, left)}{msg})",
                    "it states the intent and reports the value",
                )
                return
            better = (_TRUE_MAP if positive else _FALSE_MAP).get(op)  # type: ignore[assignment]
            if better is None:
                # assertFalse(a == b) is not assertNotEqual(a, b): that runs != instead of
                # ==, and a test of the operators would then test the wrong one
                return
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, left)}, {_src(em, right)}{msg})",
                f"{name}(a {_op_text(op)} b) only reports 'False is not true'",
            )
        elif (
            type(first) is ast.Call
            and type(first.func) is ast.Name
            and first.func.id == "isinstance"
            and len(first.args) == 2
        ):
            if not em.rc.strict and _cannot_fail(facts, a, first):
                return  # default: the handler already caught that type
            better = "assertIsInstance" if positive else "assertNotIsInstance"
            obj, typ = first.args
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, obj)}, {_src(em, typ)}{msg})",
                "it reports the actual type on failure",
            )
        elif type(first) is ast.UnaryOp and type(first.op) is ast.Not:
            better = "assertFalse" if positive else "assertTrue"
            _emit(
                em,
                a,
                better,
                f"self.{better}({_src(em, first.operand)}{msg})",
                "a negated condition reads better as the opposite assertion",
            )
        return
    if name in ("assertEqual", "assertNotEqual", "assertIs", "assertIsNot") and len(args) >= 2:
        equal = name in ("assertEqual", "assertIs")
        for value, other in ((args[1], args[0]), (args[0], args[1])):
            if type(value) is not ast.Constant:
                continue
            if (
                not em.rc.strict
                and (value.value is None or isinstance(value.value, bool))
                and not _reveals_more(other)
            ):
                return  # default: the failure prints `other`, a bool or None has no more
            if value.value is None:
                if name in ("assertIs", "assertIsNot") and not em.rc.strict:
                    return  # assertIs(x, None) already says "x is not None": style only
                better = "assertIsNone" if equal else "assertIsNotNone"
                fixed = f"self.{better}({_src(em, other)}{msg})"
                why = (
                    "== None can be fooled by __eq__; assertIsNone checks identity"
                    if name.startswith("assertEqual") or name.startswith("assertNot")
                    else "it states the intent directly"
                )
            elif isinstance(value.value, bool) and name == "assertEqual":
                # not assertTrue(x): that would accept any truthy value, a weaker check
                better = "assertIs"
                fixed = f"self.assertIs({_src(em, other)}, {value.value!r}{msg})"
                why = f"assertEqual(x, {value.value!r}) also passes for {int(value.value)}"
            else:
                continue
            _emit(em, a, better, fixed, why)
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
            if a.node.msg is not None:  # type: ignore[attr-defined]
                fixed += f", {unparse(a.node.msg)}"  # type: ignore[attr-defined]
            _emit(
                em,
                a,
                f"'{word} {value.value!r}'",
                fixed,
                f"comparing with {value.value!r} by == can be fooled by __eq__",
            )
            return
