"""Hypothesis: no input text crashes the analysis; a file that does not parse yields exactly
one syntax-error finding at its line, and the other files of the call are still analysed."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_analysis.test_smells import NEGATIVE, POSITIVE
from tools.test_analysis.batches import batch_tests_for_llm
from tools.test_analysis.catalogue import SYNTAX_ERROR
from tools.test_analysis.enhance import enhance
from tools.test_analysis.parsing import parse_file
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig, SourceFile

# Invalid code makes the parser warn (invalid escape sequences, "is" with a literal, ...).
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GOOD = "def test_a():\n    run()\n\ndef test_b():\n    assert compute() == 42\n"

# Pieces of Python that exercise the rules when glued together at random.
FRAGMENTS = [
    "def test_x(",
    "def test_y(self",
    "):",
    ")",
    "(",
    "\n",
    "\n    ",
    "\n        ",
    "    ",
    "class TestA",
    "class MyTestCase(unittest.TestCase):",
    "(unittest.TestCase)",
    ":",
    "assert ",
    "assert x == x",
    "self.assertEqual(",
    "self.assertTrue(",
    "a == b",
    ", ",
    "pytest.raises(ValueError)",
    "with ",
    " as e",
    "try:",
    "except:",
    "except E as e:",
    "finally:",
    "raise ",
    "for i in range(3):",
    "while x:",
    "if x:",
    "else:",
    "[",
    "]",
    "{",
    "}",
    "lambda: ",
    "print(x)",
    "time.sleep(1)",
    "open('data.txt')",
    "42",
    "-3.5",
    "'str'",
    '"""doc"""',
    "pass",
    "...",
    "return",
    "yield",
    "await ",
    "async def test_z():",
    "@pytest.mark.skip",
    "@unittest.skip('r')",
    "# noqa",
    "# noqa: magic-number",
    "#",
    "self.x = 1",
    "def setUp(self):",
    "def __init__(self):",
    "x = ",
    "=",
    "str(x)",
    "repr(x) == 'x'",
    "import pytest",
    "import unittest",
    "from time import sleep",
    "pytest.skip()",
    "self.skipTest('x')",
    "match x:",
    "case 1:",
    "\\",
    "\t",
    "\r\n",
    "\x00",
    "é",
    "\ufeff",
    "x[::2]",
    "f'{x}'",
    "**",
    "not ",
    " in ",
    " is None",
    "global x",
]

python_ish = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
snippets = [textwrap.dedent(c[2]).lstrip("\n") for c in POSITIVE + NEGATIVE]


@st.composite
def mutated_snippet(draw: st.DrawFn) -> str:
    """A real test snippet with a few random cuts and insertions."""
    text = draw(st.sampled_from(snippets))
    for _ in range(draw(st.integers(0, 3))):
        if not text:
            break
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + text[at + draw(st.integers(1, 10)) :]
        else:
            text = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
    return text


def _check_alone(text: str) -> None:
    parsed = parse_file("tests/test_fuzz.py", text, cache=None)
    findings = check_file(parsed, strict=True)  # a rule bug raises here instead of logging
    strict = check_file(parsed, AnalysisConfig(profile="strict"), strict=True)
    for finding in enhance([*findings, *strict], {"tests/test_fuzz.py": parsed}):
        if finding.example:
            ast.parse(finding.example)  # fixes are valid code, whatever the input
    batch_tests_for_llm([parsed], 5)
    for f in findings:
        assert 1 <= f.line <= f.end_line


def _syntax_property(text: str) -> None:
    """Either the text parses, or exactly one syntax-error finding at its line; the good file
    beside it is analysed exactly as it is alone."""
    source = text.removeprefix("\ufeff")
    expected_line: int | None
    try:
        ast.parse(source)
        expected_line = None
    except SyntaxError as exc:
        expected_line = exc.lineno or 1
    except (ValueError, RecursionError, MemoryError):
        expected_line = -1  # too deep and the like: some line, still one finding
    if expected_line is not None and "\x00" in source:
        # Python blames line 1 for a NUL anywhere; the finding names the NUL's own line.
        expected_line = source.count("\n", 0, source.index("\x00")) + 1
    result = analyze_files(
        [
            SourceFile(path="tests/test_fuzz.py", content=text),
            SourceFile(path="tests/test_good.py", content=GOOD),
        ],
        AnalysisConfig(profile="strict"),
        cache=None,
    )
    fuzz = [i for i in result.issues if i.file == "tests/test_fuzz.py"]
    if expected_line is not None:
        assert [i.smell for i in fuzz] == [SYNTAX_ERROR]
        if expected_line > 0:
            assert fuzz[0].line == max(expected_line, 1)
        assert result.files[0].status == SYNTAX_ERROR
    else:
        assert SYNTAX_ERROR not in {i.smell for i in fuzz}
    good = [(i.line, i.smell) for i in result.issues if i.file == "tests/test_good.py"]
    assert good == [(1, "unknown-test"), (5, "magic-number")]
    assert [f.path for f in result.files] == ["tests/test_fuzz.py", "tests/test_good.py"]


@SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text: str) -> None:
    _check_alone(text)
    _syntax_property(text)


@SETTINGS
@given(python_ish)
def test_python_ish_text_never_crashes(text: str) -> None:
    _check_alone(text)
    _syntax_property(text)


@SETTINGS
@given(mutated_snippet())
def test_mutated_real_tests_never_crash(text: str) -> None:
    _check_alone(text)
    _syntax_property(text)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    result = analyze_files(
        [
            SourceFile(path="tests/test_fuzz.py", content=data),
            SourceFile(path="tests/test_good.py", content=GOOD),
        ],
        cache=None,
    )
    assert result.files[0].status in ("ok", "syntax-error", "encoding-error")
    assert len(result.files) == 2


def test_deeply_nested_source_is_a_syntax_error_not_a_crash() -> None:
    deep = "def test_x():\n    assert " + "(" * 300 + "1" + ")" * 300 + "\n"
    result = analyze_files([SourceFile(path="tests/test_deep.py", content=deep)], cache=None)
    assert [i.smell for i in result.issues] == [SYNTAX_ERROR]
    longer = "def test_x():\n    assert " + "1 + " * 20000 + "1 == 2\n"
    result = analyze_files([SourceFile(path="tests/test_long.py", content=longer)], cache=None)
    assert len(result.files) == 1  # parsed or reported, never raised


def test_nul_byte_reports_its_line() -> None:
    result = analyze_files(
        [SourceFile(path="tests/test_nul.py", content="x = 1\ny = 2\0\n")], cache=None
    )
    [issue] = result.issues
    assert (issue.smell, issue.line) == (SYNTAX_ERROR, 2)
