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
import ipaddress
import re
from urllib.parse import urlsplit

from tools.test_analysis.parsing import TestFunction
from tools.test_analysis.rules.common import Emitter, dotted_name, segment, walk
from tools.test_analysis.rules.facts import TestFacts
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
#: Names that mean a temporary or fixture-made location.
_TEMP_WORDS = ("tmp", "temp", "datadir", "pytester", "testdir", "tempfile", "mkdtemp")
_IN_MEMORY = frozenset({"StringIO", "BytesIO", "devnull", "SpooledTemporaryFile"})
#: Calls that make a descriptor in the process (``r, w = os.pipe()``): nothing external.
_DESCRIPTORS = frozenset({"pipe", "socketpair", "openpty", "memfd_create", "dup", "fileno"})
_LOCAL_HOSTS = frozenset({"localhost", "testserver", "0.0.0.0", "::1", "ip6-localhost", ""})
_RESERVED_SUFFIXES = (".localhost", ".test", ".invalid", ".local", ".example", ".internal")
_PATH_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_SAFE_ABSOLUTE = ("/dev/", "/tmp/", "/proc/self")

LOCAL, EXTERNAL, UNKNOWN = "local", "external", "unknown"
#: Methods that derive an address from their receiver (``base.joinpath("x")``).
_DERIVING = frozenset({"format", "join", "joinpath", "with_name", "with_suffix", "resolve"})


def _uses_doubles(test: TestFunction) -> bool:
    node = test.node
    for dec in node.decorator_list:
        name = dotted_name(dec).lower()
        if any(word in name for word in ("patch", "mock", "responses", "vcr", "httpretty")):
            return True
    params = [a.arg for a in node.args.args + node.args.kwonlyargs]
    return any("mock" in p or p in MOCK_NAMES for p in params)


def _host_origin(host: str) -> str:
    host = host.strip("[]").lower()
    if host in _LOCAL_HOSTS or host.endswith(_RESERVED_SUFFIXES):
        return LOCAL
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        # a DNS name: example.com/org/net resolve and answer too, so they are real hosts
        return EXTERNAL if "." in host else LOCAL
    return LOCAL if address.is_loopback or address.is_unspecified else EXTERNAL


def _text_origin(text: str, kind: str) -> str:
    """Origin of a literal URL, host or path."""
    text = text.strip()
    if kind == "url":
        if "://" not in text:
            return LOCAL  # "/path" or "?q": a test client's relative URL
        try:
            host = urlsplit(text).hostname or ""
        except ValueError:
            return UNKNOWN
        return _host_origin(host)
    if kind == "host":
        return _host_origin(text)
    if not text or "\n" in text or len(text) > 260 or text == ":memory:":
        return LOCAL if text == ":memory:" else UNKNOWN
    if text.startswith(_SAFE_ABSOLUTE) or text in ("/dev/null", "nul", "NUL"):
        return LOCAL
    if "/" in text or "\\" in text or _PATH_SUFFIX.search(text):
        return EXTERNAL  # a repository file by relative path, or a machine's absolute path
    return UNKNOWN


