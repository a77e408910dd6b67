"""magic-number: the numbers an assertion compares and the numbers a test writes elsewhere.

:func:`compared_operands` and :func:`numbers_in` find an assertion's compared numbers;
:func:`number_counts` counts, for the default profile, each number's uses outside the
assertions' compared values: literals, numbers in strings (and four-or-more-digit runs in
them), string lengths, comments, the class's set-up, requested fixtures, module constants and
class attributes read, and the arithmetic of the test's own numbers. A number counted at
least once is explained (see :mod:`.magic`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.test_analysis.rules.common import Emitter, is_number
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.helpers import decorator_name

__all__ = ["compared_operands", "number_counts", "numbers_in"]


#: Numbers written in text: a minus only when it starts a word, digits even after letters
#: (``"1h17m"``, ``"17px"``: the input a parser reads).
_DIGITS = re.compile(rb"(?:(?<![\w.])-)?(?<![\d.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_BUDGET = 64  # long literal tables are data, not assertions; stop looking
#: Operands combined three at a time, only in tests with at most this many distinct
#: numbers (6 -> under 2k candidate values; more would explain any small number by chance).
_THREE_TERM_OPERANDS = 6
#: Numbers taken from the test's strings into that arithmetic.
_QUOTED_OPERANDS = 6


def compared_operands(a: Assertion, ignored: frozenset[str]) -> list[ast.expr]:
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


def numbers_in(root: ast.expr, allowed: frozenset[float]) -> list[tuple[ast.AST, Any]]:
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


def number_counts(em: Emitter, facts: TestFacts) -> dict[Any, int]:
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


def _compared(facts: TestFacts) -> dict[Any, int]:
    """How often each number is an assertion's compared value in the test: repeating an
    expected value in several assertions explains nothing, only its use elsewhere does."""
    counts: dict[Any, int] = {}
    for a in facts.assertions:
        if a.kind in ("local", "raise", "framework", "pytest") or a.guard:
            continue  # the assertions check_magic reads (see check_assertion_rules)
        for operand in compared_operands(a, frozenset()):
            for _, value in numbers_in(operand, frozenset()):
                counts[value] = counts.get(value, 0) + 1
    return counts
