"""mystery-guest: a test that reaches real files, sockets, databases or network URLs.

Calls that may touch a resource are recorded by the fact collector; this module decides,
keeping false positives down: temporary directories (tmp_path, pytester, tempfile),
in-memory stand-ins (StringIO, ``:memory:``) and tests that use doubles (mock, patch,
monkeypatch, responses) are fine; a hard-coded path is more certain than a variable one.
"""

from __future__ import annotations

import ast
import re

from agents.test_analysis.parsing import TestFunction
from agents.test_analysis.rules.common import Emitter, dotted_name, segment
from agents.test_analysis.rules.facts import HTTP_CALLS, MOCK_NAMES, NUMPY_LOADERS, TestFacts

_DB_MODULES = frozenset(
    {
        "sqlite3",
        "psycopg",
        "psycopg2",
        "pymysql",
        "MySQLdb",
        "mysql",
        "cx_Oracle",
        "oracledb",
        "pyodbc",
        "asyncpg",
        "aiosqlite",
        "aiomysql",
    }
)
_HTTP_MODULES = frozenset({"requests", "httpx", "urllib3", "aiohttp"})
_FILE_OPENERS = frozenset({"", "io", "codecs", "gzip", "bz2", "lzma", "os"})
_NUMPY = frozenset({"np", "numpy"})
_PANDAS = frozenset({"pd", "pandas"})
#: Fixture names that provide a temporary directory (pytest's own pytester/testdir too).
_TEMP_PARAMS = ("tmp", "temp", "datadir", "pytester", "testdir")


def _mentions(node: ast.AST, needles: tuple[str, ...], budget: int = 200) -> bool:
    for n in ast.walk(node):
        budget -= 1
        if budget < 0:
            return False
        text = n.id if type(n) is ast.Name else n.attr if type(n) is ast.Attribute else None
        if text is not None and any(s in text.lower() for s in needles):
            return True
        if type(n) is ast.Constant and n.value == ":memory:":
            return True
        if text in ("StringIO", "BytesIO", "devnull"):
            return True
    return False


_PATH_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_PATH_BUILDERS = (
    "join",
    "dirname",
    "abspath",
    "realpath",
    "Path",
    "resolve",
    "joinpath",
    "with_name",
    "with_suffix",
    "fspath",
)


def _path_like(node: ast.AST, depth: int = 0) -> bool:
    """A hard-coded path: a path-looking string literal, ``__file__``, or a path built from
    them (``os.path.join(os.path.dirname(__file__), "data.txt")``, ``HERE / "x.json"``)."""
    t = type(node)
    if t is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        return (
            isinstance(value, str)
            and "\n" not in value
            and 0 < len(value) < 260
            and ("/" in value or "\\" in value or _PATH_SUFFIX.search(value) is not None)
        )
    if t is ast.Name:
        return node.id == "__file__"  # type: ignore[attr-defined]
    if depth >= 4:
        return False
    if t is ast.BinOp and type(node.op) is ast.Div:  # type: ignore[attr-defined]
        return _path_like(node.left, depth + 1) or _path_like(node.right, depth + 1)  # type: ignore[attr-defined]
    if t is ast.Call and dotted_name(node.func).rsplit(".", 1)[-1] in _PATH_BUILDERS:  # type: ignore[attr-defined]
        return any(_path_like(arg, depth + 1) for arg in node.args)  # type: ignore[attr-defined]
    return False


def _uses_doubles(test: TestFunction) -> bool:
    node = test.node
    for dec in node.decorator_list:
        name = dotted_name(dec).lower()
        if any(word in name for word in ("patch", "mock", "responses", "vcr", "httpretty")):
            return True
    params = [a.arg for a in node.args.args + node.args.kwonlyargs]
    return any("mock" in p or p in MOCK_NAMES for p in params)


def _classify(call: ast.Call, name: str, receiver: str) -> tuple[str, float] | None:
    """``(resource, confidence)`` when ``call`` reaches a real resource."""
    first = call.args[0] if call.args else None
    if name == "open" and receiver in _FILE_OPENERS and first is not None:
        if type(first) is ast.Call and not _path_like(first):
            return None  # open(make_buffer()) and the like: not a path we can judge
        return "file", 0.9 if _path_like(first) else 0.7
    if name in ("read_text", "read_bytes", "write_text", "write_bytes", "open") and receiver == "?":
        value = call.func.value  # type: ignore[attr-defined]
        if type(value) is ast.Call and dotted_name(value.func).endswith("Path") and value.args:
            return ("file", 0.9) if _path_like(value.args[0]) else None
        return None
    if name in ("urlopen", "urlretrieve", "HTTPConnection", "HTTPSConnection"):
        return "network URL", 0.8
    if name == "socket" and receiver == "socket" or name == "create_connection":
        return "socket", 0.8
    if name == "connect" and receiver in _DB_MODULES:
        return "database", 0.8
    if (
        name == "create_engine"
        and type(first) is ast.Constant
        and ":memory:" not in str(first.value)
    ):
        return "database", 0.8
    if receiver in _HTTP_MODULES and name in HTTP_CALLS:
        return "network URL", 0.8
    if receiver in _NUMPY and name in NUMPY_LOADERS:
        return ("file", 0.8) if first is not None and _path_like(first) else None
    if receiver in _PANDAS and name.startswith("read_") and first is not None:
        if type(first) is ast.Constant and str(first.value).startswith(("http:", "https:")):
            return "network URL", 0.8
        return ("file", 0.8) if _path_like(first) else None
    return None


def check_mystery_guests(em: Emitter, facts: TestFacts) -> None:
    """Report the calls of one test that use real resources."""
    test = facts.test
    if facts.mentions_mock or _uses_doubles(test):
        return
    temp_test: bool | None = None
    for call, name, receiver in facts.guests:
        found = _classify(call, name, receiver)
        if found is None:
            continue
        resource, confidence = found
        first = call.args[0] if call.args else None
        if first is not None and _mentions(first, _TEMP_PARAMS):
            continue
        if resource == "file" and confidence < 0.8:
            # A variable path: fine when the test works in a temporary directory.
            if temp_test is None:
                params = [a.arg for a in test.node.args.args]
                temp_test = any(p.startswith(_TEMP_PARAMS) for p in params) or _mentions(
                    test.node, ("tmp", "temp", "tempfile"), budget=5000
                )
            if temp_test:
                continue
        em.emit_node(
            "mystery-guest",
            call,
            f"The test uses a real {resource} ({name}) instead of a fixture or a double.",
            confidence=confidence,
            context={
                "call": segment(em.parsed, call, 60),
                "resource": resource,
                "test": test.name,
                "guest_example": _GUEST_EXAMPLES[resource],
            },
        )


_GUEST_EXAMPLES = {
    "file": 'def test_reads(tmp_path):\n    path = tmp_path / "data.txt"\n'
    '    path.write_text("...")\n    assert load(path) == ...',
    "network URL": 'def test_fetch(monkeypatch):\n    monkeypatch.setattr(client, "get", '
    "lambda url: FakeResponse(200))\n    assert fetch() == ...",
    "socket": 'def test_send():\n    sock = unittest.mock.Mock()\n    send(sock, b"x")\n'
    '    sock.sendall.assert_called_once_with(b"x")',
    "database": 'def test_store():\n    conn = sqlite3.connect(":memory:")\n'
    "    store(conn, item)\n    assert count(conn) == 1",
}
