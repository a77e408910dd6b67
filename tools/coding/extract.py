"""Pull code out of text: a model's answer or a chat message; put needed imports on top.

- `extract_code(text, function_name)`: the fenced block (or bare text) that defines the function.
- `tidy_imports(code)`: module-level imports moved to the top (after a docstring and
  `__future__` imports), duplicates dropped, and well-known aliases the code uses but never
  imports (`pd`, `np`, ...) added.
- `extract_pasted(message)`: code, function name and JSON test data a user pasted in chat.
- `looks_like_traceback(text)`: whether a message is (or holds) a Python traceback.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):|^\s*File \".*\", line \d+", re.M)
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)):", re.M)

#: Aliases models (and people) use without importing them, and the import each needs.
KNOWN_ALIASES = {
    "pd": "import pandas as pd",
    "np": "import numpy as np",
    "math": "import math",
    "re": "import re",
    "json": "import json",
    "statistics": "import statistics",
    "datetime": "import datetime",
    "collections": "import collections",
    "itertools": "import itertools",
}


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]


def _parses(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def defined_functions(tree: ast.Module) -> list[str]:
    """Names of the module-level functions of `tree`, in order."""
    return [
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def extract_code(text: str, function_name: str | None = None) -> str | None:
    """The code in `text` that defines `function_name` (any function when `None`).

    Prefers fenced Python blocks, then any fenced block, then the whole text. Returns `None`
    when no candidate parses and defines the function.
    """
    blocks = _fenced_blocks(text)
    python_first = sorted(blocks, key=lambda block: block[0] not in ("python", "py", "python3"))
    candidates = [code for _, code in python_first] + [text]
    for code in candidates:
        tree = _parses(code.strip("\n"))
        if tree is None:
            continue
        names = defined_functions(tree)
        if (function_name is None and names) or function_name in names:
            return code.strip("\n") + "\n"
    return None


def _bound_names(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _used_names(tree: ast.Module) -> set[str]:
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def tidy_imports(code: str) -> str:
    """`code` with its module-level imports at the top and missing well-known ones added.

    Code that does not parse is returned unchanged (check_code reports it).
    """
    tree = _parses(code)
    if tree is None:
        return code
    lines = code.splitlines()
    head_end = 0  # statements that must stay first: a docstring, `from __future__` imports
    for node in tree.body:
        is_docstring = (
            node is tree.body[0]
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_docstring or is_future):
            break
        head_end = node.end_lineno or node.lineno
    imports: list[str] = []
    taken: set[int] = set()
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno <= head_end:
            continue
        end = node.end_lineno or node.lineno
        statement = "\n".join(lines[node.lineno - 1 : end]).strip()
        if statement not in imports:
            imports.append(statement)
        taken.update(range(node.lineno, end + 1))
    missing = sorted(
        KNOWN_ALIASES[name]
        for name in _used_names(tree) - _bound_names(tree)
        if name in KNOWN_ALIASES
    )
    imports = [*(line for line in missing if line not in imports), *imports]
    if not imports:
        return code
    head = lines[:head_end]
    body = [
        line for number, line in enumerate(lines, 1) if number > head_end and number not in taken
    ]
    while body and not body[0].strip():
        body.pop(0)
    parts = [*head, *([""] if head else []), *imports, "", "", *body]
    return "\n".join(parts).rstrip("\n") + "\n"


def looks_like_traceback(text: str) -> bool:
    """Whether `text` is or holds a Python traceback / exception line."""
    return bool(_TRACEBACK.search(text)) or bool(_EXCEPTION_LINE.search(text))


@dataclass(frozen=True)
class PastedCode:
    """What a user pasted into a chat message."""

    code: str | None
    function_name: str | None
    test_data: Any | None
    traceback: str | None


def _test_data(text: str) -> Any | None:
    for language, block in _fenced_blocks(text):
        if language not in ("json", ""):
            continue
        try:
            value = json.loads(block)
        except ValueError:
            continue
        if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
            return value
        if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
            return value
    return None


def extract_pasted(message: str, function_name: str | None = None) -> PastedCode:
    """The code (and its function), JSON test data and traceback pasted in `message`.

    The function is `function_name` when the code defines it, else one the message names in
    backticks or as `name(`, else the code's first function.
    """
    code = extract_code(message, function_name)
    name = None
    if code is not None:
        tree = _parses(code)
        names = defined_functions(tree) if tree else []
        if function_name in names:
            name = function_name
        else:
            mentioned = [n for n in names if re.search(rf"`{n}`|\b{n}\(", _outside_code(message))]
            candidates = mentioned or names
            name = candidates[0] if candidates else None
    traceback = None
    if looks_like_traceback(message):
        fenced = [b for _, b in _fenced_blocks(message) if looks_like_traceback(b)]
        traceback = (fenced[0] if fenced else message).strip()
    return PastedCode(
        code=code, function_name=name, test_data=_test_data(message), traceback=traceback
    )


def _outside_code(message: str) -> str:
    return _FENCE.sub(" ", message)
