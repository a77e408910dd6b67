"""Test code out of a chat message: fenced blocks first, else raw ``def test_...`` code.

A fence's info string may name the file (```` ```python tests/test_cart.py ````); otherwise
blocks become ``test_snippet.py``, ``test_snippet_2.py``, ... (names that match the default
test-file patterns, so module-level ``test*`` functions count as tests). Raw code is taken
from its first top-level code line; trailing prose is trimmed until the code parses, and
code that never parses is kept whole so the analysis reports the syntax error. Code may also
start in the middle of a line, after prose ("Review these tests: def test_total(): ..."), as
the offline help suggests: it is taken from the ``def test``/``class Test`` on, but only when
what follows parses and defines a test, so prose that merely mentions "def" is not code.
"""

from __future__ import annotations

import ast
import bisect
import re

from agents.test_analysis.state import SourceEntry
from tools.test_analysis.validation import UnsafePathError, normalize_path

__all__ = ["extract_test_files", "looks_like_tests"]

#: One line that opens (or, with an empty info string, closes) a fence: the marker is the
#: whole run of backticks or tildes, the info string the rest of the line.
_FENCE_LINE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([^\n]*)")
_CODE_START = re.compile(
    r"^(?:import \w|from [\w.]+ import |@\w|class \w|def \w|async def \w|if __name__)"
)
#: A test definition starting mid-line, after prose and a separator (": ", "- ", ...).
_INLINE_TEST = re.compile(
    r"(?:^|(?<=[\s:;,.!?]))(?:async\s+)?(?:def\s+test\w*\s*\(|class\s+Test\w*\s*[(:])"
)
_TESTISH = re.compile(r"\bdef test|\bclass Test|TestCase\b|\bassert\b|\bpytest\b")
_PY_LANGS = {"", "python", "py", "python3", "py3", "pytest", "pycon"}
#: Trailing lines dropped, one at a time, to find where raw code ends and prose starts.
_MAX_TRIM = 40


def looks_like_tests(code: str) -> bool:
    """Whether ``code`` has anything of a test in it (a test def, a TestCase, an assert)."""
    return bool(_TESTISH.search(code))


def _name_from_info(info: str) -> tuple[str, str | None]:
    """(language, file name or None) from a fence's info string."""
    words = info.replace("title=", " ").replace('"', " ").replace("'", " ").split()
    lang = words[0].lower() if words and not words[0].endswith(".py") else ""
    name = next((w for w in words if w.endswith(".py")), None)
    if name is not None:
        try:
            name = normalize_path(name)
        except UnsafePathError:
            name = None
    return lang, name


def _fence_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each closed fence, in order; else the first unterminated one
    (a message cut short still holds code), whose body runs to the end.

    One pass over the lines plus a binary search per opening line for its closing line (the
    next line that is the same marker alone), so O(n log n) in the message's length: a regex
    whose lazy body looks ahead for the closing marker rescans the rest of the message from
    every unclosed opening, which was quadratic (0.6 s for a 16k-character message of them).
    """
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    fences: list[tuple[str, str] | None] = []
    closers: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        match = _FENCE_LINE.fullmatch(line)
        fences.append((match.group(1), match.group(2)) if match else None)
        if match and not match.group(2):
            closers.setdefault(match.group(1), []).append(index)
    blocks: list[tuple[str, str]] = []
    first_open: tuple[str, str] | None = None
    index = 0
    last = len(lines) - 1  # the last line has no newline after it: it opens nothing
    while index < last:
        fence = fences[index]
        if fence is None:
            index += 1
            continue
        marker, info = fence
        if first_open is None:
            first_open = (info, text[starts[index + 1] :])
        candidates = closers.get(marker, [])
        at = bisect.bisect_right(candidates, index)
        if at == len(candidates):
            index += 1
            continue
        close = candidates[at]
        blocks.append((info, text[starts[index + 1] : starts[close]]))
        index = close + 1
    if not blocks and first_open is not None:
        blocks.append(first_open)
    return blocks


def _fenced(text: str) -> list[tuple[str, str | None, str]]:
    blocks = [(*_name_from_info(info), body) for info, body in _fence_blocks(text)]
    return [(lang, name, body) for lang, name, body in blocks if lang in _PY_LANGS]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _defines_test(code: str) -> bool:
    """``code`` parses and defines a test whose body does something (prose such as "def
    test_name(): to define a test" parses too, as a body that is a bare word)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            return _does_something(node.body)
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            return True
    return False


def _does_something(body: list[ast.stmt]) -> bool:
    return any(
        not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Name | ast.Constant)) for s in body
    )


def _inline_code(text: str) -> str | None:
    """Code that starts mid-line after prose: from the test definition on, with trailing
    prose trimmed line by line; None unless it parses and defines a test."""
    for match in _INLINE_TEST.finditer(text):
        lines = text[match.start() :].splitlines()
        for cut in range(min(_MAX_TRIM, len(lines) - 1) + 1):
            code = "\n".join(lines[: len(lines) - cut]).rstrip() + "\n"
            if _defines_test(code):
                return code
        # one line with prose after the code ("def test_x(): assert f() == 1 thanks!")
        words = lines[0].split(" ")
        for cut in range(1, min(_MAX_TRIM, len(words))):
            code = " ".join(words[: len(words) - cut]).rstrip() + "\n"
            if _defines_test(code):
                return code
    return None


def _raw_code(text: str) -> str | None:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return _inline_code(text)
    block = lines[start:]
    for cut in range(min(_MAX_TRIM, len(block) - 1) + 1):
        candidate = block[: len(block) - cut]
        code = "\n".join(candidate).rstrip() + "\n"
        if _parses(code):
            return code
    return "\n".join(block).rstrip() + "\n"


def _default_name(index: int) -> str:
    return "test_snippet.py" if index == 0 else f"test_snippet_{index + 1}.py"


def extract_test_files(text: str) -> list[SourceEntry]:
    """The test code in a chat message, as files to analyse ([] when there is none)."""
    files: list[SourceEntry] = []
    taken: set[str] = set()
    for _lang, name, body in _fenced(text):
        if not body.strip() or not looks_like_tests(body):
            continue
        path = name if name and name not in taken else _default_name(len(files))
        while path in taken:
            path = _default_name(len(files) + len(taken))
        taken.add(path)
        files.append(SourceEntry(path=path, content=body, decode_error=None))
    if files:
        return files
    code = _raw_code(text)
    if code is None or not looks_like_tests(code):
        return []
    return [SourceEntry(path=_default_name(0), content=code, decode_error=None)]
