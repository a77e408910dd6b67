"""Fix code for findings, built from the AST so that it is valid Python in the test's style.

The rules put the results into a finding's ``context`` (``fixed``, ``example`` fields) and the
templates show them. Everything here returns code that ``ast.parse`` accepts: source text of
a node is never cut short (``segment`` shortens long lines with "..."); nodes are rewritten
and printed with :func:`ast.unparse`.
"""

from __future__ import annotations

import ast
import copy
import re
from http import HTTPStatus

from tools.test_analysis.rules.common import dotted_name

__all__ = [
    "MESSAGE_PLACEHOLDER",
    "identifier",
    "constant_name",
    "http_status",
    "looks_like_status",
    "unparse",
    "with_message",
    "with_name_for",
]

#: The message the fix suggests; a string literal, so the fixed code still parses.
MESSAGE_PLACEHOLDER = "<what this checks>"

_MSG_POSITION: dict[str, int] = {}


def register_msg_positions(table: dict[str, int]) -> None:
    """Positional index of ``msg`` per unittest assertion (shared with the roulette rule)."""
    _MSG_POSITION.update(table)


def unparse(node: ast.AST) -> str:
    """``ast.unparse`` of a statement or expression; '' if it cannot be printed."""
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return ""


def with_message(node: ast.AST, kind: str, name: str) -> str:
    """The assertion with a failure message, in its own style:

    - ``assert x`` -> ``assert x, "<what this checks>"``;
    - ``self.assertEqual(a, b)`` -> ``self.assertEqual(a, b, msg="<what this checks>")``
      (the message is unittest's ``msg`` argument; ``self.assertEqual(a, b), "..."`` would
      build a tuple and pass no message at all);
    - other calls (helpers, ``raise AssertionError``) get a ``msg=`` / argument likewise.
    """
    fixed = copy.deepcopy(node)
    message = ast.Constant(MESSAGE_PLACEHOLDER)
    if type(fixed) is ast.Assert:
        fixed.msg = message
    elif type(fixed) is ast.Raise:
        exc = fixed.exc
        if type(exc) is ast.Call and not exc.args:
            exc.args = [message]
        elif type(exc) is not ast.Call:
            fixed.exc = ast.Call(
                func=exc or ast.Name("AssertionError"), args=[message], keywords=[]
            )
    elif type(fixed) is ast.Call:
        keywords = [k for k in fixed.keywords if k.arg != "msg"]
        position = _MSG_POSITION.get(name)
        if kind == "unittest" and position is not None and len(fixed.args) > position:
            fixed.args = fixed.args[:position]  # an extra positional would be the msg already
        keyword = "err_msg" if name.startswith("assert_") and kind == "helper" else "msg"
        fixed.keywords = [*keywords, ast.keyword(arg=keyword, value=message)]
    else:
        return ""
    return unparse(ast.fix_missing_locations(fixed))


# --------------------------------------------------------------------------- HTTP statuses

_STATUS_WORDS = ("status", "code")


