"""Test-body rules: conditional logic, empty test, exception handling, ignored test, mystery
guest, obscure set-up, redundant print, sleepy test, verbose test."""

from __future__ import annotations

import ast

from agents.test_analysis.parsing import ParsedFile, ParsedTree, TestFunction
from agents.test_analysis.rules.common import Emitter, dotted_name, join_names, segment
from agents.test_analysis.rules.facts import TestFacts
from agents.test_analysis.rules.guests import check_mystery_guests

_CONSTRUCT = {
    ast.If: "if statement",
    ast.For: "for loop",
    ast.AsyncFor: "async for loop",
    ast.While: "while loop",
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
    ast.Match: "match statement",
}
#: Output-capturing fixtures: a test that takes one is testing what gets printed.
_CAPTURE_PARAMS = frozenset({"capsys", "capfd", "capsysbinary", "capfdbinary", "capteesys"})
_OUTPUT_WORDS = ("capture", "print", "output", "stdout", "stderr")


def is_empty_body(body: list[ast.stmt]) -> bool:
    """Only ``pass``, ``...`` and docstrings."""
    for stmt in body:
        if type(stmt) is ast.Pass:
            continue
        if (
            type(stmt) is ast.Expr
            and type(stmt.value) is ast.Constant
            and (stmt.value.value is Ellipsis or isinstance(stmt.value.value, str))
        ):
            continue
        return False
    return True


def skip_marker(expr: ast.expr, syntax: ParsedTree) -> tuple[str, bool, bool] | None:
    """``(marker text, conditional, has_reason)`` when ``expr`` is a skip decorator/mark."""
    call = expr if type(expr) is ast.Call else None
    target = call.func if call is not None else expr
    name = dotted_name(target)
    last = name.rsplit(".", 1)[-1]
    kind = ""
    if name.endswith("mark.skip"):
        kind = "pytest.skip"
    elif name.endswith("mark.skipif"):
        kind = "pytest.skipif"
    elif name in ("unittest.skip", "unittest.skipIf", "unittest.skipUnless"):
        kind = "unittest." + last
    elif type(target) is ast.Name and syntax.unittest_names.get(name) in (
        "skip",
        "skipIf",
        "skipUnless",
    ):
        kind = "unittest." + syntax.unittest_names[name]
    if not kind:
        return None
    args = call.args if call is not None else []
    kwargs = {k.arg for k in call.keywords} if call is not None else set()
    text = "@" + name
    if kind == "pytest.skip":
        return text, False, bool(args) or "reason" in kwargs
    if kind == "pytest.skipif":
        # string conditions double as the reason; boolean ones need reason=
        string_condition = bool(args) and all(
            type(a) is ast.Constant and isinstance(a.value, str) for a in args
        )
        return text, True, "reason" in kwargs or string_condition
    if kind == "unittest.skip":
        # bare @unittest.skip (no call) passes the function itself as the "reason"
        has_reason = call is not None and (bool(args) or "reason" in kwargs)
        return text, False, has_reason
    return text, True, len(args) >= 2 or "reason" in kwargs


def check_ignored_decorators(
    em: Emitter, decorators: list[ast.expr], subject: str, line: int, end_line: int
) -> bool:
    """ignored-test for skip decorators of a test or class; True when skipped unconditionally."""
    unconditional = False
    for dec in decorators:
        marker = skip_marker(dec, em.syntax)
        if marker is None:
            continue
        text, conditional, has_reason = marker
        unconditional = unconditional or not conditional
        if conditional and has_reason:
            continue
        if conditional:
            message = f"{text} on {subject} gives no reason, so nobody knows when it may run."
        elif has_reason:
            message = f"{subject} is skipped unconditionally by {text}, so it never runs."
        else:
            message = f"{subject} is skipped unconditionally by {text} without a reason."
        em.emit(
            "ignored-test",
            dec.lineno,
            dec.end_lineno,
            message,
            confidence=0.8 if has_reason else 1.0,
            context={"test": subject, "marker": text},
        )
    return unconditional


