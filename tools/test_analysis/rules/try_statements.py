"""exception-handling: the shapes of a test's try statements.

What the try block raises of its own (a stimulus, or a "must not get here" marker), which
exceptions the handlers name, and what the handlers do: only pass, check, fail, re-raise,
skip or record that they ran, or guard an ``else`` that holds the check. :mod:`.exceptions`
decides from these which try statements to report and how.
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import dotted_name

__all__ = [
    "expects_exception",
    "guarded_else",
    "handler_names",
    "handlers_only_check",
    "handlers_only_pass",
    "imports_only",
    "in_loops",
    "only_fails",
    "only_marks",
    "only_skips",
    "raises_itself",
]


def raises_itself(node: ast.AST) -> bool:
    """The try block ends by raising an exception of the test's own (not a failure) that
    its handlers catch: the test makes an exception to have one active."""
    body: list[ast.stmt] = node.body  # type: ignore[attr-defined]
    raised = _own_exception(body)
    if raised is None:
        return False
    caught = set(handler_names(node))
    # `try: import x; 1 / 0 except ImportError: pass`: 1 / 0 marks "must not get here"
    return raised == "?" or bool(caught & {raised, "Exception", "BaseException"})


def _own_exception(body: list[ast.stmt]) -> str | None:
    """The exception the block ends by raising of its own: ``raise ValueError("x")``,
    ``1 / 0``, or a try of that kind whose handlers raise again (None otherwise)."""
    if not body:
        return None
    last = body[-1]
    t = type(last)
    if t is ast.Raise:
        exc = last.exc  # type: ignore[attr-defined]
        if exc is None:
            return None
        name = dotted_name(exc.func if type(exc) is ast.Call else exc).rsplit(".", 1)[-1]
        if name in ("AssertionError", "fail", "skip", "SkipTest"):
            return None
        # `raise error` of an exception object the test built: its class is not written
        return name if type(exc) is ast.Call or name[:1].isupper() else "?"
    if t is ast.Expr:
        value = last.value  # type: ignore[attr-defined]
        if (
            type(value) is ast.BinOp
            and type(value.op) in (ast.Div, ast.FloorDiv, ast.Mod)
            and type(value.right) is ast.Constant
            and value.right.value == 0
        ):
            return "ZeroDivisionError"
        return None
    if (t is ast.Try or t is ast.TryStar) and raises_itself(last):
        handlers = last.handlers  # type: ignore[attr-defined]
        if all(bool(h.body) and type(h.body[-1]) is ast.Raise for h in handlers):
            return "Exception"  # re-raised from a handler: some exception of the test's
    return None


def imports_only(exc: list[str]) -> bool:
    return bool(exc) and all(e in ("ImportError", "ModuleNotFoundError") for e in exc)


def in_loops(node: ast.AST) -> set[int]:
    """ids of the try statements directly in the body of one of the test's loops."""
    out: set[int] = set()
    for n in ast.walk(node):
        if type(n) in (ast.For, ast.AsyncFor, ast.While):
            out.update(id(s) for s in n.body if type(s) in (ast.Try, ast.TryStar))  # type: ignore[attr-defined]
    return out


def only_marks(node: ast.AST) -> bool:
    """Every handler only records that it ran (``raised = True``, ``echo("interrupted")``)
    for a later assertion: the test expects the exception, which ``pytest.raises`` says."""
    if getattr(node, "orelse", None):
        return False
    marked = False
    for handler in node.handlers:  # type: ignore[attr-defined]
        for stmt in handler.body:
            if type(stmt) is ast.Pass:
                continue
            if (
                type(stmt) is ast.Assign
                and all(type(t) is ast.Name for t in stmt.targets)
                and type(stmt.value) is ast.Constant
            ):
                marked = True
                continue
            if (
                type(stmt) is ast.Expr
                and type(stmt.value) is ast.Call
                and stmt.value.args
                and all(type(a) is ast.Constant for a in stmt.value.args)
                and not stmt.value.keywords
            ):
                marked = True
                continue
            return False
    return marked


def handlers_only_pass(node: ast.AST) -> bool:
    """Every handler only passes, continues or breaks, and there is no else."""
    if getattr(node, "orelse", None):
        return False
    return all(
        all(type(s) in (ast.Pass, ast.Continue, ast.Break) for s in h.body)
        for h in node.handlers  # type: ignore[attr-defined]
    )


def guarded_else(node: ast.AST) -> bool:
    orelse = getattr(node, "orelse", None)
    if not orelse:
        return False
    handlers = node.handlers  # type: ignore[attr-defined]
    only_pass = all(all(type(s) is ast.Pass for s in h.body) for h in handlers)
    # `else: assert False, "should have raised"` / `else: self.fail(...)` is the expected-
    # exception pattern (pytest.raises), not a guard: the else must check something real
    checks = any(
        (type(n) is ast.Assert and not (type(n.test) is ast.Constant and not n.test.value))
        or (type(n) is ast.Call and dotted_name(n.func).rsplit(".", 1)[-1].startswith("assert"))
        for s in orelse
        for n in ast.walk(s)
    )
    return only_pass and checks


