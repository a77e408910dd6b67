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
import re
from typing import Any

from tools.test_analysis.rules.common import Emitter, is_number, segment
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import (
    constant_name,
    http_status,
    looks_like_status,
    unparse,
    with_name_for,
)
from tools.test_analysis.rules.helpers import decorator_name

__all__ = ["check_magic"]

#: Sentinels that explain themselves only in hex: 3735928559 is 0xDEADBEEF to no reader.
_HEX_SENTINELS = frozenset({0xDEADBEEF, 0xCAFEBABE, 0xFEEDFACE})
_SENTINELS = frozenset(
    {42, 1337, 31337, 0xDEADBEEF, 0xCAFEBABE, 0xFEEDFACE, 12345678}
    | {21, 22, 25, 53, 80, 443, 8000, 8080, 8443}  # well-known ports
    | {60, 3600, 86400, 604800}  # seconds in a minute, hour, day, week
)
#: Numbers written in text: a minus only when it starts a word, digits even after letters
#: (``"1h17m"``, ``"17px"``: the input a parser reads).
_DIGITS = re.compile(rb"(?:(?<![\w.])-)?(?<![\d.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_BUDGET = 64  # long literal tables are data, not assertions; stop looking
#: Operands combined three at a time, only in tests with at most this many distinct
#: numbers (6 -> under 2k candidate values; more would explain any small number by chance).
_THREE_TERM_OPERANDS = 6
#: Numbers taken from the test's strings into that arithmetic.
_QUOTED_OPERANDS = 6


def _operands(a: Assertion, ignored: frozenset[str]) -> list[ast.expr]:
    node = a.node
    if a.kind == "assert":
        test = node.test  # type: ignore[attr-defined]
        if type(test) is ast.Compare:
            return [test.left, *test.comparators]
        return [test]
    call: ast.Call = node  # type: ignore[assignment]
    # Only the compared values: later positionals are tolerances (places, rtol, decimal).
    out = list(call.args[:2])
    out.extend(k.value for k in call.keywords if k.arg is not None and k.arg not in ignored)
    return out


def _numbers(root: ast.expr, allowed: frozenset[float]) -> list[tuple[ast.AST, Any]]:
    found: list[tuple[ast.AST, Any]] = []
    budget = _BUDGET
    stack: list[ast.AST] = [root]
    while stack and budget:
        budget -= 1
        n = stack.pop()
        t = type(n)
        if t is ast.Constant:
            v = n.value  # type: ignore[attr-defined]
            if is_number(v) and v not in allowed:
                found.append((n, v))
        elif t is ast.UnaryOp:
            operand = n.operand  # type: ignore[attr-defined]
            if (
                type(n.op) is ast.USub  # type: ignore[attr-defined]
                and type(operand) is ast.Constant
                and is_number(operand.value)
            ):
                value: Any = -operand.value  # type: ignore[operator]
                if value not in allowed:
                    found.append((n, value))
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
    return found


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


def _test_numbers(em: Emitter, facts: TestFacts) -> dict[Any, int]:
    """How often each number occurs in the test (and its class's set-up): numeric literals,
    numbers written in strings, string lengths; cached on the facts."""
    cached = facts.numbers
    if cached is not None:
        return cached
    counts: dict[Any, int] = {}
    plain: list[Any] = []
    quoted: list[Any] = []
    roots: list[ast.AST] = [facts.test.node]
    cls = facts.test.cls
    if cls is not None:
        roots.extend(cls.setup_methods)
    # the fixtures of this file the test requests set its numbers up too (the judging line:
    # "numbers that the test set up ... are noise")
    roots.extend(_fixtures(em, facts))
    for root in roots:
        for n in ast.walk(root):
            if (
                type(n) is ast.UnaryOp
                and type(n.op) is ast.USub
                and type(n.operand) is ast.Constant
                and is_number(n.operand.value)
            ):
                negative: Any = -n.operand.value  # type: ignore[operator]
                counts[negative] = counts.get(negative, 0) + 1
                continue
            if type(n) is not ast.Constant:
                continue
            v = n.value
            if is_number(v):
                counts[v] = counts.get(v, 0) + 1
                plain.append(v)
            elif isinstance(v, str | bytes) and v:
                raw = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v
                counts[len(v)] = counts.get(len(v), 0) + 1
                for m in _DIGITS.findall(raw[:2000]):
                    text = m.decode()
                    num: Any = float(text) if "." in text or "e" in text.lower() else int(text)
                    counts[num] = counts.get(num, 0) + 1
                    # "1-2-3" parsed by the code under test: its numbers feed the arithmetic
                    if len(quoted) < _QUOTED_OPERANDS:
                        quoted.append(num)
                # a long number whose digits stand in the input ("45.9876543" parsed to
                # 987654 microseconds): it appears in the parsed input
                for run in _DIGIT_RUN.findall(raw[:2000]):
                    for num in _digit_slices(run):
                        counts[num] = counts.get(num, 0) + 1
    # numbers the test's comments state (`# M(11; 5, 2, 1, 1, 2) = 83160`)
    for num in _comment_numbers(em, facts):
        counts[num] = counts.get(num, 0) + 1
    # numbers of the module constants and class attributes the test reads: its set-up, or
    # the input it parses (`DOC = "port = 5123"` ... `assert conf.port == 5123`)
    for value in _constants_read(em, facts):
        for num in _written_numbers(value):
            counts[num] = counts.get(num, 0) + 1
    # values the test's own arithmetic explains: a product/sum/difference of two of its
    # numbers, or (default precision, issue 28) of three ((2 + 5) * 2, 200 + 3 + 4, 1 - 2 - 3
    # of a parsed string), or a running sum/product of its numbers in order (24 in a
    # running product of 1..5). 0 and 1 are no operands, and a result equal to one of its
    # own operands (x * 1, x + y - y) explains nothing.
    derived: set[Any] = set()
    small = [v for v in dict.fromkeys(plain) if isinstance(v, int | float) and v not in (0, 1)][:30]
    pairs: dict[Any, tuple[Any, Any]] = {}
    for x in small:
        for y in small:
            for r in (x * y, x + y, x - y):
                if r != x and r != y:
                    derived.add(r)
                    pairs.setdefault(r, (x, y))
    few = list(dict.fromkeys([*small, *quoted]))
    few = [v for v in few if v not in (0, 1)]
    few = few if len(few) <= _THREE_TERM_OPERANDS else []  # a table's numbers: no search
    firsts = {x + y: (x, y) for x in few for y in few} | {x - y: (x, y) for x in few for y in few}
    firsts |= {x * y: (x, y) for x in few for y in few}
    for d, used in firsts.items():
        for z in few:
            for r in (d + z, d - z, d * z):
                if r != z and r not in used:
                    derived.add(r)
    run = [v for v in plain[:_THREE_TERM_OPERANDS] if isinstance(v, int | float)]
    total: Any = sum(run[:2])
    product: Any = run[0] * run[1] if len(run) >= 2 else 0
    for v in run[2:]:
        total, product = total + v, product * v
        derived.update(r for r in (total, product) if r != v)
    for v in derived:
        counts[v] = counts.get(v, 0) + 1  # explained: as if written once more
    # what is left is each number's use outside the assertions' compared values: the input
    # the test wrote, or arithmetic of its numbers (issue 28: 3735928559 asserted three times
    # was "explained" by its own repetition)
    for v, times in _compared(facts).items():
        counts[v] = counts.get(v, 0) - times
    facts.numbers = counts
    return counts


#: How deep fixtures requesting fixtures are followed.
_FIXTURE_DEPTH = 2


def _fixtures(em: Emitter, facts: TestFacts) -> list[ast.AST]:
    """The fixture functions of this file (module level or the test's class) that the test
    requests by parameter, and the fixtures they request in turn."""
    out: list[ast.AST] = []
    seen: set[str] = set()
    todo: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, int]] = [(facts.test.node, 0)]
    cls = facts.test.cls
    methods = (
        {
            s.name: s
            for s in cls.node.body
            if type(s) is ast.FunctionDef or type(s) is ast.AsyncFunctionDef
        }
        if cls is not None
        else {}
    )
    while todo:
        func, depth = todo.pop()
        for arg in func.args.args + func.args.kwonlyargs:
            name = arg.arg
            if name in seen or name in ("self", "cls", "request"):
                continue
            seen.add(name)
            found = em.syntax.functions.get(name) or methods.get(name)
            if found is None or not any(
                decorator_name(d) == "fixture" for d in found.decorator_list
            ):
                continue
            out.append(found)
            if depth + 1 < _FIXTURE_DEPTH:
                todo.append((found, depth + 1))
    return out


