"""exception-handling: try/except or raise in a test instead of the framework's checks.

strict: every try/except with handlers and every raise in the test body. default: the ones
whose fix is clear: handlers that only pass, assert or fail (``pytest.raises``/
``assertRaises`` says it better), or only re-raise (after printing or logging at most: the
exception fails the test by itself), whatever message the failure carries (the judging line,
``bench/data/frozen/README.md``: "try/except only to fail or to re-raise, and try/except/else
to assert an exception, are worth-fixing"). Not reported there: optional-dependency guards
(``except ImportError``), ``try``/``except``/``else`` guards whose else holds the check,
handlers that do real work, and ``raise AssertionError`` (an assertion). Where strict reports
those, the fix is a skip or dropping the try, never ``assertRaises``, which would invert the
test.

Neither profile reports what is no exception handling at all: a try whose block raises the
test's own exception to have one active (``try: raise ValueError / except ValueError:
logger.exception(...)``: the stimulus of a logging or traceback test), a raise fed to a
context manager under test (``with ctx.scope(): raise Boom()``, collected as facts), and a
guard of an optional dependency whose handlers skip explicitly (``except ImportError:
pytest.skip(...)``: reported as a skip, nothing hidden). An ImportError guard that carries
on without the dependency with a substitute check passes whether or not the dependency is
there: both report it (default: not a bare ``pass``, a tidy-up at most).

default, besides: ``raise NotImplementedError`` (an unreachable branch, not a failure) and a
try inside a loop whose handlers only pass, continue or break (a sweep over inputs where the
error is an allowed outcome: "valid or ValueError" for every truncation).
"""

from __future__ import annotations

import ast

from tools.test_analysis.rules.common import Emitter, dotted_name
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.fixes import unparse

__all__ = ["PYTEST_STYLE", "UNITTEST_STYLE", "check_exception_handling"]


def check_exception_handling(
    em: Emitter, facts: TestFacts, unittest: bool, style: dict[str, str]
) -> None:
    """exception-handling for one test (see the module docstring)."""
    looped: set[int] | None = None
    for try_node in facts.tries:
        exc = _handler_names(try_node)
        if _raises_itself(try_node) or (_imports_only(exc) and _only_skips(try_node)):
            continue  # the test's own exception (a stimulus), or a reported skip
        # `except ImportError: pytest.skip(...)` guards an optional dependency: milder.
        guard = _only_skips(try_node) or _imports_only(exc)
        imports = _imports_only(exc)
        # `try: x = obj.__qualname__ except AttributeError: pass else: assertEqual(...)`:
        # the else holds the check and the except is an environment guard
        else_guard = _guarded_else(try_node)
        # `try: f(); self.fail(...) except E as e: <checks on e>` (or `else: pytest.fail`)
        # expects the exception whatever the handler does with it: `pytest.raises(E) as
        # info` / `assertRaises(E) as cm` states it, so default reports it too
        expected = _expects_exception(try_node)
        if not em.rc.strict and imports and not expected and _handlers_only_pass(try_node):
            continue  # default: `except ImportError: pass` (importorskip would say it)
        if not em.rc.strict and not expected and not imports:
            if looped is None:
                looped = _in_loops(facts.test.node)
            if id(try_node) in looped and _handlers_only_pass(try_node):
                continue  # default: an allowed error in a sweep over inputs
        if (
            not em.rc.strict
            and not expected
            and not imports
            and (else_guard or not _handlers_only_check(try_node))
            and not _only_fails(try_node)
            and not _only_marks(try_node)
        ):
            continue  # default: a handler doing real work
        if imports and not expected:
            # `except ImportError: pass` skips what needs an optional dependency: the fix
            # is a skip, never pytest.raises(ImportError)
            em.emit_node(
                "exception-handling",
                try_node,
                "The test hides a missing optional dependency with try/except ImportError; "
                "skip explicitly so the report says the check did not run.",
                confidence=0.6,
                context={
                    "construct": "try/except",
                    "line": str(try_node.lineno),  # type: ignore[attr-defined]
                    "exception": exc[0],
                    "expect": '`pytest.importorskip("<module>")`'
                    if not unittest
                    else "an import guarded by `self.skipTest(...)`",
                    "explicit": style["explicit"],
                    "raises_example": 'module = pytest.importorskip("cytoolz")'
                    if not unittest
                    else "try:\n    import cytoolz\nexcept ImportError:\n"
                    '    self.skipTest("cytoolz is not installed")',
                },
            )
            continue
        if else_guard:
            em.emit_node(
                "exception-handling",
                try_node,
                f"The test skips its check silently when {exc[0]} is raised; skip "
                "explicitly so the report says the check did not run.",
                confidence=0.6,
                context={
                    "construct": "try/except",
                    "line": str(try_node.lineno),  # type: ignore[attr-defined]
                    "exception": exc[0],
                    "expect": "an explicit skip (`self.skipTest(...)` / `pytest.skip(...)`)",
                    "explicit": style["explicit"],
                    "raises_example": 'if not hasattr(original, "__qualname__"):\n'
                    + (
                        '    self.skipTest("no __qualname__ here")'
                        if unittest
                        else '    pytest.skip("no __qualname__ here")'
                    ),
                },
            )
            continue
        if _only_fails(try_node):
            # `try: x() except E: self.fail(...)` expects NO exception: assertRaises would
            # invert it; the fix is to let the exception fail the test by itself
            body = "\n".join(unparse(s) for s in try_node.body[:8])  # type: ignore[attr-defined]
            em.emit_node(
                "exception-handling",
                try_node,
                "The test catches an exception only to fail; without the try/except the "
                "exception fails the test by itself, with its traceback.",
                confidence=0.8,
                context={
                    "construct": "try/except",
                    "line": str(try_node.lineno),  # type: ignore[attr-defined]
                    "exception": exc[0] if exc else "Exception",
                    "expect": "the statements of the try block alone",
                    "explicit": style["explicit"],
                    "raises_example": f"# let any exception fail the test\n{body}",
                },
            )
            continue
        em.emit_node(
            "exception-handling",
            try_node,
            "The test catches exceptions with try/except instead of asserting them with "
            + ("self.assertRaises." if unittest else "pytest.raises."),
            confidence=0.6 if guard else 0.9,
            context={
                "construct": "try/except",
                "line": str(try_node.lineno),  # type: ignore[attr-defined]
                "exception": exc[0] if exc else "Exception",
                **_raises_context(style, exc[0] if exc else "Exception"),
            },
        )
    for raise_node in facts.raises:
        exc_name = dotted_name(raise_node.exc) if raise_node.exc is not None else ""
        if not em.rc.strict and exc_name.rsplit(".", 1)[-1] in _NOT_FAILURES:
            continue  # default: an assertion, or an unreachable branch: not handling
        em.emit_node(
            "exception-handling",
            raise_node,
            "The test raises an exception itself; use "
            + ("self.fail(...)" if unittest else "pytest.fail(...)")
            + " for explicit failures.",
            confidence=0.8,
            context={
                "construct": "raise",
                "line": str(raise_node.lineno),
                "exception": exc_name or "Exception",
                **_raises_context(style, "ValueError", explicit=True),
            },
        )