def handlers_only_check(node: ast.AST) -> bool:
    """Every handler only passes, asserts or fails: the try/except stands in for
    ``pytest.raises``/``assertRaises`` (or for nothing)."""
    for handler in node.handlers:  # type: ignore[attr-defined]
        for stmt in handler.body:
            if type(stmt) is ast.Pass or type(stmt) is ast.Assert:
                continue
            if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant:
                continue
            if type(stmt) is ast.Expr and type(stmt.value) is ast.Call:
                name = dotted_name(stmt.value.func).rsplit(".", 1)[-1]
                if name.startswith(("assert", "fail")):
                    continue
            return False
    return True


def only_fails(node: ast.AST) -> bool:
    """Every handler fails the test and the try block itself does not: the test expects
    the block to run without an exception."""

    def fails(stmts: list[ast.stmt]) -> bool:
        for n in (x for s in stmts for x in ast.walk(s)):
            if type(n) is ast.Call and dotted_name(n.func).rsplit(".", 1)[-1] == "fail":
                return True
            if (
                type(n) is ast.Raise
                and n.exc is not None
                and "AssertionError"
                in dotted_name(n.exc.func if type(n.exc) is ast.Call else n.exc)
            ):
                return True
        # a handler that only re-raises (`except E: raise`) fails the test the same way
        return bool(stmts) and all(type(s) is ast.Raise and s.exc is None for s in stmts)

    handlers = node.handlers  # type: ignore[attr-defined]
    return (
        bool(handlers)
        and all(fails(h.body) or _reraises(h.body) for h in handlers)
        and not fails(node.body)  # type: ignore[attr-defined]
    )


#: Calls that only report what happened (a handler that prints, logs or dumps the traceback
#: before re-raising still only re-raises).
_DIAGNOSTICS = frozenset(
    {"print", "print_exc", "print_exception", "format_exc", "debug", "info", "warning",
     "error", "exception", "log"}
)  # fmt: skip


def _reraises(stmts: list[ast.stmt]) -> bool:
    """The handler ends by raising again (``raise``, ``raise RuntimeError(...) from exc``),
    after nothing but diagnostics: the test fails as it would without the try, which the
    judging line calls a try/except only to re-raise. A skip raised is no failure."""
    if not stmts or type(stmts[-1]) is not ast.Raise:
        return False
    exc = stmts[-1].exc
    if exc is not None:
        name = dotted_name(exc.func if type(exc) is ast.Call else exc).rsplit(".", 1)[-1]
        if name in _SKIPS or name.startswith("Skip") or name == "StopIteration":
            return False
    return all(
        type(s) is ast.Expr
        and type(s.value) is ast.Call
        and dotted_name(s.value.func).rsplit(".", 1)[-1] in _DIAGNOSTICS
        for s in stmts[:-1]
    )


def _is_fail(stmt: ast.stmt) -> bool:
    """``self.fail(...)`` / ``pytest.fail(...)``, ``assert False`` or ``raise AssertionError``."""
    if type(stmt) is ast.Expr and type(stmt.value) is ast.Call:
        return dotted_name(stmt.value.func).rsplit(".", 1)[-1] == "fail"
    if type(stmt) is ast.Assert:
        return type(stmt.test) is ast.Constant and not stmt.test.value
    if type(stmt) is ast.Raise and stmt.exc is not None:
        exc = stmt.exc.func if type(stmt.exc) is ast.Call else stmt.exc
        return dotted_name(exc).rsplit(".", 1)[-1] == "AssertionError"
    return False


def expects_exception(node: ast.AST) -> bool:
    """The try block ends by failing, or its ``else`` fails: the test fails unless a handled
    exception is raised, which is what ``pytest.raises``/``assertRaises`` express."""
    handlers = getattr(node, "handlers", None)
    if not handlers:
        return False
    body: list[ast.stmt] = node.body  # type: ignore[attr-defined]
    orelse: list[ast.stmt] = getattr(node, "orelse", [])
    if _is_fail(body[-1]) or (bool(orelse) and _is_fail(orelse[-1])):
        return True
    # `try: import x; 1 / 0 except ImportError: pass`: an exception no handler catches marks
    # "must not get here", a failure
    marker = _own_exception(body)
    return marker is not None and not raises_itself(node)


_SKIPS = ("skip", "skipTest", "xfail", "SkipTest", "importorskip")


def only_skips(node: ast.AST) -> bool:
    """Every handler of the try statement skips the test (``pytest.skip(...)``, ``raise
    pytest.skip(...)``, ``raise unittest.SkipTest(...)``, ``self.skipTest(...)``)."""
    handlers = node.handlers  # type: ignore[attr-defined]
    for handler in handlers:
        first = handler.body[0] if handler.body else None
        call = None
        if type(first) is ast.Expr:
            call = first.value
        elif type(first) is ast.Raise:
            call = first.exc
        target = call.func if type(call) is ast.Call else call
        if target is None or dotted_name(target).rsplit(".", 1)[-1] not in _SKIPS:
            return False
    return bool(handlers)


def handler_names(node: ast.AST) -> list[str]:
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
