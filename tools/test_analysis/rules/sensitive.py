"""sensitive-equality: an assertion that compares ``str()``/``repr()`` text.

strict: any such comparison, except in tests (or files) about text output (``test_repr``,
``test_format_*``), and never an exception's or a warning's message (the behaviour of error
reporting) nor the text of two held objects (``str(after) == str(before)`` across a round
trip: a formatting change shows on both sides), nor str() of the test's own input (the text
the code must produce). default: only where the text stands in for a structural comparison:
both sides computed and stringified (``str(load()) == str(expected())``) or a container's
repr as the literal (``str(d) == "{'a': 1}"``); never an object's own repr format.
"""

from __future__ import annotations

import ast
import re

from tools.test_analysis.rules.common import Emitter, literal_value, segment, walk
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.kinds import EQUALITY_CALLS

__all__ = ["check_sensitive", "formatting_is_subject", "formatting_word", "own_inputs"]


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
#: Names of a warning's or an exception's message.
_MESSAGE_HINTS = ("message", "msg", "warning", "exceptions")


def _parts(node: ast.AST) -> list[str]:
    """Names along an attribute / subscript / call chain (``exc.value.exceptions[0]`` ->
    exc, value, exceptions), outermost last."""
    parts: list[str] = []
    while True:
        t = type(node)
        if t is ast.Attribute:
            parts.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif t is ast.Subscript or t is ast.Call:
            node = node.value if t is ast.Subscript else node.func  # type: ignore[attr-defined]
        elif t is ast.Name:
            parts.append(node.id)  # type: ignore[attr-defined]
            return list(reversed(parts))
        else:
            return list(reversed(parts))


def _is_exception_text(subject: ast.AST) -> bool:
    """``str(exc)``, ``str(excinfo.value)``, ``repr(exc.value.exceptions[0])``,
    ``repr(ValueError("x"))``, ``str(w.message)``: an exception's or a warning's message,
    which is what a test of error reporting checks."""
    parts = [p.lower() for p in _parts(subject)]
    if not parts:
        return False
    if type(subject) is ast.Call and parts[-1].endswith(("error", "exception", "warning")):
        return True  # repr(ValueError("bad")): the expected exception, built
    return (
        parts[-1] in _EXCEPTION_HINTS
        or parts[-1] in _MESSAGE_HINTS
        or parts[0] in ("exc", "excinfo", "e", "exc_info", "err", "error")
        or any(p.endswith(("error", "exception")) for p in parts)
    )


def false_premise(operand: ast.expr, other: ast.expr | None, facts: TestFacts) -> bool:
    """Both profiles: the text is no formatting accident. An exception's or a warning's
    message is the behaviour of error reporting; with two held objects stringified
    (``str(after) == str(before)`` across a round trip) a formatting change shows on both
    sides alike; and str() of the
    test's own input or expected value (a literal, a parameter, a loop variable over its
    inputs: ``back["n"] == str(large_int)``, ``result.output == repr("from-map")``) writes
    the text the code under test must produce."""
    subject = operand.args[0] if operand.args else operand.func.value  # type: ignore[attr-defined]
    if _is_exception_text(subject):
        return True
    if other is not None and _stringified(other) is not None:
        # str(after) == str(before): two objects the test holds, one format on both sides;
        # repr(err) == repr(ValueError("x")): exceptions compared by type and message;
        # str(load()) == str(expected()) stands in for comparing the values
        theirs = other.args[0] if other.args else other.func.value  # type: ignore[attr-defined]
        if (_held(subject) and _held(theirs)) or _is_exception_text(theirs):
            return True
    ok, _ = literal_value(subject)
    return ok or (type(subject) is ast.Name and subject.id in own_inputs(facts))


def _held(node: ast.AST) -> bool:
    """A name, or an attribute / subscript of one: an object the test holds."""
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value  # type: ignore[attr-defined]
    return type(node) is ast.Name


def own_inputs(facts: TestFacts) -> set[str]:
    """The test's parameters, its loop variables and the names it binds to literals
    (computed once per test, on first use)."""
    if facts.inputs is not None:
        return facts.inputs
    func = facts.test.node
    names = {a.arg for a in func.args.args + func.args.kwonlyargs} - {"self"}
    for n in walk(func):
        if type(n) in (ast.For, ast.AsyncFor, ast.comprehension):
            names.update(x.id for x in ast.walk(n.target) if type(x) is ast.Name)  # type: ignore[attr-defined]
    for name, value in facts.bindings.items():
        if literal_value(value)[0]:
            names.add(name)
    facts.inputs = names
    return names


def _shortcut(operand: ast.expr, other: ast.expr | None) -> bool:
    """default profile: the str()/repr() stands in for a structural comparison: both sides
    stringified (``str(load()) == str(expected())``), or the text compared is a container's
    repr (``str(d) == "{'a': 1}"``); not an object's own repr format
    (``repr(p) == "Point(x=1)"``)."""
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


def check_sensitive(em: Emitter, a: Assertion, facts: TestFacts) -> None:
    """Report ``a`` when it compares str()/repr() text (see the module docstring)."""
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
        if false_premise(operand, other, facts):
            continue
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
