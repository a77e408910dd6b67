"""Per-smell fix texts: a generic suggestion, a context-filled suggestion and a code example.

Templates use ``str.format`` fields that rules put into ``Finding.context`` (``{test}``,
``{assertion}``, ``{fields}``, ...). A template whose fields are missing from a finding's
context falls back to the generic text, so LLM findings (no context) still get a fix.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FixTemplate:
    """Suggestion and example texts for one smell."""

    generic: str
    suggestion: str
    example: str
    generic_example: str


T = FixTemplate

TEMPLATES: dict[str, FixTemplate] = {
    "assertion-roulette": T(
        "Give each assertion a message (or split the test) so a failure says what it checked.",
        "{test} has {count} assertions, {unlabelled} without a message: give each a message "
        "that says what it checks, such as `{fixed}`, or split the test into one test per "
        "behaviour.",
        "# before\n{original}\n# after\n{fixed}",
        'assert total == 3, "total after adding three items"\n'
        'self.assertTrue(cart.is_empty(), msg="cart is empty after checkout")',
    ),
    "conditional-logic": T(
        "Make every case an always-run check: parametrise independent cases, assert on whole "
        "collections, or split branches into separate tests.",
        "The {construct} around `{assertion}`: {advice}.",
        "{code}",
        "items = list(parse(text))\nassert items == expected_items",
    ),
    "constructor-init": T(
        "Move the constructor's set-up into setUp (unittest) or a fixture (pytest).",
        "Move the code of {cls}.__init__ into setUp (unittest) or an autouse fixture; test "
        "runners construct test classes themselves (pytest does not collect classes with "
        "__init__ at all).",
        "class {cls}(unittest.TestCase):\n    def setUp(self):\n        ...  # was __init__",
        "class TestThing(unittest.TestCase):\n    def setUp(self):\n        self.thing = Thing()",
    ),
    "default-test": T(
        "Rename the class after the behaviour it tests.",
        "Rename {cls} after the unit it tests (for example TestInvoiceTotals) so reports and "
        "-k selections are meaningful.",
        "class TestInvoiceTotals(unittest.TestCase):  # named after the unit it tests\n    ...",
        "class TestInvoiceTotals(unittest.TestCase):\n    ...",
    ),
    "duplicate-assert": T(
        "Remove the repeated assertion, or split the test if the repeat checks a later state.",
        "`{assertion}` repeats line {first_line} and reads the same state: remove the repeat "
        "(it has no side effect), or if it was meant to check the state after another "
        "action, add that action between the two.",
        "# keep the first one, drop the repeat:\n{code}",
        "def test_push_then_pop():\n    stack.push(1)\n    assert stack.pop() == 1",
    ),
    "empty-test": T(
        "Implement the test or delete it; an empty test always passes.",
        "{test} has no code, so it always passes: implement it, or delete it (or mark it "
        "@pytest.mark.skip(reason=...) while it is pending).",
        "def {test}():\n    result = subject()\n    assert result == expected",
        'def test_parse_empty():\n    assert parse("") == []',
    ),
    "exception-handling": T(
        "Use pytest.raises / self.assertRaises instead of try/except or raise in the test.",
        "Replace the {construct} on line {line} with {expect}; use {explicit} for explicit "
        "failures.",
        "{raises_example}",
        'with pytest.raises(ValueError, match="negative"):\n    sqrt(-1)',
    ),
    "general-fixture": T(
        "Keep only what every test needs in the shared fixture; build the rest in the tests "
        "that use it.",
        "{setup} sets {fields} for every test, but {unused_by} of {tests} tests do not use "
        "all of them: build them in the tests (or a dedicated fixture or helper) that need "
        "them.",
        "{fixture_example}",
        "@pytest.fixture\ndef db():\n    return make_db()",
    ),
    "ignored-test": T(
        "Give the skip a reason (and a condition), or fix or delete the test.",
        "{marker} on {test}: {advice}.",
        "{skip_example}",
        '@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")\n'
        "def test_fork():\n    ...",
    ),
    "lack-of-cohesion": T(
        "Split the class so each class tests one unit.",
        "The tests of {cls} share little vocabulary (cohesion {cohesion}, where 0 means "
        "unrelated): split them into classes (or modules) per unit under test.",
        "class Test{cls_stem}Parsing:\n    ...\n\nclass Test{cls_stem}Rendering:\n    ...",
        "class TestParser:\n    ...\n\nclass TestRenderer:\n    ...",
    ),
    "magic-number": T(
        "Name the number (a constant or a variable) so the assertion explains itself.",
        "Replace {numbers} in `{assertion}` with a name that says what the value means, such "
        "as {constant}.",
        "{definition}\n{fixed}",
        "EXPECTED_ROWS = 42\nassert len(rows) == EXPECTED_ROWS",
    ),
    "mystery-guest": T(
        "Use tmp_path (files), mocks or fakes (network, databases) instead of real resources.",
        "`{call}` uses a real {resource}: create the data in tmp_path / tmp_path_factory, or "
        "replace the {resource} with a mock or an in-memory fake.",
        "{guest_example}",
        'def test_reads_config(tmp_path):\n    path = tmp_path / "config.toml"\n'
        '    path.write_text("debug = true")\n    assert load(path).debug',
    ),
    "obscure-setup": T(
        "Move the in-line set-up into fixtures or a builder so the test shows only what matters.",
        "{test} assigns {count} local variables (limit {limit}): move set-up into fixtures or "
        "a helper/builder and keep only the values the assertion depends on.",
        "@pytest.fixture\ndef order():\n    return make_order(items=3)\n\n"
        "def {test}(order):\n    assert order.total == 30",
        "@pytest.fixture\ndef order():\n    return make_order(items=3)",
    ),
    "redundant-assertion": T(
        "Assert on the code under test; an assertion with a fixed outcome checks nothing.",
        "`{assertion}` {reason}: assert on a value produced by the code under test instead.",
        "# before\n{code}\n# after\nassert result == expected",
        "assert compute() == 42",
    ),
    "redundant-print": T(
        "Remove the print; assert on the value, use logging, or capture output with capsys.",
        "Remove `{call}`: assert on the value instead, or if output is the behaviour under "
        "test, capture it and assert on it.",
        "{print_example}",
        'def test_cli(capsys):\n    main()\n    assert "done" in capsys.readouterr().out',
    ),
    "sensitive-equality": T(
        "Compare the object's fields (or the object itself), not its str()/repr() text.",
        "`{assertion}` compares {func}() output, which breaks on any formatting change: "
        "compare the value itself (or its fields).",
        "{compare_example}",
        "assert point == Point(1, 2)",
    ),
    "sleepy-test": T(
        "Wait for the condition (poll with a timeout, an event, or a fake clock), not a fixed "
        "sleep.",
        "Replace `{call}` with waiting for the condition (poll with a deadline, an Event, or a "
        "fake clock); if the sleep is needed, say why in a comment on that line.",
        "deadline = time.monotonic() + 5\nwhile not ready() and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\nassert ready()",
        "assert event.wait(timeout=5)",
    ),
    "suboptimal-assert": T(
        "Use the specific assertion so the failure message shows both values.",
        "Use `{fixed}` instead of `{assertion}`: {why}.",
        "# before\n{original}\n# after\n{fixed}",
        "self.assertEqual(result, expected)",
    ),
    "test-maverick": T(
        "Move the test out of the class (it uses none of setUp's fields) so it does not pay "
        "for them.",
        "{advice}",
        "def {test_plain}():\n    ...  # no longer runs the class's set-up",
        "def test_standalone():\n    assert helper() == 1",
    ),
    "unknown-test": T(
        "Add an assertion that checks the outcome; a test without one passes whenever nothing "
        "raises.",
        "{test} has no assertion: assert on the result it computes (or add the project's "
        "assertion helper to assertion_helpers if it uses one).",
        "def {test}():\n    result = subject()\n    assert result == expected",
        "assert result == expected",
    ),
    "verbose-test": T(
        "Split the test, or move set-up into fixtures, so each test checks one behaviour.",
        "{test} has {count} statements (limit {limit}): split it into focused tests and move "
        "shared set-up into fixtures.",
        "def {test}_part_one(fixture):\n    ...\n\ndef {test}_part_two(fixture):\n    ...",
        "def test_create(user):\n    ...\n\ndef test_delete(user):\n    ...",
    ),
    "syntax-error": T(
        "Fix the syntax error; none of the file's tests can run until it parses.",
        "Fix the syntax error at line {line}: {error}",
        "",
        "",
    ),
    "encoding-error": T(
        "Re-save the file as UTF-8 (or declare its encoding with a coding cookie).",
        "{error}",
        "# -*- coding: latin-1 -*-",
        "# -*- coding: latin-1 -*-",
    ),
}


def generic_suggestion(smell_id: str) -> str:
    """The context-free suggestion for ``smell_id`` ('' for unknown ids)."""
    template = TEMPLATES.get(smell_id)
    return template.generic if template else ""


def render(template: str, context: dict[str, str]) -> str | None:
    """``template`` filled from ``context``; None when a field is missing."""
    try:
        return template.format_map(context)
    except (KeyError, IndexError, ValueError):
        return None
