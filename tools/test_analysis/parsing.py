"""Parsing: source text -> :class:`ParsedFile` (AST, discovered tests and test classes).

Discovery follows SMELLS.md: a *test* is a ``test*`` function at module level of a test file
(names matching ``test_file_patterns``), a ``test*`` method of a ``Test*`` class, or a
``test*`` method of a ``unittest.TestCase`` subclass (any base whose name ends in
``TestCase``, or a class of the same file that is one). Discovery looks only at module and
class bodies; rules walk test bodies later, once each.

:func:`parse_file` never raises: a file that does not parse gets ``error`` set (a
``syntax-error`` finding at its line) and no tests.

Memory and GC: a :class:`ParsedFile` is light (text, line count, test spans). The AST with
its node-level discovery lives in :class:`ParsedTree`, which the parse cache never keeps:
holding thousands of AST nodes makes every full garbage-collection pass traverse them
(measured on numpy's suite: parsing with the trees kept alive took 2.7x as long). What the
cache keeps instead is the light file plus the rule findings per config (``rule_memo``), so a
hit skips parsing *and* the rules.

Over 400 lines because it is one parser: the parsed-file records and the discovery that fills them
share the rules of what a test and a test class are.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.test_analysis.cache import DEFAULT_PARSE_CACHE, ParseCache, cache_key

__all__ = [
    "DEFAULT_TEST_FILE_PATTERNS",
    "ParseError",
    "ParseStats",
    "ParsedFile",
    "ParsedTree",
    "TestClass",
    "TestFunction",
    "TestInfo",
    "parse_file",
]

DEFAULT_TEST_FILE_PATTERNS: tuple[str, ...] = ("test_*.py", "*_test.py")
#: Libraries that intercept HTTP requests in-process.
HTTP_DOUBLES = frozenset(
    {"responses", "respx", "requests_mock", "httpretty", "aioresponses", "pook", "vcr",
     "pytest_httpserver", "pytest_httpx"}
)  # fmt: skip

#: Methods whose ``self.x = ...`` assignments are the class's fixture fields.
SETUP_METHODS = frozenset(
    {"setUp", "asyncSetUp", "setUpClass", "setup_method", "setup_class", "setup"}
)
#: Methods that only tear fixtures down; a field they read is infrastructure, not test data.
TEARDOWN_METHODS = frozenset(
    {"tearDown", "asyncTearDown", "tearDownClass", "teardown_method", "teardown_class", "teardown"}
)

_FuncDef = ast.FunctionDef | ast.AsyncFunctionDef
_LINE_SPLIT = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why a file did not parse: message and 1-based line range."""

    message: str
    line: int
    end_line: int


