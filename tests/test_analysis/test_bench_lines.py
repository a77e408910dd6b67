"""The smell benches number a fixture's lines as Python does: a form feed, U+2028 or another
character str.splitlines() breaks at, inside a line, does not shift the labels below it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.strict_f1 import labels

#: What str.splitlines() breaks at that does not end a line of Python source.
NOT_LINE_ENDS = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", NOT_LINE_ENDS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_label_names_the_line_python_numbers(char: str) -> None:
    text = f"def test_a():\n    x = 1  # a{char}b\n    assert x\n    # ^ magic-number-test\n"
    compile(text, "fixture.py", "exec")  # valid Python, four lines
    assert labels(Path("test_fixture.py"), text) == {("test_fixture.py", 3, "magic-number-test")}
