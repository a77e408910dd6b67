"""Test-body rules: conditional logic, empty test, exception handling, ignored test, mystery
guest, obscure set-up, redundant print, sleepy test, verbose test."""

from __future__ import annotations

import ast
import re

from tools.test_analysis.parsing import ParsedFile, ParsedTree, TestFunction
from tools.test_analysis.rules.common import Emitter, dotted_name, join_names, segment, walk
from tools.test_analysis.rules.conditional import check_conditional_logic
from tools.test_analysis.rules.exceptions import (
    PYTEST_STYLE,
    UNITTEST_STYLE,
    check_exception_handling,
)
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.guests import check_mystery_guests

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
        # a skipped test whose only code is the skip (and a docstring) is a placeholder
        skip_calls = {id(n) for n, _, _ in facts.skips}
        placeholder = is_empty_body(
            [s for s in node.body if not (type(s) is ast.Expr and id(s.value) in skip_calls)]
        )
        skipped = check_ignored_decorators(
            em, node.decorator_list, test.name, test.line, test.end_line, placeholder=placeholder
        )
        for skip_node, conditional, has_reason in facts.skips:
            if not conditional:
                skipped = True
                if has_reason and not (em.rc.strict or placeholder):
                    continue
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself unconditionally, so it never runs.",
                    confidence=0.8 if has_reason else 1.0,
                    context={
                        "test": test.name,
                        "marker": segment(parsed, skip_node, 60),
                        **skip_advice(False, has_reason),
                    },
                )
            elif not has_reason:
                em.emit_node(
                    "ignored-test",
                    skip_node,
                    f"{test.name} skips itself without a reason.",
                    confidence=0.9,
                    context={
                        "test": test.name,
                        "marker": segment(parsed, skip_node, 60),
                        **skip_advice(True, False),
                    },
                )
    if facts.control_hits and em.on("conditional-logic"):
        check_conditional_logic(em, facts)
    unittest = test.cls is not None and test.cls.kind == "unittest"
    style = UNITTEST_STYLE if unittest else PYTEST_STYLE
    if em.on("exception-handling"):
        check_exception_handling(em, facts, unittest, style)
    if facts.guests and em.on("mystery-guest"):
        check_mystery_guests(em, facts)
    # default: clear cases only, half as many locals again as the limit
    locals_limit = (
        cfg.obscure_setup_max_locals * (1 if em.rc.strict else 3) // (1 if em.rc.strict else 2)
    )
    if len(facts.assigned) > locals_limit:
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
    # A test that only prints checks nothing whatever its name says; otherwise printing is
    # fine where output is the subject (capsys, test_print_*).
    # default: in a test that asserts, a print is a diagnostic pytest/unittest show only when
    # the test fails; it is noise only in a test that checks nothing else
    # default: a print left in a test that asserts is a leftover debugging aid when printing
    # is rare in the file (pyparsing prints diagnostics in every test by design), the print
    # is on the test's main path (not a diagnostic in an `if`/`except` before failing), goes
    # to the console (not `print(..., file=buf)`, which is code under test) and prints a bare
    # value (`print(resp.text)`), not text written for a reader (a banner, a progress line,
    # a labelled value) or a repr whose printing is the check that it does not raise
    # Only a test that prints asks: the file's print share walks every test of the file.
    report_prints = bool(facts.prints) and (
        not facts.assertions
        or (not _output_is_subject(em, test) and (em.rc.strict or _prints_are_rare(em)))
    )
    if report_prints:
        branched = set() if em.rc.strict or not facts.assertions else _branch_calls(test.node)
        for call in facts.prints:
            if (
                not em.rc.strict
                and facts.assertions
                and (
                    id(call) in branched
                    or any(k.arg == "file" for k in call.keywords)
                    or _written_for_a_reader(call)
                )
            ):
                continue
            em.emit_node(
                "redundant-print",
                call,
                "The test prints output that nobody checks"
                + (" and asserts nothing." if not facts.assertions else "."),
                context={
                    "call": segment(parsed, call, 60),
                    "test": test.name,
                    "print_example": style["print"].format(test=test.name),
                },
            )
    if facts.sleeps:
        polls = _polling_sleeps(node)
        for call, module in facts.sleeps:
            if id(call) not in polls:  # a poll interval in a wait loop is no fixed wait
                _sleepy(em, call, module, test)
    # default (the judging line): a 60+ statement test mixing several behaviours is worth
    # splitting, while a flat table of one-line checks (or one scenario told at length, a
    # long walk through one function) is not; the strict profile counts statements only
    limit = cfg.verbose_test_max_statements
    if em.rc.strict:
        verbose = facts.statements > limit
    else:
        # the count the finding states (the labelers' "60+"), stubs and callbacks included
        verbose = facts.statements >= 2 * limit and _mixes_behaviours(node, facts)
    if verbose:
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


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: default: a test whose checks are this share of its statements is a table of checks.
_TABLE_CHECKS = 2 / 3
#: default: a test whose actions call one function this often (share) walks that function.
_ONE_SUBJECT = 3 / 4
#: default: several behaviours are several act-then-check steps.
_MIN_BEHAVIOURS = 3