@dataclass(eq=False, slots=True)
class TestClass:
    """A ``Test*`` class or ``TestCase`` subclass."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    qualname: str
    node: ast.ClassDef
    kind: str  # "unittest" | "pytest"
    methods: dict[str, _FuncDef] = field(default_factory=dict)
    #: Number of tests. Deliberately not the list of tests: TestFunction.cls points here, and
    #: a cycle would keep the whole AST alive until a full GC pass instead of freeing it on
    #: the spot by reference counting.
    test_count: int = 0
    setup_methods: list[_FuncDef] = field(default_factory=list)
    teardown_methods: list[_FuncDef] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class TestFunction:
    """One discovered test."""

    __test__ = False

    name: str
    qualname: str
    node: _FuncDef
    cls: TestClass | None = None

    @property
    def line(self) -> int:
        """Line of the ``def`` (where test-level findings and their ``# noqa`` sit)."""
        return self.node.lineno

    @property
    def start_line(self) -> int:
        """First line including decorators (for extracting the source)."""
        decorators = self.node.decorator_list
        return min([self.node.lineno, *(d.lineno for d in decorators)])

    @property
    def end_line(self) -> int:
        """Last line of the function."""
        return self.node.end_lineno or self.node.lineno


@dataclass(frozen=True, slots=True)
class TestInfo:
    """A discovered test without its AST: what planning, batching and enhancement need."""

    __test__ = False

    name: str
    qualname: str
    line: int
    start_line: int
    end_line: int
    class_name: str | None = None


@dataclass(eq=False, slots=True)
class ParsedTree:
    """The AST of a file and its node-level discovery (what the rules walk)."""

    tree: ast.Module
    tests: list[TestFunction] = field(default_factory=list)
    classes: list[TestClass] = field(default_factory=list)
    #: Module-level functions that are not tests (candidate assertion helpers, fixtures).
    functions: dict[str, _FuncDef] = field(default_factory=dict)
    #: Local names bound by ``from pytest import x [as y]``: local name -> pytest attribute.
    pytest_names: dict[str, str] = field(default_factory=dict)
    #: Local names bound to ``sleep`` functions: local name -> module ("time", "asyncio", ...).
    sleep_names: dict[str, str] = field(default_factory=dict)
    #: Local names bound by ``from unittest import skip/skipIf/skipUnless/SkipTest``.
    unittest_names: dict[str, str] = field(default_factory=dict)
    #: ``pytestmark = ...`` assignments at module level (ignored-test checks them).
    module_marks: list[ast.Assign] = field(default_factory=list)
    #: The module imports an HTTP-mocking library (responses, respx, ...): its requests go
    #: to that double once it is activated (a decorator, a fixture, set-up).
    http_doubles: bool = False
    #: ids of the ``pytestmark`` assignments made inside an ``if`` (a conditional skip).
    conditional_marks: set[int] = field(default_factory=set)
    #: Every class defined at module level, test class or not, by name: helpers and
    #: fixtures inherited from a base class of the same file are looked up here.
    all_classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    #: Module-level ``NAME = <str or bytes literal>`` constants (mystery-guest resolves URLs
    #: and paths through them).
    constants: dict[str, str] = field(default_factory=dict)
    #: Module-level names bound to a literal list/tuple/set/dict (a table of test cases).
    tables: set[str] = field(default_factory=set)
    #: Names imported from the test suite's own package (``from . import util``, ``from
    #: tests.helpers import make``): support code, not the code under test.
    suite_names: set[str] = field(default_factory=set)


@dataclass(eq=False, slots=True)
class ParsedFile:
    """A parsed source file. Shared through the parse cache: treat as read-only.

    ``syntax`` holds the AST only in the object :func:`parse_file` just built; the cached copy
    has ``syntax=None`` and :meth:`syntax_tree` parses again when the rules need it (unless
    their findings for the config are already in ``rule_memo``).
    """

    path: str
    content: str
    line_count: int
    error: ParseError | None = None
    is_test_file: bool = False
    test_file_patterns: tuple[str, ...] = DEFAULT_TEST_FILE_PATTERNS
    tests: list[TestInfo] = field(default_factory=list)
    syntax: ParsedTree | None = None
    #: Rule findings per AnalysisConfig, shared by every copy of this file (see rules).
    rule_memo: dict[Any, Any] = field(default_factory=dict)
    _lines: list[str] | None = None

    @property
    def ok(self) -> bool:
        """True when the file parsed."""
        return self.error is None

    @property
    def lines(self) -> list[str]:
        """Source lines split the way the tokenizer counts them (``\\n``, ``\\r\\n``, ``\\r``)."""
        if self._lines is None:
            self._lines = _LINE_SPLIT.split(self.content)
        return self._lines

    def line_text(self, line: int) -> str:
        """Text of 1-based ``line`` ('' when out of range)."""
        lines = self.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def segment(self, start_line: int, end_line: int) -> str:
        """Source of lines ``start_line..end_line`` inclusive."""
        return "\n".join(self.lines[max(start_line, 1) - 1 : end_line])

    def syntax_tree(self) -> ParsedTree | None:
        """The AST and its discovery: the one held, or a fresh parse (not stored). None when
        the file does not parse."""
        if self.syntax is not None:
            return self.syntax
        if self.error is not None:
            return None
        return _parse_uncached(self.path, self.content, self.test_file_patterns).syntax

    def light(self) -> ParsedFile:
        """A copy without the AST (what the cache stores); shares ``rule_memo``."""
        return ParsedFile(
            self.path,
            self.content,
            self.line_count,
            self.error,
            self.is_test_file,
            self.test_file_patterns,
            self.tests,
            None,
            self.rule_memo,
            self._lines,
        )


@dataclass(slots=True)
class ParseStats:
    """Per-call cache counters (the API's ``metrics.cache_hits``)."""

    hits: int = 0
    misses: int = 0


def count_lines(content: str) -> int:
    """Number of lines as editors count them (a trailing newline does not start a line)."""
    if not content:
        return 0
    n = content.count("\n")
    if "\r" in content:
        n = len(_LINE_SPLIT.split(content)) - 1
    last = content[-1]
    return n if last in "\r\n" else n + 1


def is_test_file(path: str, patterns: Sequence[str] = DEFAULT_TEST_FILE_PATTERNS) -> bool:
    """Whether the file name (last path segment) matches one of ``patterns``."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def parse_file(
    path: str,
    content: str,
    *,
    test_file_patterns: Sequence[str] = DEFAULT_TEST_FILE_PATTERNS,
    cache: ParseCache | None = DEFAULT_PARSE_CACHE,
    stats: ParseStats | None = None,
) -> ParsedFile:
    """Parse ``content`` (already decoded text) and discover its tests. Never raises.

    Results are cached by a hash of path + content (+ the test file patterns, which change
    discovery); pass ``cache=None`` to bypass the cache.
    """
    patterns = tuple(test_file_patterns)
    key = cache_key(path, content, patterns) if cache is not None else None
    if cache is not None and key is not None:
        hit = cache.get(key)
        if hit is not None:
            if stats is not None:
                stats.hits += 1
            return hit
    if stats is not None:
        stats.misses += 1
    parsed = _parse_uncached(path, content, patterns)
    if cache is not None and key is not None:
        cache.put(key, parsed.light())
    return parsed


def _parse_uncached(path: str, content: str, patterns: tuple[str, ...]) -> ParsedFile:
    text = content[1:] if content.startswith("\ufeff") else content  # a BOM is not code
    line_count = count_lines(text)
    error: ParseError | None = None
    try:
        tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        error = _syntax_error(exc, text)
    except (ValueError, UnicodeError) as exc:  # NUL bytes (<3.12), lone surrogates
        error = _value_error(exc, text)
    except (RecursionError, MemoryError):
        message = "the file is too deeply nested for Python's parser; simplify the expression"
        error = ParseError(message, 1, 1)
    if error is not None:
        return ParsedFile(path, text, line_count, error, test_file_patterns=patterns)
    test_file = is_test_file(path, patterns)
    syntax = ParsedTree(tree)
    _discover(syntax, tree, test_file)
    tests = [
        TestInfo(
            t.name,
            t.qualname,
            t.line,
            t.start_line,
            t.end_line,
            t.cls.qualname if t.cls is not None else None,
        )
        for t in syntax.tests
    ]
    return ParsedFile(path, text, line_count, None, test_file, patterns, tests, syntax)


def _syntax_error(exc: SyntaxError, text: str) -> ParseError:
    if "null bytes" in str(exc.msg or exc):
        return _value_error(exc, text)
    line = exc.lineno or 1
    end_line = exc.end_lineno if exc.end_lineno and exc.end_lineno >= line else line
    return ParseError(f"the file does not parse: {exc.msg} (line {line})", line, end_line)


def _value_error(exc: Exception, text: str) -> ParseError:
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        return ParseError(
            f"the file contains a NUL byte at line {line}; it is binary or corrupted", line, line
        )
    return ParseError(f"the file does not parse: {exc}", 1, 1)


# --------------------------------------------------------------------------- discovery


def _discover(parsed: ParsedTree, tree: ast.Module, test_file: bool) -> None:
    unittest_classes: set[str] = set()
    for stmt, conditional in _module_statements(tree.body):
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            func: _FuncDef = stmt  # type: ignore[assignment]
            if test_file and func.name.startswith("test") and not _is_fixture(func):
                parsed.tests.append(TestFunction(func.name, func.name, func))
            else:
                parsed.functions.setdefault(func.name, func)
        elif t is ast.ClassDef:
            parsed.all_classes.setdefault(stmt.name, stmt)  # type: ignore[attr-defined, arg-type]
            _discover_class(parsed, stmt, "", unittest_classes)  # type: ignore[arg-type]
        elif t is ast.ImportFrom:
            _record_import(parsed, stmt)  # type: ignore[arg-type]
            if (stmt.module or "").split(".")[0] in HTTP_DOUBLES:  # type: ignore[attr-defined]
                parsed.http_doubles = True
        elif t is ast.Import:
            if any(a.name.split(".")[0] in HTTP_DOUBLES for a in stmt.names):  # type: ignore[attr-defined]
                parsed.http_doubles = True
            for alias in stmt.names:  # type: ignore[attr-defined]
                if alias.name.split(".", 1)[0] in _SUITE_PACKAGES and alias.asname:
                    parsed.suite_names.add(alias.asname)  # `import tests.util as util`
        elif t is ast.Assign:
            assign: ast.Assign = stmt  # type: ignore[assignment]
            if any(type(tg) is ast.Name and tg.id == "pytestmark" for tg in assign.targets):
                parsed.module_marks.append(assign)
                if conditional:
                    parsed.conditional_marks.add(id(assign))
            value = assign.value
            if type(value) in (ast.List, ast.Tuple, ast.Set, ast.Dict):
                parsed.tables.update(tg.id for tg in assign.targets if type(tg) is ast.Name)
            if (
                len(assign.targets) == 1
                and type(assign.targets[0]) is ast.Name
                and type(value) is ast.Constant
                and isinstance(value.value, str | bytes)
            ):
                text = value.value
                name = assign.targets[0].id
                parsed.constants[name] = text if isinstance(text, str) else text.decode("latin-1")
    parsed.tests.sort(key=lambda t: t.node.lineno)
    parsed.classes.sort(key=lambda c: c.node.lineno)


def _module_statements(body: list[ast.stmt]) -> list[tuple[ast.stmt, bool]]:
    """Top-level statements, looking into ``if``/``try`` blocks (conditional definitions):
    ``(statement, inside an if)``."""
    out: list[tuple[ast.stmt, bool]] = []
    stack: list[tuple[ast.stmt, bool]] = [(s, False) for s in reversed(body)]
    while stack:
        stmt, conditional = stack.pop()
        t = type(stmt)
        if t is ast.If:
            inner = stmt.body + stmt.orelse  # type: ignore[attr-defined]
            stack.extend((s, True) for s in reversed(inner))
        elif t is ast.Try or t is ast.TryStar:
            blocks = list(stmt.body)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                blocks.extend(handler.body)
            blocks.extend(stmt.orelse + stmt.finalbody)  # type: ignore[attr-defined]
            stack.extend((s, conditional) for s in reversed(blocks))
        else:
            out.append((stmt, conditional))
    return out


#: First parts of a module path that name a test package.
_SUITE_PACKAGES = frozenset({"tests", "test", "testing"})
#: Names of a test suite's support modules.
_SUPPORT_MODULES = frozenset(
    {"util", "utils", "helpers", "helper", "support", "common", "conftest", "fixtures"}
)


def _suite_module(module: str, level: int, names: list[str]) -> bool:
    """An import of the test suite's own support code: from a ``tests`` package, from a
    support module beside the tests (``from common import x``), from a sibling module
    (``from . import x``), or of a support module further up (``from .. import util``;
    ``from ..core import x`` may be the code under test)."""
    if module.split(".", 1)[0] in _SUITE_PACKAGES or (level == 0 and module in _SUPPORT_MODULES):
        return True  # `from tests.util import x`, `from common import x` (a sibling on sys.path)
    if level == 1:
        return True
    if level > 1:
        parts = module.split(".") if module else names
        return any(p in _SUPPORT_MODULES for p in parts)
    return False


def _record_import(parsed: ParsedTree, node: ast.ImportFrom) -> None:
    module = node.module or ""
    if _suite_module(module, node.level, [a.name for a in node.names]):
        parsed.suite_names.update(a.asname or a.name for a in node.names)
    if module == "pytest":
        for alias in node.names:
            parsed.pytest_names[alias.asname or alias.name] = alias.name
    elif module in ("time", "asyncio", "trio", "anyio", "tornado.gen"):
        for alias in node.names:
            if alias.name == "sleep":
                parsed.sleep_names[alias.asname or alias.name] = module.rsplit(".", 1)[-1]
    elif module == "unittest":
        for alias in node.names:
            parsed.unittest_names[alias.asname or alias.name] = alias.name


def base_name(expr: ast.expr) -> str:
    """Last name of a base-class expression (``unittest.TestCase`` -> ``TestCase``)."""
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return ""


def _discover_class(
    parsed: ParsedTree, node: ast.ClassDef, prefix: str, unittest_classes: set[str]
) -> None:
    bases = [base_name(b) for b in node.bases]
    is_unittest = any(b.endswith("TestCase") or b in unittest_classes for b in bases)
    qualname = prefix + node.name
    if is_unittest:
        unittest_classes.add(node.name)
    if not (is_unittest or node.name.startswith("Test")):
        return
    cls = TestClass(node.name, qualname, node, "unittest" if is_unittest else "pytest")
    tests: list[TestFunction] = []
    for stmt in node.body:
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            func: _FuncDef = stmt  # type: ignore[assignment]
            cls.methods[func.name] = func
            if func.name.startswith("test") and not _is_fixture(func):
                tests.append(TestFunction(func.name, f"{qualname}.{func.name}", func, cls))
            elif func.name in SETUP_METHODS or _is_autouse_fixture(func):
                cls.setup_methods.append(func)
            elif func.name in TEARDOWN_METHODS:
                cls.teardown_methods.append(func)
        elif t is ast.ClassDef:
            _discover_class(parsed, stmt, qualname + ".", unittest_classes)  # type: ignore[arg-type]
    cls.test_count = len(tests)
    parsed.classes.append(cls)
    parsed.tests.extend(tests)


def _is_fixture(func: _FuncDef) -> bool:
    """``@pytest.fixture`` (or ``@fixture``): a fixture named ``test_*`` is not a test."""
    for dec in func.decorator_list:
        target = dec.func if type(dec) is ast.Call else dec
        name = target.attr if type(target) is ast.Attribute else getattr(target, "id", "")
        if name == "fixture":
            return True
    return False


def _is_autouse_fixture(func: _FuncDef) -> bool:
    for dec in func.decorator_list:
        if type(dec) is ast.Call and any(
            kw.arg == "autouse" and type(kw.value) is ast.Constant and kw.value.value is True
            for kw in dec.keywords
        ):
            return True
    return False