def http_status(value: object) -> HTTPStatus | None:
    """The :class:`HTTPStatus` with this value (None for other numbers)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 100 <= value <= 599:
        return None
    try:
        return HTTPStatus(value)
    except ValueError:
        return None


def looks_like_status(expr: ast.AST) -> bool:
    """``response.status_code``, ``rv.status``, ``resp.code``, ``status``, ``r.status_int``..."""
    name = dotted_name(expr) if isinstance(expr, ast.expr) else ""
    if not name and type(expr) is ast.Subscript:
        name = dotted_name(expr.value)
    last = name.rsplit(".", 1)[-1].lower()
    return any(word in last for word in _STATUS_WORDS)


# --------------------------------------------------------------------------- constants

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")
_GENERIC = frozenset(
    {"", "self", "result", "res", "ret", "value", "val", "x", "y", "out", "actual", "r", "rv"}
)


def _words(text: str) -> str:
    text = _CAMEL.sub("_", text)
    return "_".join(w for w in _NOT_WORD.split(text) if w).upper()


def _describe(expr: ast.AST) -> str:
    """A name for what ``expr`` computes: ``len(rows)`` -> ROWS_COUNT, ``resp.headers
    ["Content-Length"]`` -> CONTENT_LENGTH, ``page.size`` -> PAGE_SIZE."""
    t = type(expr)
    if t is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        fname = dotted_name(func).rsplit(".", 1)[-1]
        if fname == "len" and expr.args:  # type: ignore[attr-defined]
            inner = _describe(expr.args[0])  # type: ignore[attr-defined]
            return f"{inner}_COUNT" if inner else "COUNT"
        if fname in ("int", "float", "str", "round", "abs", "sum", "min", "max") and expr.args:  # type: ignore[attr-defined]
            inner = _describe(expr.args[0])  # type: ignore[attr-defined]
            return inner or _words(fname)
        return _words(fname) if fname not in _GENERIC else ""
    if t is ast.Subscript:
        key = expr.slice  # type: ignore[attr-defined]
        if type(key) is ast.Constant and isinstance(key.value, str) and key.value.strip():
            return _words(key.value)
        return _describe(expr.value)  # type: ignore[attr-defined]
    if t is ast.Attribute:
        attr = expr.attr  # type: ignore[attr-defined]
        owner = _describe(expr.value)  # type: ignore[attr-defined]
        if attr.lower() in _GENERIC:
            return owner
        return f"{owner}_{_words(attr)}" if owner and len(owner) <= 12 else _words(attr)
    if t is ast.Name:
        ident = expr.id  # type: ignore[attr-defined]
        return "" if ident.lower() in _GENERIC else _words(ident)
    return ""


def constant_name(actual: ast.AST | None, test_name: str) -> str:
    """A constant name that says what the number means: from the checked expression when it
    names something, else from the test (``test_default_port`` -> EXPECTED_DEFAULT_PORT)."""
    described = _describe(actual) if actual is not None else ""
    if not described:
        stem = test_name[5:] if test_name.startswith("test_") else test_name
        described = _words(stem) or "RESULT"
    name = described if described.startswith("EXPECTED_") else f"EXPECTED_{described}"
    return name[:60].rstrip("_")


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, name: str) -> None:
        self.target = target
        self.name = name

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(ast.Name(self.name, ast.Load()), node)
        return super().visit(node)


def with_name_for(node: ast.AST, number: ast.AST, name: str) -> str:
    """The assertion ``node`` with the literal ``number`` replaced by ``name``."""
    target_path = _path_to(node, number)
    if target_path is None:
        return ""
    fixed = copy.deepcopy(node)
    target = _follow(fixed, target_path)
    if target is None:
        return ""
    return unparse(ast.fix_missing_locations(_Replace(target, name).visit(fixed)))


def _path_to(root: ast.AST, wanted: ast.AST) -> list[tuple[str, int | None]] | None:
    """Field path from ``root`` to ``wanted`` (so the deep copy's twin can be found)."""
    stack: list[tuple[ast.AST, list[tuple[str, int | None]]]] = [(root, [])]
    while stack:
        node, path = stack.pop()
        if node is wanted:
            return path
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                stack.append((value, [*path, (field, None)]))
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        stack.append((item, [*path, (field, i)]))
    return None


def _follow(root: ast.AST, path: list[tuple[str, int | None]]) -> ast.AST | None:
    node: ast.AST = root
    for field, index in path:
        value = getattr(node, field, None)
        if index is not None:
            value = value[index] if isinstance(value, list) and index < len(value) else None
        if not isinstance(value, ast.AST):
            return None
        node = value
    return node


def identifier(text: str) -> str:
    """``text`` reduced to the characters of a Python identifier."""
    return "".join(c for c in text if c.isalnum() or c == "_")
