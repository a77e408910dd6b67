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

from tools.test_analysis.rules.common import Emitter, dotted_name
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.fixes import unparse
from tools.test_analysis.rules.try_statements import (
    expects_exception,
    guarded_else,
    handler_names,
    handlers_only_check,
    handlers_only_pass,
    imports_only,
    in_loops,
    only_fails,
    only_marks,
    only_skips,
    raises_itself,
)

__all__ = ["PYTEST_STYLE", "UNITTEST_STYLE", "check_exception_handling"]


def check_exception_handling(
    em: Emitter, facts: TestFacts, unittest: bool, style: dict[str, str]
) -> None:
    """exception-handling for one test (see the module docstring)."""
    looped: set[int] | None = None
    for try_node in facts.tries:
        exc = handler_names(try_node)
        if raises_itself(try_node) or (imports_only(exc) and only_skips(try_node)):
            continue  # the test's own exception (a stimulus), or a reported skip
        # `except ImportError: pytest.skip(...)` guards an optional dependency: milder.
        guard = only_skips(try_node) or imports_only(exc)
        imports = imports_only(exc)
        # `try: x = obj.__qualname__ except AttributeError: pass else: assertEqual(...)`:
        # the else holds the check and the except is an environment guard
        else_guard = guarded_else(try_node)
        # `try: f(); self.fail(...) except E as e: <checks on e>` (or `else: pytest.fail`)
        # expects the exception whatever the handler does with it: `pytest.raises(E) as
        # info` / `assertRaises(E) as cm` states it, so default reports it too
        expected = expects_exception(try_node)
        if not em.rc.strict and imports and not expected and handlers_only_pass(try_node):
            continue  # default: `except ImportError: pass` (importorskip would say it)
        if not em.rc.strict and not expected and not imports:
            if looped is None:
                looped = in_loops(facts.test.node)
            if id(try_node) in looped and handlers_only_pass(try_node):
                continue  # default: an allowed error in a sweep over inputs
        if (
            not em.rc.strict
            and not expected
            and not imports
            and (else_guard or not handlers_only_check(try_node))
            and not only_fails(try_node)
            and not only_marks(try_node)
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
        if only_fails(try_node):
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
