"""sensitive-equality: an assertion that compares ``str()``/``repr()`` text.

strict: any such comparison, except in tests (or files) about text output (``test_repr``,
``test_format_*``). default: only where the text stands in for a structural comparison: both
sides stringified (``str(a) == str(b)``) or a container's repr as the literal
(``str(d) == "{'a': 1}"``); never an exception's message or an object's own repr format.
"""

from __future__ import annotations

import ast
import re

from tools.test_analysis.rules.common import Emitter, dotted_name, segment
from tools.test_analysis.rules.facts import Assertion
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.kinds import EQUALITY_CALLS

__all__ = ["check_sensitive", "formatting_is_subject", "formatting_word"]


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


_WORD_SPLIT = re.compile(r"[_\W]+|(?<=[a-z0-9])(?=[A-Z])")


def formatting_word(name: str) -> bool:
    """``test_repr``, ``TestAddRepr``, ``test_str_of_empty``, ``test_format_html``..."""
    text = name.lower()
    if any(w in text for w in _FORMATTING_WORDS):
        return True
    return "str" in (w.lower() for w in _WORD_SPLIT.split(name))


def formatting_is_subject(em: Emitter, test_name: str) -> bool:
    """True when the test (or its file) is about text output, where str()/repr() is the
    behaviour under test rather than a shortcut."""
    file_name = em.parsed.path.rsplit("/", 1)[-1]
    return formatting_word(test_name) or formatting_word(file_name[:-3])


_EXCEPTION_HINTS = ("exc", "err", "e", "ex", "error", "exception", "value", "excinfo")


def _is_exception_text(subject: ast.AST) -> bool:
    """``str(exc)``, ``str(excinfo.value)``, ``str(e)``: an exception's message, which is
    what a test of error reporting checks."""
    name = dotted_name(subject) if isinstance(subject, ast.expr) else ""
    parts = name.lower().split(".")
    return bool(name) and (parts[-1] in _EXCEPTION_HINTS or parts[0] in ("exc", "excinfo", "e"))


def _shortcut(operand: ast.expr, other: ast.expr | None) -> bool:
    """default profile: the str()/repr() stands in for a structural comparison. Both sides
    stringified (``str(a) == str(b)``), or the text compared is a container's repr
    (``str(d) == "{'a': 1}"``); not an object's own repr format
    (``repr(p) == "Point(x=1)"``) and not an exception's message."""
    subject = operand.args[0] if operand.args else operand.func.value  # type: ignore[attr-defined]
    if _is_exception_text(subject):
        return False
    if other is not None and _stringified(other) is not None:
        return True
    if type(other) is ast.Constant and isinstance(other.value, str):
        text = other.value.strip()
        if not text or text[0] not in "[{(":
            return False
        try:  # "(0-9)" or "{integer name}" is an object's own text, "{'a': 1}" a dict's
            ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False
        return True
    return False


def check_sensitive(em: Emitter, a: Assertion) -> None:
    operands: list[ast.expr] = []
    if a.kind == "assert":
        test = a.node.test  # type: ignore[attr-defined]
        if type(test) is ast.Compare and any(type(op) in (ast.Eq, ast.NotEq) for op in test.ops):
            operands = [test.left, *test.comparators]
    elif (
        a.name in EQUALITY_CALLS
        or a.name in ("assertNotEqual", "assertNotEquals")
        or (a.kind == "helper" and "equal" in a.name)
    ):
        operands = list(a.node.args[:2])  # type: ignore[attr-defined]
    for i, operand in enumerate(operands):
        func = _stringified(operand)
        if func is None:
            continue
        other = operands[1 - i] if len(operands) == 2 else None
        if not em.rc.strict and not _shortcut(operand, other):
            continue
        subject = operand.args[0] if operand.args else operand.func.value  # type: ignore[attr-defined]
        value = unparse(subject)
        unittest = a.kind == "unittest"
        compare = (
            f"self.assertEqual({value}, expected)" if unittest else f"assert {value} == expected"
        )
        em.emit_node(
            "sensitive-equality",
            a.node,
            f"The assertion compares {func}() output, which changes with any formatting change.",
            confidence=0.8,
            context={
                "assertion": segment(em.parsed, a.node),
                "func": func,
                "subject": segment(em.parsed, subject, 40),
                "compare_example": f"# compare the value, not its text\n{compare}",
            },
        )
        return