def _own_statements(node: ast.AST) -> list[ast.stmt]:
    """The test's statements in source order, compound bodies included, without the defs and
    classes it nests (a stub's or a callback's code)."""
    out: list[ast.stmt] = []
    todo: list[ast.AST] = list(reversed(node.body))  # type: ignore[attr-defined]
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFS):
            continue
        if isinstance(n, ast.stmt):
            out.append(n)
        children = [
            c
            for name in ("body", "orelse", "finalbody", "handlers", "cases")
            for c in getattr(n, name, ())
        ]
        todo.extend(reversed(children))
    return out


def _is_check(stmt: ast.stmt, checks: set[int]) -> bool:
    """One check: an assert, an assertion call, or a ``with pytest.raises(...)`` block."""
    t = type(stmt)
    if t is ast.Assert:
        return True
    if t is ast.Expr:
        value = stmt.value  # type: ignore[attr-defined]
        if type(value) is ast.Await:
            value = value.value
        return id(value) in checks
    if t is ast.With or t is ast.AsyncWith:
        return any(id(i.context_expr) in checks for i in stmt.items)  # type: ignore[attr-defined]
    return False


def _mixes_behaviours(node: ast.AST, facts: TestFacts) -> bool:
    """default: the long test exercises several behaviours, each checked, rather than being a
    flat table of one-line checks (most statements are checks, or its actions call one
    function: ``r = parse(...)`` / ``assert r == ...`` rows) or one scenario told at length
    (building a document, then one comparison): at least three act-then-check steps, and its
    actions spread over several functions."""
    checks = {id(a.node) for a in facts.assertions if not a.nested}
    statements = _own_statements(node)
    inside_checks: set[int] = set()
    steps = 0
    acted = False
    n_checks = 0
    subjects: dict[str, int] = {}
    for stmt in statements:
        if id(stmt) in inside_checks:
            continue
        if _is_check(stmt, checks):
            n_checks += 1
            steps += acted
            acted = False
            inside_checks.update(id(s) for s in ast.walk(stmt) if isinstance(s, ast.stmt))
            continue
        acted = True
        value = getattr(stmt, "value", None)
        if type(value) is ast.Await:
            value = value.value
        if type(value) is ast.Call:
            name = dotted_name(value.func).rsplit(".", 1)[-1]
            subjects[name] = subjects.get(name, 0) + 1
    if n_checks >= _TABLE_CHECKS * len(statements) or steps < _MIN_BEHAVIOURS:
        return False
    calls = sum(subjects.values())
    return not calls or max(subjects.values()) < _ONE_SUBJECT * calls


#: default: printing in more than this share of a file's tests is the file's convention.
_PRINT_CONVENTION_SHARE = 0.2


def _prints_are_rare(em: Emitter) -> bool:
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


def _written_for_a_reader(call: ast.Call) -> bool:
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


def _branch_calls(node: ast.AST) -> set[int]:
    """ids of the calls inside an ``if``/``except`` branch of the test (a diagnostic printed
    on a failure path, not a leftover)."""
    out: set[int] = set()
    for branch in walk(node):
        if type(branch) is ast.If or type(branch) is ast.ExceptHandler:
            out.update(id(n) for s in branch.body for n in walk(s) if type(n) is ast.Call)
    return out


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


def _polling_sleeps(node: ast.AST) -> set[int]:
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