def _module_values(em: Emitter) -> dict[str, ast.expr]:
    """``NAME = <value>`` at module level, by name (cached on the emitter)."""
    if em.module_values is None:
        values: dict[str, ast.expr] = {}
        for stmt in em.syntax.tree.body:
            if type(stmt) is ast.Assign:
                for target in stmt.targets:
                    if type(target) is ast.Name:
                        values[target.id] = stmt.value
            elif type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value:
                values[stmt.target.id] = stmt.value
        em.module_values = values
    return em.module_values


def _constants_read(em: Emitter, facts: TestFacts) -> list[ast.expr]:
    """Values of the module constants and class attributes the test reads."""
    module = _module_values(em)
    out = [module[name] for name in facts.loaded if name in module]
    cls = facts.test.cls
    if cls is not None and facts.self_loads:
        for stmt in cls.node.body:
            if type(stmt) is ast.Assign:
                if any(type(t) is ast.Name and t.id in facts.self_loads for t in stmt.targets):
                    out.append(stmt.value)
    return out


def _written_numbers(root: ast.AST) -> list[Any]:
    """Numeric literals in ``root`` and the numbers written in its strings."""
    out: list[Any] = []
    for n in ast.walk(root):
        if type(n) is ast.UnaryOp and type(n.op) is ast.USub and type(n.operand) is ast.Constant:
            if is_number(n.operand.value):
                out.append(-n.operand.value)  # type: ignore[operator]
            continue
        if type(n) is not ast.Constant:
            continue
        v = n.value
        if is_number(v):
            out.append(v)
        elif isinstance(v, str | bytes) and v:
            raw = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v
            out.extend(_parse_number(m) for m in _DIGITS.findall(raw[:2000]))
            for run in _DIGIT_RUN.findall(raw[:2000]):
                out.extend(_digit_slices(run))
    return out


