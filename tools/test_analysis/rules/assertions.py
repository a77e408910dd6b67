"""Assertion rules: roulette, duplicate, redundant, magic number, sensitive equality,
suboptimal assert, unknown test. Each reads :class:`TestFacts`; none walks the test again."""

from __future__ import annotations

import ast
import re

from tools.test_analysis.parsing import TestFunction
from tools.test_analysis.rules.common import (
    Emitter,
    dotted_name,
    join_names,
    segment,
)
from tools.test_analysis.rules.facts import Assertion, TestFacts
from tools.test_analysis.rules.fixes import unparse, with_message
from tools.test_analysis.rules.kinds import SELF_DESCRIBING
from tools.test_analysis.rules.magic import check_magic
from tools.test_analysis.rules.messages import has_message
from tools.test_analysis.rules.redundancy import check_duplicates, check_redundant
from tools.test_analysis.rules.sensitive import (
    check_sensitive,
    formatting_is_subject,
    formatting_word,
)
from tools.test_analysis.rules.suboptimal import check_suboptimal


def counts_for_roulette(a: Assertion) -> bool:
    """Value checks count; self-describing checks, framework waits, context-manager guards
    and inferred local helpers do not."""
    return (
        a.kind != "local"
        and a.kind != "framework"
        and not a.guard
        and a.name not in SELF_DESCRIBING
    )


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
        _roulette(em, facts, assertions)
    if em.on("duplicate-assert") and len(assertions) >= 2:
        check_duplicates(em, assertions, facts)
    redundant = em.on("redundant-assertion")
    magic = em.on("magic-number")
    sensitive = em.on("sensitive-equality") and (
        not formatting_is_subject(em, test.name)
        and not (not em.rc.strict and test.cls is not None and formatting_word(test.cls.name))
    )
    suboptimal = em.on("suboptimal-assert")
    for a in assertions:
        if a.kind in ("local", "raise", "framework"):
            continue
        if redundant and not a.nested:  # nested: likely a test of an assertion helper
            check_redundant(em, a)
        if magic and a.kind != "pytest" and not a.guard:
            check_magic(em, a, facts)
        if sensitive:
            check_sensitive(em, a, facts)
        if suboptimal and (a.kind == "unittest" or a.kind == "assert"):
            check_suboptimal(em, a, facts)


def check_unknown_test(em: Emitter, facts: TestFacts, teardown_asserts: bool = False) -> None:
    """unknown-test: the test contains no assertion (direct, helper, inferred, framework
    waits and log expectations, or a tearDown of its class that asserts)."""
    if facts.assertions or teardown_asserts:
        return
    test = facts.test
    if _asserts_by_hand(test.node):
        return  # `try: ... except E: pass else: raise Exception`: a hand-made assertion
    unread = sorted(n for n in facts.assigned - facts.loaded if not n.startswith("_"))
    changed = unobserved_change(test.node)
    dropped = (
        discarded_round_trip(test.node)
        if not unread and changed is None and (em.rc.strict or not _says_raises(em, test))
        else None
    )  # default: "neither direction raises" (a comment) is a smoke test by design
    if not em.rc.strict and not unread and changed is None and dropped is None:
        # default: a test that only calls (``Option(default=x)``, ``import mod``, ``hash(t)``,
        # ``validator.validate(x)``) checks that nothing raises, on purpose in mature suites;
        # one that computes a value and never reads it, or ends by changing an object it
        # built and never looks at it (``doc.append(...)``), has clearly lost its assertion
        return
    confidence = 0.7 if facts.helperish_calls else 0.9
    computed = f" (it computes {join_names(unread, 3)} but never checks it)" if unread else ""
    if changed is not None and not unread:
        computed = f" (it ends by calling {changed} and never checks what that did)"
    if dropped is not None:
        computed = f" (it ends by discarding what {dropped} returned)"
    em.emit(
        "unknown-test",
        test.line,
        test.end_line,
        f"{test.name} contains no assertion{computed}, so it passes whenever nothing raises.",
        confidence=confidence,
        context={"test": test.name},
    )


#: Methods that change their object (or write it out): a test that ends with one and never
#: reads the object again acts without observing what it did.
_MUTATORS = frozenset(
    "append extend insert add update remove discard pop clear setdefault write writelines put "
    "push delete save sort reverse move rename register".split()
)


