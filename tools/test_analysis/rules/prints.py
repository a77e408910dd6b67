"""redundant-print, default profile: which prints in a test that asserts are leftovers.

Printing is fine where output is the test's subject (capsys, ``test_print_*``), in a file
whose tests print by convention, on a failure path (an ``if``/``except`` branch) and for text
written for a reader; a bare value printed on the main path is a leftover debugging aid.
"""

from __future__ import annotations

import ast

from tools.test_analysis.parsing import TestFunction
from tools.test_analysis.rules.common import Emitter, walk

__all__ = ["branch_calls", "output_is_subject", "prints_are_rare", "written_for_a_reader"]


#: Output-capturing fixtures: a test that takes one is testing what gets printed.
_CAPTURE_PARAMS = frozenset({"capsys", "capfd", "capsysbinary", "capfdbinary", "capteesys"})
_OUTPUT_WORDS = ("capture", "print", "output", "stdout", "stderr")


def output_is_subject(em: Emitter, test: TestFunction) -> bool:
    """The test checks printed output (capsys & co., or a capture/print test by name)."""
    params = {a.arg for a in test.node.args.args + test.node.args.kwonlyargs}
    if params & _CAPTURE_PARAMS:
        return True
    names = (test.name.lower(), em.parsed.path.rsplit("/", 1)[-1].lower())
    return any(word in text for text in names for word in _OUTPUT_WORDS)


#: default: printing in more than this share of a file's tests is the file's convention.
_PRINT_CONVENTION_SHARE = 0.2


def prints_are_rare(em: Emitter) -> bool:
    """Few of the file's tests print (at most two, or under a fifth of them)."""
    if em.print_share is None:
        tests = em.syntax.tests
        lines = em.parsed.lines
        printing = sum(
            1
            for t in tests
            # A print call needs the word in the test's lines (decorators included): only
            # those tests are walked.
            if _mentions(lines, t.node, "print")
            and any(
                type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == "print"
                for n in walk(t.node)
            )
        )
        em.print_share = 0.0 if printing <= 2 else printing / max(len(tests), 1)
    return em.print_share <= _PRINT_CONVENTION_SHARE


def _mentions(lines: list[str], node: ast.AST, word: str) -> bool:
    """``word`` occurs in the lines of ``node`` (a def: from its first decorator on)."""
    first: int = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])  # type: ignore[attr-defined]
    last: int = node.end_lineno or first  # type: ignore[attr-defined]
    return any(word in line for line in lines[first - 1 : last])


def written_for_a_reader(call: ast.Call) -> bool:
    """A print meant as output: it starts with text (a banner, a progress line, a labelled
    value: ``print("latency", dur)``, ``f"order: {keys}"``, ``"x = %r" % x``), or prints a
    repr as a check that the repr does not raise. A bare ``print(result)`` is a leftover."""
    if not call.args:
        return False
    first = call.args[0]
    if type(first) is ast.BinOp and type(first.op) is ast.Mod:
        first = first.left
    if type(first) is ast.Constant and isinstance(first.value, str):
        return any(c.isalpha() for c in first.value)
    if type(first) is ast.JoinedStr:
        return any(
            type(v) is ast.Constant and any(c.isalpha() for c in str(v.value)) for v in first.values
        )
    return (
        type(first) is ast.Call
        and type(first.func) is ast.Name
        and first.func.id in ("repr", "str")
        and len(call.args) == 1
    )


def branch_calls(node: ast.AST) -> set[int]:
    """ids of the calls inside an ``if``/``except`` branch of the test (a diagnostic printed
    on a failure path, not a leftover)."""
    out: set[int] = set()
    for branch in walk(node):
        if type(branch) is ast.If or type(branch) is ast.ExceptHandler:
            out.update(id(n) for s in branch.body for n in walk(s) if type(n) is ast.Call)
    return out
