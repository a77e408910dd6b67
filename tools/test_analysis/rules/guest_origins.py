"""mystery-guest: where an address (URL, host, path) comes from within one test.

:class:`AddressTracer` follows an address expression back to its origin: ``LOCAL`` (a
fixture, a temporary directory, a loopback or reserved test host, a relative URL, an
in-memory stream), ``EXTERNAL`` (a real host, a repository file, a machine's absolute path)
or ``UNKNOWN`` (a variable the test does not say where it comes from). :mod:`.guests`
decides from the origin what to report.
"""

from __future__ import annotations

import ast
import ipaddress
import re
from urllib.parse import urlsplit

from tools.test_analysis.parsing import TestFunction
from tools.test_analysis.rules.common import Emitter, dotted_name, walk
from tools.test_analysis.rules.facts import TestFacts

__all__ = [
    "EXTERNAL",
    "LOCAL",
    "UNKNOWN",
    "AddressTracer",
    "mentions_temp",
    "socket_origin",
    "works_in_temp_dir",
]


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


class AddressTracer:
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


def works_in_temp_dir(test: TestFunction) -> bool:
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


def socket_origin(facts: TestFacts, tracer: AddressTracer) -> str:
    origins = [
        tracer.origin(call.args[0], "host")
        for call, name, _ in facts.guests
        if name in ("connect", "create_connection", "bind") and call.args
    ]
    return AddressTracer._combine(origins) if origins else UNKNOWN


def mentions_temp(test: TestFunction) -> bool:
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