def check_body_rules(em: Emitter, facts: TestFacts) -> tuple[bool, bool]:
    """Run the body rules of one test; returns ``(empty, skipped_unconditionally)``."""
    test = facts.test
    node = test.node
    parsed = em.parsed
    cfg = em.rc.config
    empty = is_empty_body(node.body)
    if empty:
        em.emit(
            "empty-test",
            test.line,
            test.end_line,
            f"{test.name} has no code, so it always passes.",
            context={"test": test.name},
        )
    skipped = False
    if em.on("ignored-test"):
        skipped = check_ignored_decorators(
            em, node.decorator_list, test.name, test.line, test.end_line
        )
        for skip_node, conditional, has_reason in facts.skips:
            if not conditional:
                skipped = True
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself unconditionally, so it never runs.",
                    confidence=0.8 if has_reason else 1.0,
                    context={"test": test.name, "marker": segment(parsed, skip_node, 60)},
                )
            elif not has_reason:
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself without a reason.",
                    confidence=0.9,
                    context={"test": test.name, "marker": segment(parsed, skip_node, 60)},
                )
    if facts.control_hits and em.on("conditional-logic"):
        for ctrl in facts.control_hits.values():
            construct = _CONSTRUCT.get(type(ctrl), "branch")
            inner = _first_assertion_in(facts, ctrl)
            em.emit_node(
                "conditional-logic",
                ctrl,
                f"An assertion inside a {construct} runs only for some inputs or iterations.",
                confidence=0.9,
                context={
                    "construct": construct,
                    "test": test.name,
                    "assertion": segment(parsed, inner) if inner is not None else "...",
                },
            )
    if em.on("exception-handling"):
        for try_node in facts.tries:
            exc = _handler_names(try_node)
            # `except ImportError: pytest.skip(...)` guards an optional dependency: milder.
            guard = _only_skips(try_node) or (
                bool(exc) and all(e in ("ImportError", "ModuleNotFoundError") for e in exc)
            )
            em.emit_node(
                "exception-handling",
                try_node,
                "The test catches exceptions with try/except instead of asserting them with "
                "pytest.raises/assertRaises.",
                confidence=0.6 if guard else 0.9,
                context={
                    "construct": "try/except",
                    "line": str(try_node.lineno),  # type: ignore[attr-defined]
                    "exception": exc[0] if exc else "Exception",
                },
            )
        for raise_node in facts.raises:
            exc_name = dotted_name(raise_node.exc) if raise_node.exc is not None else ""
            em.emit_node(
                "exception-handling",
                raise_node,
                "The test raises an exception itself; use pytest.fail(...) for explicit "
                "failures or pytest.raises for expected errors.",
                confidence=0.8,
                context={
                    "construct": "raise",
                    "line": str(raise_node.lineno),
                    "exception": exc_name or "Exception",
                },
            )
    if facts.guests and em.on("mystery-guest"):
        check_mystery_guests(em, facts)
    if len(facts.assigned) > cfg.obscure_setup_max_locals:
        em.emit(
            "obscure-setup",
            test.line,
            test.end_line,
            f"{test.name} assigns {len(facts.assigned)} local variables (limit "
            f"{cfg.obscure_setup_max_locals}), hiding what the test depends on.",
            confidence=0.8,
            context={
                "test": test.name,
                "count": str(len(facts.assigned)),
                "limit": str(cfg.obscure_setup_max_locals),
                "names": join_names(facts.assigned),
            },
        )
    if facts.prints and not _output_is_subject(em, test):
        for call in facts.prints:
            em.emit_node(
                "redundant-print",
                call,
                "The test prints output that nobody checks.",
                context={"call": segment(parsed, call, 60), "test": test.name},
            )
    for call, module in facts.sleeps:
        _sleepy(em, call, module, test)
    if facts.statements > cfg.verbose_test_max_statements:
        em.emit(
            "verbose-test",
            test.line,
            test.end_line,
            f"{test.name} has {facts.statements} statements (limit "
            f"{cfg.verbose_test_max_statements}), too many to see what it checks.",
            confidence=0.9,
            context={
                "test": test.name,
                "count": str(facts.statements),
                "limit": str(cfg.verbose_test_max_statements),
            },
        )
    return empty, skipped


def _output_is_subject(em: Emitter, test: TestFunction) -> bool:
    """The test checks printed output (capsys & co., or a capture/print test by name)."""
    params = {a.arg for a in test.node.args.args + test.node.args.kwonlyargs}
    if params & _CAPTURE_PARAMS:
        return True
    names = (test.name.lower(), em.parsed.path.rsplit("/", 1)[-1].lower())
    return any(word in text for text in names for word in _OUTPUT_WORDS)


def _first_assertion_in(facts: TestFacts, ctrl: ast.AST) -> ast.AST | None:
    start, end = ctrl.lineno, ctrl.end_lineno or ctrl.lineno  # type: ignore[attr-defined]
    inside = [a.node for a in facts.assertions if start <= a.node.lineno <= end]  # type: ignore[attr-defined]
    return min(inside, key=lambda n: (n.lineno, n.col_offset), default=None)  # type: ignore[attr-defined]


def _only_skips(node: ast.AST) -> bool:
    """Every handler of the try statement skips the test."""
    for handler in node.handlers:  # type: ignore[attr-defined]
        first = handler.body[0] if handler.body else None
        if not (
            type(first) is ast.Expr
            and type(first.value) is ast.Call
            and dotted_name(first.value.func).rsplit(".", 1)[-1] in ("skip", "skipTest", "xfail")
        ):
            return False
    return True


def _handler_names(node: ast.AST) -> list[str]:
    names: list[str] = []
    for handler in node.handlers:  # type: ignore[attr-defined]
        typ = handler.type
        if typ is None:
            names.append("Exception")
        elif type(typ) is ast.Tuple:
            names.extend(dotted_name(e) for e in typ.elts)
        else:
            names.append(dotted_name(typ))
    return names


def _sleepy(em: Emitter, call: ast.Call, module: str, test: TestFunction) -> None:
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
    em.emit_node(
        "sleepy-test",
        call,
        f"{test.name} sleeps for a fixed time, which is slow and still flaky.",
        context={"call": segment(em.parsed, call, 60), "test": test.name},
    )


def _has_comment(parsed: ParsedFile, node: ast.AST) -> bool:
    line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    text = parsed.line_text(line).encode("utf-8", "surrogatepass")
    return b"#" in text[node.end_col_offset or 0 :]  # type: ignore[attr-defined]
