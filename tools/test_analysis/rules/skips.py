"""ignored-test: skip decorators and marks of a test or class, and the advice for each.

A skip that says why is a decision (default), unless the test has no code of its own (a
placeholder) or its reason names a failure, which an expected failure (xfail) reports the day
it is fixed. Used by :mod:`.body` for tests and by :mod:`.classes` for classes.
"""

from __future__ import annotations

import ast
import re

from tools.test_analysis.parsing import ParsedTree
from tools.test_analysis.rules.common import Emitter, dotted_name

__all__ = ["check_ignored_decorators", "is_empty_body", "skip_advice", "skip_marker"]


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


def skip_advice(conditional: bool, has_reason: bool) -> dict[str, str]:
    """The fix for a skip: ask for a reason only when there is none; for an unconditional
    skip that has one, ask for a condition (or a fix, or deletion)."""
    if conditional:
        return {
            "advice": "add reason=... saying when and why it is skipped",
            "skip_example": '@pytest.mark.skipif(sys.platform == "win32", reason="no fork on '
            'Windows")\ndef test_fork():\n    ...',
        }
    if has_reason:
        return {
            "advice": "it never runs: fix the test and remove the skip, skip it only where "
            "its reason holds (skipif with a condition), or delete it",
            "skip_example": '@pytest.mark.skipif(sys.version_info < (3, 12), reason="needs '
            'the 3.12 API")\ndef test_new_api():\n    ...',
        }
    return {
        "advice": "give it a reason, and a condition if it applies only somewhere (or fix "
        "or delete the test)",
        "skip_example": '@pytest.mark.skip(reason="flaky on CI: issue #123")\n'
        "def test_upload():\n    ...",
    }


def check_ignored_decorators(
    em: Emitter,
    decorators: list[ast.expr],
    subject: str,
    line: int,
    end_line: int,
    *,
    conditional: bool = False,
    placeholder: bool = False,
) -> bool:
    """ignored-test for skip decorators of a test or class; True when skipped unconditionally.

    ``placeholder``: the test has no code of its own (a docstring, ``pass``), so its skip
    reason does not excuse it: it was never written, and reads as a passing test."""
    unconditional = False
    for dec in decorators:
        marker = skip_marker(dec, em.syntax)
        if marker is None:
            continue
        text, marker_conditional, has_reason = marker
        # a skip mark applied inside `if is_pypy:` is conditional too
        conditional_skip = marker_conditional or conditional
        unconditional = unconditional or not conditional_skip
        fails = not conditional_skip and has_reason and _admits_failure(dec)
        if has_reason and (conditional_skip or not (em.rc.strict or placeholder or fails)):
            continue  # default: a skip that says why is a decision, not an oversight
        if fails:
            # "Known failure", "not implemented yet": the test is parked on a defect; an
            # xfail runs it and reports the day it passes, a skip hides it for good
            em.emit(
                "ignored-test",
                dec.lineno,
                dec.end_lineno,
                f"{subject} is skipped by {text} for a failure its reason names, so it never "
                "reports when the failure is fixed.",
                confidence=0.8,
                context={
                    "test": subject,
                    "marker": text,
                    "advice": "mark it as an expected failure (xfail / expectedFailure) so "
                    "it runs and reports when it starts passing",
                    "skip_example": '@pytest.mark.xfail(reason="known failure: issue #123", '
                    "strict=True)\ndef test_upload():\n    ...",
                },
            )
            continue
        if conditional_skip:
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
            context={"test": subject, "marker": text, **skip_advice(conditional_skip, has_reason)},
        )
    return unconditional


#: Words of a skip reason that says the test fails (a defect, not a decision).
_FAILURE_REASON = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|bug(?:gy|s)?|broken|not (?:yet |currently )?implemented|"
    r"known issue|incorrect(?:ly)?|wrong(?:ly)?|regression|todo|fixme)\b",
    re.IGNORECASE,
)


def _admits_failure(dec: ast.expr) -> bool:
    """The skip's reason says the test fails (``@unittest.skip("Known failure")``)."""
    if type(dec) is not ast.Call:
        return False
    texts = [*dec.args, *(k.value for k in dec.keywords if k.arg in ("reason", "msg"))]
    return any(
        type(t) is ast.Constant and isinstance(t.value, str) and _FAILURE_REASON.search(t.value)
        for t in texts
    )
