"""magic-number: an unexplained numeric literal in an assertion.

strict (SMELLS.md): any number but -1, 0-10 and 100 compared by an assertion.

default: only numbers the test does not explain. Not reported there:

- HTTP status codes compared with a status (``assert rv.status_code == 404``, or handed to
  a helper named for one: ``assert_status(rv, 404)``): the code is
  the standard's name for itself (strict still reports them, and the fix names the
  :class:`http.HTTPStatus` member, never ``EXPECTED_VALUE = 302``);
- values the test itself wrote down elsewhere than in the assertions' compared values
  (``make(n=1234)`` ... ``== 1234``; an expected value repeated in several assertions is
  still unexplained), in its class's set-up, in the fixtures of this file it requests, or
  in the module constants and class attributes it reads (the input it parses:
  ``DOC = "port = 5123"``; a number of four or more digits standing in its strings, as
  ``987654`` in ``"45.9876543"``), including
  in strings (``"q=0.5"``), as a string's length, or as the arithmetic of its other numbers
  (two of them, or three in a test with few numbers, or a running sum/product);
- sentinels: 42 and friends, well-known ports, seconds per minute/hour/day, powers of two
  (and one less), round numbers, repeated or counting digits (1111, 1234), years, and
  one-decimal floats, and complex literals; a hex sentinel only when written in hex
  (``3735928559`` hides ``0xDEADBEEF``);
- numbers written in hex, octal or binary (``0o700``: a mode written as one), numbers the
  test's comments state, counts of a named unit (``-5 * ONE_HOUR``), a tolerance off a named
  bound in an ordering comparison (``>= GRACE - 0.05``), and values written in the test's
  strings in any notation (``"45.8e-2"``).

The fix replaces the number by a constant named after what it is compared with
(``len(rows) == 17`` -> ``EXPECTED_ROWS_COUNT``), printed from the AST so it parses.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.test_analysis.rules.common import Emitter, segment
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import (
    constant_name,
    http_status,
    looks_like_status,
    unparse,
    with_name_for,
)
from tools.test_analysis.rules.written_numbers import compared_operands, number_counts, numbers_in

__all__ = ["check_magic"]

#: Sentinels that explain themselves only in hex: 3735928559 is 0xDEADBEEF to no reader.
_HEX_SENTINELS = frozenset({0xDEADBEEF, 0xCAFEBABE, 0xFEEDFACE})
_SENTINELS = frozenset(
    {42, 1337, 31337, 0xDEADBEEF, 0xCAFEBABE, 0xFEEDFACE, 12345678}
    | {21, 22, 25, 53, 80, 443, 8000, 8080, 8443}  # well-known ports
    | {60, 3600, 86400, 604800}  # seconds in a minute, hour, day, week
)


def is_sentinel(value: Any) -> bool:
    """A number that explains itself (see the module docstring)."""
    if isinstance(value, complex):
        return True  # 1j, 2+3j: a complex literal is a type's value, not a quantity
    if isinstance(value, float):
        if value.is_integer():
            value = int(value)
        else:
            return round(value, 1) == value
    if not isinstance(value, int):
        return False
    v = abs(value)
    if v in _SENTINELS or 1900 <= v <= 2100:
        return True
    if v >= 16 and (v & (v - 1) == 0 or (v + 1) & v == 0):
        return True
    digits = str(v)
    if len(digits) >= 2 and (len(set(digits)) == 1 or digits.rstrip("0") in "123456789"):
        return True
    return "123456789".startswith(digits)


_ORDERING_CALLS = frozenset(
    {"assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual"}
)


def _named_quantities(a: Assertion) -> set[int]:
    """ids of the numbers that count or offset a named value: ``-5 * ONE_HOUR`` (five of a
    unit), ``GRACE - 0.05`` in an ordering comparison (a tolerance)."""
    out: set[int] = set()
    root = a.node
    ordering = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
    compares = [n for n in ast.walk(root) if type(n) is ast.Compare]
    tolerant = a.name in _ORDERING_CALLS or any(
        all(type(op) in ordering for op in c.ops) for c in compares
    )
    for n in ast.walk(root):
        if type(n) is not ast.BinOp:
            continue
        named = [x for x in (n.left, n.right) if type(x) in (ast.Name, ast.Attribute)]
        if not named:
            continue
        if type(n.op) is ast.Mult or (tolerant and type(n.op) in (ast.Add, ast.Sub)):
            for x in (n.left, n.right):
                if type(x) is ast.UnaryOp:
                    out.add(id(x))
                    x = x.operand
                out.add(id(x))
    return out


def _written_in_base(em: Emitter, node: ast.AST) -> bool:
    """A number written in hex, octal or binary (``0o700``, ``0xFF``): a mode, a mask or a
    bit pattern, written as what it is."""
    text = segment(em.parsed, node).lstrip("-+( ").lower()
    return text.startswith(("0x", "0o", "0b"))


def check_magic(em: Emitter, a: Assertion, facts: TestFacts) -> None:
    """Report the first unexplained number of assertion ``a``."""
    allowed = em.rc.allowed_numbers
    operands = compared_operands(a, em.rc.ignored_keywords)
    hits: list[tuple[ast.AST, Any, ast.expr | None]] = []
    for i, operand in enumerate(operands):
        others = [o for j, o in enumerate(operands[:2]) if j != i]
        actual = others[0] if others else None
        for node, value in numbers_in(operand, allowed):
            hits.append((node, value, actual))
    if not hits:
        return
    strict = em.rc.strict
    if not strict and _negative(a):
        return  # assertNotEqual(x, 19): any other value would do, the number means nothing
    if not strict:
        counts = number_counts(em, facts)
        named = _named_quantities(a)
        hits = [
            (node, value, actual)
            for node, value, actual in hits
            if not (http_status(value) is not None and _status_compare(actual, operands, a))
            and not (is_sentinel(value) and _written_as_meant(em, node, value))
            and counts.get(value, 0) < 1
            and id(node) not in named
            and not _written_in_base(em, node)
        ]
        if not hits:
            return
    node, value, actual = hits[0]
    found = list(dict.fromkeys(repr(v) for _, v, _ in hits))
    shown = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
    status = http_status(value)
    if status is not None and _status_compare(actual, operands):
        name = f"HTTPStatus.{status.name}"
        definition = "from http import HTTPStatus"
    else:
        name = constant_name(actual, facts.test.name)
        definition = f"{name} = {unparse(node)}"
    fixed = with_name_for(a.node, node, name)
    em.emit_node(
        "magic-number",
        a.node,
        f"The assertion uses the unexplained number{'s' if len(found) > 1 else ''} {shown}.",
        confidence=0.8,
        context={
            "numbers": shown,
            "number": repr(value),
            "assertion": segment(em.parsed, a.node),
            "constant": name,
            "definition": definition,
            "fixed": fixed,
        },
    )


def _written_as_meant(em: Emitter, node: ast.AST, value: Any) -> bool:
    """A sentinel written in the form that shows it (0xDEADBEEF in hex, not 3735928559)."""
    if abs(value) not in _HEX_SENTINELS:
        return True
    return segment(em.parsed, node).lstrip("-( ").lower().startswith("0x")


def _negative(a: Assertion) -> bool:
    node = a.node
    if a.kind == "assert":
        test = node.test  # type: ignore[attr-defined]
        return type(test) is ast.Compare and all(type(op) is ast.NotEq for op in test.ops)
    if a.name in ("assertNotEqual", "assertNotEquals", "failIfEqual"):
        return True
    args = node.args  # type: ignore[attr-defined]
    if a.name in ("assertFalse", "failIf") and args and type(args[0]) is ast.Compare:
        return all(type(op) is ast.Eq for op in args[0].ops)
    return False


def _status_compare(
    actual: ast.expr | None, operands: list[ast.expr], a: Assertion | None = None
) -> bool:
    if a is not None and a.kind == "helper" and "status" in a.name.lower():
        return True  # assert_status(response, 404): the helper says what the number is
    if actual is not None:
        return looks_like_status(actual)
    return any(looks_like_status(o) for o in operands)
