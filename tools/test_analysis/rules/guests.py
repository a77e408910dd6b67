"""mystery-guest: a test that reaches real files, sockets, databases or network URLs.

Calls that may touch a resource are recorded by the fact collector; this module decides by
following the address (URL, host, path) back to where it came from:

- *local*: a test parameter (a fixture: ``httpbin``, ``tmp_path``, ``server``), a name bound
  by ``with <server> as (host, port)`` in the test, an attribute of ``self`` (set up by the
  fixture, ``self.get_url(...)``), a temporary directory, a loopback or reserved test host
  (``localhost``, ``127.0.0.1``, ``*.test``), a relative URL (a test client), ``:memory:``,
  StringIO/BytesIO: never reported;
- *external*: a literal URL or host with a real DNS name or routable address, a repository
  file read by a relative path or next to ``__file__``, an absolute path outside ``/dev``
  and ``/tmp``: reported in both profiles, but for a repository file only when the test
  also writes to one (default: reading a checked-in data file read-only is noise, rewriting
  it in place is worth fixing);
- *unknown*: a variable the test does not say where it comes from: reported by the strict
  profile only (SMELLS.md's "opens real files ... directly"), at a lower confidence.

Tests that use doubles (mock, patch, monkeypatch, responses) are not reported at all.
"""

from __future__ import annotations

import ast

from tools.test_analysis.parsing import TestFunction
from tools.test_analysis.rules.common import Emitter, dotted_name, segment
from tools.test_analysis.rules.facts import TestFacts
from tools.test_analysis.rules.guest_origins import (
    EXTERNAL,
    LOCAL,
    UNKNOWN,
    AddressTracer,
    mentions_temp,
    socket_origin,
    works_in_temp_dir,
)
from tools.test_analysis.rules.kinds import HTTP_CALLS, MOCK_NAMES, NUMPY_LOADERS

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


def _uses_doubles(test: TestFunction) -> bool:
    node = test.node
    for dec in node.decorator_list:
        name = dotted_name(dec).lower()
        if any(word in name for word in ("patch", "mock", "responses", "vcr", "httpretty")):
            return True
    params = [a.arg for a in node.args.args + node.args.kwonlyargs]
    return any("mock" in p or p in MOCK_NAMES for p in params)


def _address(call: ast.Call, keyword: str) -> ast.AST | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _classify(call: ast.Call, name: str, receiver: str) -> tuple[str, str, str] | None:
    """``(resource, address kind, keyword)`` when ``call`` may reach a real resource."""
    if name == "open" and receiver in _FILE_OPENERS:
        return "file", "path", "file"
    if name in ("read_text", "read_bytes", "write_text", "write_bytes", "open") and receiver == "?":
        value = call.func.value  # type: ignore[attr-defined]
        if type(value) is ast.Call and dotted_name(value.func).endswith("Path") and value.args:
            return "file", "path", "path"
        return None
    if name in ("urlopen", "urlretrieve"):
        return "network URL", "url", "url"
    if name in ("HTTPConnection", "HTTPSConnection"):
        return "network URL", "host", "host"
    if name == "create_connection" or (
        name == "connect"
        and receiver not in _DB_MODULES
        and (bool(call.args) and type(call.args[0]) is ast.Tuple or "sock" in receiver.lower())
    ):
        return "socket", "host", "address"
    if name == "socket" and receiver == "socket":
        return "socket", "none", ""
    if name == "connect" and receiver in _DB_MODULES:
        return "database", "path", "database"
    if name == "create_engine":
        return "database", "url", "url"
    if receiver in _HTTP_MODULES and name in HTTP_CALLS:
        return "network URL", "url", "url"
    if receiver in _NUMPY and name in NUMPY_LOADERS:
        return "file", "path", "file"
    if receiver in _PANDAS and name.startswith("read_"):
        return "file", "url-or-path", "filepath_or_buffer"
    return None


_WRITE_METHODS = frozenset({"write_text", "write_bytes"})


def _writes(call: ast.Call, name: str) -> bool:
    """The call opens its file for writing: ``open(p, "w")``, ``open(p, mode="r+b")``,
    ``path.open("a")``, ``path.write_text(...)``."""
    if name in _WRITE_METHODS:
        return True
    if name != "open":
        return False
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        # the builtin's second argument, Path.open's first
        mode = next(
            (a for a in call.args[:2] if type(a) is ast.Constant and _is_mode(a.value)), None
        )
    value = mode.value if type(mode) is ast.Constant else None
    return isinstance(value, str) and _is_mode(value) and bool(set("wax+") & set(value))


def _is_mode(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 4 and set(value) <= set("rwaxbt+U")


def check_mystery_guests(em: Emitter, facts: TestFacts) -> None:
    """Report the calls of one test that use real resources.

    default (the judging line, ``bench/data/frozen/README.md``): "reading a checked-in data
    file read-only is noise, rewriting it in place is worth-fixing": a repository file
    (external path) is reported only in a test that also writes to one, and then every
    access to it is (the read of the original is part of the rewrite)."""
    test = facts.test
    if facts.mentions_mock or _uses_doubles(test):
        return
    tracer = AddressTracer(em, facts)
    tracer.temp_cwd = works_in_temp_dir(test)
    strict = em.rc.strict
    found_guests: list[tuple[ast.Call, str, str, str, str]] = []
    rewrites = False
    for call, name, receiver in facts.guests:
        found = _classify(call, name, receiver)
        if found is None and name in _WRITE_METHODS and receiver in facts.bindings:
            found = ("file", "path", "path")  # `target = HERE / "x.toml"` ... `target.write_text()`
            receiver = "?"
        if found is None:
            continue
        resource, kind, keyword = found
        if resource == "network URL" and em.syntax.http_doubles:
            continue  # the module's HTTP-mocking library serves these requests
        if kind == "none":
            # socket.socket(): where it connects decides (an in-test server is local); with
            # no connect in sight the literal definition still reports it
            origin = socket_origin(facts, tracer)
        else:
            # `Path(root, "gen").write_bytes(data)`: the path is the receiver, the argument
            # is the data (or the mode of `.open("wb")`)
            address = (
                call.func.value  # type: ignore[attr-defined]
                if kind == "path" and receiver == "?"
                else _address(call, keyword)
            )
            if address is None:
                continue
            if kind == "url-or-path":
                text = address.value if type(address) is ast.Constant else ""
                kind = "url" if isinstance(text, str) and "://" in text else "path"
            if kind == "path" and type(address) is ast.Name and address.id == "__file__":
                origin = LOCAL if not strict else EXTERNAL  # the test reading its own source
            else:
                origin = tracer.origin(address, kind)
        if origin == LOCAL or (origin == UNKNOWN and not strict):
            continue
        if origin == UNKNOWN and resource == "file" and mentions_temp(test):
            continue  # a variable path in a test that works in a temporary directory
        if resource == "file" and origin == EXTERNAL and _writes(call, name):
            rewrites = True
        found_guests.append((call, name, resource, origin, segment(em.parsed, call, 60)))
    for call, name, resource, origin, text in found_guests:
        if not strict and resource == "file" and not rewrites:
            continue  # default: a checked-in data file read read-only
        confidence = 0.9 if origin == EXTERNAL else 0.6
        em.emit_node(
            "mystery-guest",
            call,
            f"The test uses a real {resource} ({name}) instead of a fixture or a double"
            + (": the address is hard-coded." if origin == EXTERNAL else "."),
            confidence=confidence,
            context={
                "call": text,
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