#: Runs of digits in the test's strings long enough to carry a number by accident rarely.
_DIGIT_RUN = re.compile(rb"\d{4,24}")
_MIN_SLICE = 4


def _digit_slices(run: bytes) -> set[int]:
    """The numbers of four or more digits written contiguously in ``run`` (no leading 0)."""
    text = run.decode()
    return {
        int(text[i:j])
        for i in range(len(text))
        if text[i] != "0"
        for j in range(i + _MIN_SLICE, len(text) + 1)
    }


def _parse_number(match: bytes) -> Any:
    text = match.decode()
    return float(text) if "." in text or "e" in text.lower() else int(text)


def _comment_numbers(em: Emitter, facts: TestFacts) -> list[Any]:
    """Numbers written in the comments of the test's lines."""
    out: list[Any] = []
    test = facts.test
    for line in em.parsed.lines[test.node.lineno - 1 : test.end_line]:
        at = line.find("#")
        if at < 0 or line.count('"', 0, at) % 2 or line.count("'", 0, at) % 2:
            continue  # no comment, or a '#' inside a string
        for m in _DIGITS.findall(line[at:].encode("utf-8", "surrogatepass")):
            text = m.decode()
            try:
                out.append(float(text) if "." in text or "e" in text.lower() else int(text))
            except ValueError:
                continue
    return out


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
    operands = _operands(a, em.rc.ignored_keywords)
    hits: list[tuple[ast.AST, Any, ast.expr | None]] = []
    for i, operand in enumerate(operands):
        others = [o for j, o in enumerate(operands[:2]) if j != i]
        actual = others[0] if others else None
        for node, value in _numbers(operand, allowed):
            hits.append((node, value, actual))
    if not hits:
        return
    strict = em.rc.strict
    if not strict and _negative(a):
        return  # assertNotEqual(x, 19): any other value would do, the number means nothing
    if not strict:
        counts = _test_numbers(em, facts)
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


def _compared(facts: TestFacts) -> dict[Any, int]:
    """How often each number is an assertion's compared value in the test: repeating an
    expected value in several assertions explains nothing, only its use elsewhere does."""
    counts: dict[Any, int] = {}
    for a in facts.assertions:
        if a.kind in ("local", "raise", "framework", "pytest") or a.guard:
            continue  # the assertions check_magic reads (see check_assertion_rules)
        for operand in _operands(a, frozenset()):
            for _, value in _numbers(operand, frozenset()):
                counts[value] = counts.get(value, 0) + 1
    return counts


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