def unobserved_change(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``name.method()`` when the test's last statement changes a local it assigned from a
    call (``doc = parse(...)`` ... ``doc.append(...)``) with a mutating method (append, add,
    update, remove, write, ...); None otherwise."""
    body = [s for s in node.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    if not body:
        return None
    last = body[-1]
    if not (type(last) is ast.Expr and type(last.value) is ast.Call):
        return None
    func = last.value.func
    if not (type(func) is ast.Attribute and type(func.value) is ast.Name):
        return None
    method, target = func.attr, func.value.id
    if method not in _MUTATORS and not method.startswith(("add_", "set_", "remove_")):
        return None
    built = any(
        type(s) is ast.Assign
        and type(s.value) is ast.Call
        and any(type(t) is ast.Name and t.id == target for t in s.targets)
        for s in body[:-1]
    )
    return f"{target}.{method}()" if built else None


def _asserts_by_hand(node: ast.AST) -> bool:
    """A try whose ``else`` raises: the test fails unless the block raised."""
    for n in ast.walk(node):
        if type(n) in (ast.Try, ast.TryStar) and n.handlers and n.orelse:  # type: ignore[attr-defined]
            if type(n.orelse[-1]) is ast.Raise:  # type: ignore[attr-defined]
                return True
    return False


def _inverse(first: str, second: str) -> bool:
    """``unstructure``/``structure``, ``dumps``/``loads``, ``encode``/``decode``,
    ``to_json``/``from_json``, ``serialize``/``deserialize``: one undoes the other."""
    a, b = first.lower(), second.lower()
    pairs = (("dump", "load"), ("encode", "decode"), ("to_", "from_"), ("pack", "unpack"))
    for x, y in pairs:
        if a.startswith(x) and b.startswith(y) and a[len(x) :] == b[len(y) :]:
            return True
    return a in ("un" + b, "de" + b) or b in ("un" + a, "de" + a)


def discarded_round_trip(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``name()`` when the test ends by calling ``name`` on what the inverse call returned
    (``data = c.unstructure(x)`` ... ``c.structure(data, T)``) and drops the result: a round
    trip whose outcome is never compared. None otherwise."""
    body = [s for s in node.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
    if not body or type(body[-1]) is not ast.Expr:
        return None
    call = body[-1].value
    if type(call) is ast.Await:
        call = call.value
    if type(call) is not ast.Call:
        return None
    name = dotted_name(call.func).rsplit(".", 1)[-1]
    made: dict[str, str] = {}
    for s in body[:-1]:
        if type(s) is ast.Assign and type(s.value) is ast.Call:
            for t in s.targets:
                if type(t) is ast.Name:
                    made[t.id] = dotted_name(s.value.func).rsplit(".", 1)[-1]
    for arg in call.args:
        if type(arg) is ast.Name and _inverse(made.get(arg.id, ""), name):
            return f"{name}()"
    return None


_NO_RAISE = re.compile(
    r"\b(?:raise[sd]?|raising|throws?|crash(?:es|ing)?|exceptions?|errors?|silent(?:ly)?|"
    r"smoke|does ?n[o']?t fail|should ?n[o']?t fail|no[- ]op|doesn't break|not break|"
    r"nothing happens|accept(?:s|ed)?|succeed(?:s|ed)?|is fine|are fine|works)\b",
    re.IGNORECASE,
)
_NO_RAISE_NAMES = ("no_error", "not_raise", "no_raise", "doesnt_raise", "no_crash", "smoke")


def _imports_only(test: TestFunction) -> bool:
    body = [
        s for s in test.node.body if not (type(s) is ast.Expr and type(s.value) is ast.Constant)
    ]
    return bool(body) and all(type(s) in (ast.Import, ast.ImportFrom) for s in body)


_RAISES = re.compile(r"\b(?:raise[sd]?|raising|exceptions?|crash(?:es)?)\b", re.IGNORECASE)


def _says_raises(em: Emitter, test: TestFunction) -> bool:
    """The test's docstring or a comment in it speaks of raising (``# as long as neither
    direction raises``): not raising is its check."""
    node = test.node
    doc = ast.get_docstring(node, clean=False) if node.body else None
    if doc and _RAISES.search(doc):
        return True
    for line in em.parsed.lines[node.lineno - 1 : test.end_line]:
        hash_at = line.find("#")
        if hash_at >= 0 and _RAISES.search(line, hash_at):
            return True
    return False


def declares_no_raise(em: Emitter, test: TestFunction) -> bool:
    """The test says (name, docstring or a comment) that its check is "nothing raises"."""
    if any(word in test.name.lower() for word in _NO_RAISE_NAMES):
        return True
    node = test.node
    body = node.body
    doc = ast.get_docstring(node, clean=False) if body else None
    if doc and _NO_RAISE.search(doc):
        return True
    for line in em.parsed.lines[node.lineno - 1 : test.end_line]:
        hash_at = line.find("#")
        if hash_at >= 0 and _NO_RAISE.search(line, hash_at):
            return True
    return False


# --------------------------------------------------------------------------- rules


def _roulette(em: Emitter, facts: TestFacts, assertions: list[Assertion]) -> None:
    test = facts.test
    counted = [a for a in assertions if counts_for_roulette(a)]
    if not em.rc.strict:
        # default: pytest shows a failing assert's expression and values, unittest's
        # traceback the failing line and a subTest its label: a failure always says which
        # check broke, so the finding would only ask for messages nobody asked for.
        return
    # strict, SMELLS.md: 2+ assertions and one without a message (a subTest label is none)
    bare = [a for a in counted if not has_message(a)]
    if len(counted) < 2 or not bare:
        return
    first = bare[0]
    message = (
        f"{test.name} has {len(counted)} assertions and {len(bare)} of them carry no "
        f"message (first at line {first.node.lineno}), so a failure shows the failing "  # type: ignore[attr-defined]
        "line but not what the check means."
    )
    confidence = 0.7 if all(a.kind == "assert" for a in bare) else 0.9
    fixed = with_message(first.node, first.kind, first.name)
    em.emit(
        "assertion-roulette",
        test.line,
        test.end_line,
        message,
        confidence=confidence,
        context={
            "test": test.name,
            "count": str(len(counted)),
            "unlabelled": str(len(bare)),
            "first": segment(em.parsed, first.node),
            "fixed": fixed,
            "original": unparse(first.node) if fixed else "",
        },
    )
