"""Where an assertion carries its failure message (unittest's ``msg`` positions, pytest's
``assert x, msg``, ``raise AssertionError(msg)``)."""

from __future__ import annotations

import ast

from tools.test_analysis.rules.facts import Assertion
from tools.test_analysis.rules.fixes import register_msg_positions

__all__ = ["has_message", "message_of"]

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
register_msg_positions(_MSG_INDEX)

_MSG_KEYWORDS = frozenset({"msg", "err_msg", "message", "reason", "fail_msg"})


def has_message(a: Assertion) -> bool:
    """Whether the assertion carries a failure message."""
    node = a.node
    if a.kind == "assert":
        return node.msg is not None  # type: ignore[attr-defined]
    if a.kind == "raise":
        return type(node.exc) is ast.Call and bool(node.exc.args)  # type: ignore[attr-defined]
    if a.kind == "framework":
        return True  # a log/wait expectation names what it waited for
    call: ast.Call = node  # type: ignore[assignment]
    if any(k.arg in _MSG_KEYWORDS for k in call.keywords):
        return True
    if a.kind == "unittest" or (a.kind == "pytest" and a.name == "fail"):
        index = _MSG_INDEX.get(a.name, 0 if a.kind == "pytest" else None)
        return index is not None and len(call.args) > index
    return False


def message_of(a: Assertion) -> ast.expr | None:
    """The assertion's failure message expression, if it has one."""
    node = a.node
    if a.kind == "assert":
        return node.msg  # type: ignore[attr-defined]
    if a.kind == "raise":
        exc = node.exc  # type: ignore[attr-defined]
        return exc.args[0] if type(exc) is ast.Call and exc.args else None
    if type(node) is not ast.Call:
        return None
    for k in node.keywords:
        if k.arg in _MSG_KEYWORDS:
            return k.value
    if a.kind == "unittest" or (a.kind == "pytest" and a.name == "fail"):
        index = _MSG_INDEX.get(a.name, 0 if a.kind == "pytest" else None)
        if index is not None and len(node.args) > index:
            return node.args[index]
    return None