PYTEST_STYLE = {
    "expect": "`with pytest.raises({exception}):`",
    "explicit": "pytest.fail(...)",
    "raises": "with pytest.raises({exception}):\n    call_that_fails()",
    "fail": 'if not ok:\n    pytest.fail("what went wrong")',
    "print": 'def {test}(capsys):\n    run()\n    assert "done" in capsys.readouterr().out',
}


UNITTEST_STYLE = {
    "expect": "`with self.assertRaises({exception}):`",
    "explicit": "self.fail(...)",
    "raises": "with self.assertRaises({exception}):\n    call_that_fails()",
    "fail": 'if not ok:\n    self.fail("what went wrong")',
    "print": "with contextlib.redirect_stdout(io.StringIO()) as out:\n    run()\n"
    'self.assertIn("done", out.getvalue())',
}


def _raises_context(
    style: dict[str, str], exception: str, explicit: bool = False
) -> dict[str, str]:
    name = exception if exception.replace(".", "").replace("_", "").isalnum() else "Exception"
    return {
        # a raise in the test is an explicit failure: its replacement is fail(), not raises
        "expect": f"`{style['explicit']}`" if explicit else style["expect"].format(exception=name),
        "explicit": style["explicit"],
        "raises_example": style["fail" if explicit else "raises"].format(exception=name),
    }


#: Raised exceptions that are no explicit failure: an assertion, an unreachable branch.
_NOT_FAILURES = frozenset({"AssertionError", "NotImplementedError"})


def _raises_itself(node: ast.AST) -> bool:
    """The try block ends by raising an exception of the test's own (not a failure) that
    its handlers catch: the test makes an exception to have one active."""
    body: list[ast.stmt] = node.body  # type: ignore[attr-defined]
    raised = _own_exception(body)
    if raised is None:
        return False
    caught = set(_handler_names(node))
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
    if (t is ast.Try or t is ast.TryStar) and _raises_itself(last):
        handlers = last.handlers  # type: ignore[attr-defined]
        if all(bool(h.body) and type(h.body[-1]) is ast.Raise for h in handlers):
            return "Exception"  # re-raised from a handler: some exception of the test's
    return None


def _imports_only(exc: list[str]) -> bool:
    return bool(exc) and all(e in ("ImportError", "ModuleNotFoundError") for e in exc)


def _in_loops(node: ast.AST) -> set[int]:
    """ids of the try statements directly in the body of one of the test's loops."""
    out: set[int] = set()
    for n in ast.walk(node):
        if type(n) in (ast.For, ast.AsyncFor, ast.While):
            out.update(id(s) for s in n.body if type(s) in (ast.Try, ast.TryStar))  # type: ignore[attr-defined]
    return out


def _only_marks(node: ast.AST) -> bool:
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


def _handlers_only_pass(node: ast.AST) -> bool:
    """Every handler only passes, continues or breaks, and there is no else."""
    if getattr(node, "orelse", None):
        return False
    return all(
        all(type(s) in (ast.Pass, ast.Continue, ast.Break) for s in h.body)
        for h in node.handlers  # type: ignore[attr-defined]
    )


def _guarded_else(node: ast.AST) -> bool:
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


def _handlers_only_check(node: ast.AST) -> bool:
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


def _only_fails(node: ast.AST) -> bool:
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


def _expects_exception(node: ast.AST) -> bool:
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
    return marker is not None and not _raises_itself(node)


_SKIPS = ("skip", "skipTest", "xfail", "SkipTest", "importorskip")


def _only_skips(node: ast.AST) -> bool:
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
