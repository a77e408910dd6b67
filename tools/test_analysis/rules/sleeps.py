"""sleepy-test: a fixed wait in a test.

Not reported: a poll interval in a ``while`` loop, a wait with a comment on its line, and
(default) one explained by a comment above it or counted in the code's own periods
(``sleep(HEARTBEAT * 3)``).
"""

from __future__ import annotations

import ast

from tools.test_analysis.parsing import ParsedFile, TestFunction
from tools.test_analysis.rules.common import Emitter, dotted_name, segment, walk

__all__ = ["polling_sleeps", "sleepy"]


def sleepy(em: Emitter, call: ast.Call, module: str, test: TestFunction) -> None:
    if module != "time":
        delay = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg in ("delay", "seconds")), None)
        )
        if not (
            type(delay) is ast.Constant
            and isinstance(delay.value, int | float)
            and not isinstance(delay.value, bool)
            and delay.value > 0
        ):
            return
    if _has_comment(em.parsed, call):
        return
    if not em.rc.strict and (_explained_above(em.parsed, call) or _periods(call)):
        # default: a comment block on the lines above says why, or the wait is counted in
        # the code's own periods (`HEARTBEAT * 3`): time passing is the premise
        return
    em.emit_node(
        "sleepy-test",
        call,
        f"{test.name} sleeps for a fixed time, which is slow and still flaky.",
        context={"call": segment(em.parsed, call, 60), "test": test.name},
    )


def polling_sleeps(node: ast.AST) -> set[int]:
    """ids of the sleep calls in the body of a ``while`` loop of the test: the interval of a
    poll on a condition (``while not ready(): sleep(0.01)``), not a fixed wait."""
    out: set[int] = set()
    for n in walk(node):
        if type(n) is ast.While:
            out.update(
                id(c)
                for s in n.body
                for c in walk(s)
                if type(c) is ast.Call and dotted_name(c.func).rsplit(".", 1)[-1] == "sleep"
            )
    return out


def _periods(call: ast.Call) -> bool:
    """``sleep(HEARTBEAT * 3)``, ``sleep(stale * 2)``: a count of the code's own periods."""
    delay = call.args[0] if call.args else None
    if type(delay) is not ast.BinOp or type(delay.op) is not ast.Mult:
        return False
    sides = (delay.left, delay.right)
    return any(type(x) is ast.Constant for x in sides) and any(
        type(x) in (ast.Name, ast.Attribute) for x in sides
    )


def _explained_above(parsed: ParsedFile, node: ast.AST) -> bool:
    """The line above the call is a comment (the wait's reason, written on its own line)."""
    line: int = node.lineno  # type: ignore[attr-defined]
    return parsed.line_text(line - 1).lstrip().startswith("#")


def _has_comment(parsed: ParsedFile, node: ast.AST) -> bool:
    line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    text = parsed.line_text(line).encode("utf-8", "surrogatepass")
    return b"#" in text[node.end_col_offset or 0 :]  # type: ignore[attr-defined]