class _Tracer:
    """Follows an address expression back to its origin within one test."""

    def __init__(self, em: Emitter, facts: TestFacts) -> None:
        self.em = em
        self.facts = facts
        node = facts.test.node
        self.params = {a.arg for a in node.args.args + node.args.kwonlyargs} - {"self", "cls"}
        #: The test works in a temporary current directory: relative paths are its own.
        self.temp_cwd = False

    def origin(self, expr: ast.AST | None, kind: str, depth: int = 0) -> str:
        if expr is None or depth > 6:
            return UNKNOWN
        t = type(expr)
        if t is ast.Constant:
            value = expr.value  # type: ignore[attr-defined]
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            if isinstance(value, int) and not isinstance(value, bool) and kind == "path":
                return LOCAL  # open(1, closefd=False): a descriptor the process holds
            if not isinstance(value, str):
                return UNKNOWN
            origin = _text_origin(value, kind)
            relative = not value.startswith(("/", "\\")) and ":" not in value[:3]
            if origin == EXTERNAL and kind == "path" and relative and self.temp_cwd:
                return LOCAL
            return origin
        if t is ast.Name:
            return self._name(expr.id, kind, depth)  # type: ignore[attr-defined]
        if t is ast.Attribute:
            root = dotted_name(expr).split(".", 1)[0]  # type: ignore[arg-type]
            if root in ("self", "cls") or root in self.params or root in self.facts.with_names:
                return LOCAL
            if any(w in dotted_name(expr).lower() for w in _TEMP_WORDS):  # type: ignore[arg-type]
                return LOCAL
            return UNKNOWN
        if t is ast.JoinedStr:
            return self._fstring(expr, kind, depth)  # type: ignore[arg-type]
        if t is ast.BinOp:
            return self._combine(
                [self.origin(expr.left, kind, depth + 1), self.origin(expr.right, kind, depth + 1)]  # type: ignore[attr-defined]
            )
        if t is ast.Tuple or t is ast.List:
            elts = expr.elts  # type: ignore[attr-defined]
            return self.origin(elts[0], "host", depth + 1) if elts else UNKNOWN
        if t is ast.Call:
            return self._call(expr, kind, depth)  # type: ignore[arg-type]
        if t is ast.Subscript:
            return self.origin(expr.value, kind, depth + 1)  # type: ignore[attr-defined]
        return UNKNOWN

    def _fstring(self, expr: ast.JoinedStr, kind: str, depth: int) -> str:
        parts = [
            self.origin(v.value, kind, depth + 1)
            for v in expr.values
            if type(v) is ast.FormattedValue
        ]
        head = expr.values[0] if expr.values else None
        if type(head) is ast.Constant and isinstance(head.value, str) and "://" in head.value:
            # f"http://{host}:{port}/": the host is whatever follows the scheme
            host_part = head.value.split("://", 1)[1]
            if host_part and not host_part.startswith(("{", ":")):
                parts.append(_text_origin(head.value, "url"))
        return self._combine(parts or [UNKNOWN])

    def _name(self, name: str, kind: str, depth: int) -> str:
        facts = self.facts
        if name in self.params or name in facts.with_names:
            return LOCAL
        if any(w in name.lower() for w in _TEMP_WORDS) or name in _IN_MEMORY:
            return LOCAL
        if name == "__file__":
            return EXTERNAL
        bound = facts.bindings.get(name)
        if bound is not None:
            return self.origin(bound, kind, depth + 1)
        constant = self.em.syntax.constants.get(name)
        if constant is not None:
            return _text_origin(constant, kind)
        return UNKNOWN

    def _call(self, call: ast.Call, kind: str, depth: int) -> str:
        func = dotted_name(call.func)
        last = func.rsplit(".", 1)[-1]
        root = func.split(".", 1)[0]
        if root in ("self", "cls") or root in self.params or root in self.facts.with_names:
            return LOCAL  # self.get_url("/"), httpbin("get"), server.url_for(...)
        if (
            last in _IN_MEMORY
            or last in _DESCRIPTORS
            or any(w in func.lower() for w in _TEMP_WORDS)
        ):
            return LOCAL
        first = call.args[0] if call.args else None
        if last == "dirname" and type(first) is ast.Name and first.id == "__file__":
            return EXTERNAL  # a data file next to the test
        inner = [self.origin(a, kind, depth + 1) for a in call.args]
        if type(call.func) is ast.Attribute and last in _DERIVING:
            inner.append(self.origin(call.func.value, kind, depth + 1))
        return self._combine(inner) if inner else UNKNOWN

    @staticmethod
    def _combine(origins: list[str]) -> str:
        if LOCAL in origins:
            return LOCAL  # any part from a fixture or a temp dir makes the whole local
        if EXTERNAL in origins:
            return EXTERNAL
        return UNKNOWN


_TEMP_CWD = frozenset(
    {"isolated_filesystem", "as_cwd", "chdir", "change_dir", "working_directory", "pushd"}
)


def _temp_cwd(test: TestFunction) -> bool:
    """The test changes into a temporary directory (click's ``runner.isolated_filesystem()``,
    ``monkeypatch.chdir(tmp_path)``, ``tmpdir.as_cwd()``, ``os.chdir(tmp)``)."""
    for n in walk(test.node):
        if type(n) is ast.Call:
            name = dotted_name(n.func).rsplit(".", 1)[-1]
            if name in _TEMP_CWD and (name != "chdir" or _mentions_temp_expr(n)):
                return True
    return False


def _mentions_temp_expr(call: ast.Call) -> bool:
    for n in ast.walk(call):
        text = n.id if type(n) is ast.Name else n.attr if type(n) is ast.Attribute else None
        if text is not None and any(w in text.lower() for w in _TEMP_WORDS):
            return True
    return False


def _socket_origin(facts: TestFacts, tracer: _Tracer) -> str:
    origins = [
        tracer.origin(call.args[0], "host")
        for call, name, _ in facts.guests
        if name in ("connect", "create_connection", "bind") and call.args
    ]
    return _Tracer._combine(origins) if origins else UNKNOWN


def _mentions_temp(test: TestFunction) -> bool:
    for n in ast.walk(test.node):
        text = (
            n.id
            if type(n) is ast.Name
            else n.attr
            if type(n) is ast.Attribute
            else n.arg
            if type(n) is ast.arg
            else None
        )
        if text is not None and any(w in text.lower() for w in _TEMP_WORDS):
            return True
    return False


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
    tracer = _Tracer(em, facts)
    tracer.temp_cwd = _temp_cwd(test)
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
            origin = _socket_origin(facts, tracer)
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
        if origin == UNKNOWN and resource == "file" and _mentions_temp(test):
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
