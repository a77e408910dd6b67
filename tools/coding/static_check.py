"""`check_code`'s engine: find problems in code without running it.

Checks, in order: it compiles; the function exists at module level (a plain `def`); it returns
a value; it handles errors (a `try` or a `raise`); its parameters and return have type hints;
it imports only what the sandbox offers; and the findings of ruff (pyflakes, bugbear, pandas-vet,
run on the code through stdin, ignoring any project configuration). Error-level issues make the
code invalid; warnings do not.
"""

from __future__ import annotations

import ast
import json
import logging
import subprocess
import sys
from collections.abc import Iterable
from typing import Literal

from tools.coding.schemas import CheckCodeOutput, CodeIssue

logger = logging.getLogger(__name__)

#: ruff rules: pyflakes, syntax errors, bugbear, pandas-vet (less its generic-name rule).
RUFF_SELECT = "E9,F,B,PD"
RUFF_IGNORE = "PD901"
#: ruff findings that mean the code cannot work as written.
RUFF_ERRORS = {"F821", "F822", "F823", "F706", "F704", "F702", "F701"}
#: Standard modules that import fine but cannot work in the sandbox.
SANDBOX_USELESS = {
    "subprocess": "starting processes is not allowed",
    "multiprocessing": "starting processes is not allowed",
    "socket": "there is no network",
    "urllib.request": "there is no network",
    "http.client": "there is no network",
}


def _issue(
    severity: Literal["error", "warning"], code: str, message: str, line: int | None = None
) -> CodeIssue:
    return CodeIssue(severity=severity, code=code, message=message, line=line)


def _own_nodes(function: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a function's body, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _function_issues(function: ast.FunctionDef) -> list[CodeIssue]:
    issues: list[CodeIssue] = []
    nodes = list(_own_nodes(function))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        issues.append(
            _issue(
                "error",
                "generator",
                "it is a generator (yield); return a value instead",
                function.lineno,
            )
        )
    returns = [
        n
        for n in nodes
        if isinstance(n, ast.Return)
        and n.value is not None
        and not (isinstance(n.value, ast.Constant) and n.value.value is None)
    ]
    if not returns:
        issues.append(
            _issue(
                "error", "no-return", f"`{function.name}` never returns a value", function.lineno
            )
        )
    if not any(isinstance(n, (ast.Try, ast.Raise)) for n in nodes):
        issues.append(
            _issue(
                "warning",
                "no-error-handling",
                f"`{function.name}` does not handle errors (no try/except, no raise for bad input)",
                function.lineno,
            )
        )
    arguments = function.args
    params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    params += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    unhinted = [a.arg for a in params if a.annotation is None and a.arg not in ("self", "cls")]
    if unhinted or function.returns is None:
        missing = [*(f"parameter {name!r}" for name in unhinted)]
        if function.returns is None:
            missing.append("the return value")
        issues.append(
            _issue(
                "warning", "type-hints", "no type hint for " + ", ".join(missing), function.lineno
            )
        )
    return issues


def _import_issues(tree: ast.Module, allowed_modules: frozenset[str] | None) -> list[CodeIssue]:
    issues: list[CodeIssue] = []
    for node in ast.walk(tree):
        names: list[str] = []
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if name in SANDBOX_USELESS or top in SANDBOX_USELESS:
                reason = SANDBOX_USELESS.get(name) or SANDBOX_USELESS[top]
                issues.append(
                    _issue(
                        "warning",
                        "sandbox",
                        f"`{name}` cannot work in the sandbox: {reason}",
                        line,
                    )
                )
            elif (
                allowed_modules is not None
                and top not in sys.stdlib_module_names
                and (top not in allowed_modules)
            ):
                offered = ", ".join(sorted(allowed_modules)) or "none"
                issues.append(
                    _issue(
                        "error",
                        "unavailable-module",
                        f"module `{top}` is not available in the sandbox (the standard library "
                        f"and: {offered})",
                        line,
                    )
                )
    return issues


def ruff_issues(code: str, *, timeout: float) -> list[CodeIssue]:
    """ruff's findings on `code` (read from stdin; the project's ruff settings are ignored)."""
    try:
        from ruff.__main__ import find_ruff_bin

        ruff = find_ruff_bin()
    except (ImportError, FileNotFoundError):
        return [_issue("warning", "lint", "ruff is not installed (pip install ruff); not linted")]
    command = [
        str(ruff), "check", "--isolated", "--no-cache", "--output-format", "json",
        "--select", RUFF_SELECT, "--ignore", RUFF_IGNORE, "--stdin-filename", "user_code.py", "-",
    ]  # fmt: skip
    try:
        completed = subprocess.run(
            command, input=code, capture_output=True, text=True, timeout=timeout, check=False
        )
        findings = json.loads(completed.stdout or "[]")
    except subprocess.TimeoutExpired:
        return [_issue("warning", "lint", f"ruff did not finish within {timeout:g} s; not linted")]
    except ValueError:
        logger.warning("ruff gave no JSON: %s", completed.stderr[-500:])
        return [_issue("warning", "lint", "ruff's output could not be read; not linted")]
    issues = []
    for finding in findings[:100]:
        rule = finding.get("code") or "syntax"
        severity: Literal["error", "warning"] = (
            "error" if rule in RUFF_ERRORS or rule.startswith("E9") else "warning"
        )
        issues.append(
            _issue(
                severity,
                f"ruff:{rule}",
                str(finding.get("message", "")).strip()[:500],
                (finding.get("location") or {}).get("row"),
            )
        )
    return issues


def check_code(
    code: str,
    function_name: str,
    *,
    allowed_modules: frozenset[str] | None = None,
    lint: bool = True,
    lint_timeout: float = 10.0,
) -> CheckCodeOutput:
    """Check `code` statically for `function_name` (no execution). See the module docstring.

    `allowed_modules`: top-level modules the sandbox offers besides the standard library
    (`None` = do not check imports).
    """
    try:
        compile(code, "user_code.py", "exec", dont_inherit=True)
        tree = ast.parse(code)
    except SyntaxError as exc:
        issue = _issue("error", "syntax", f"syntax error: {exc.msg}", exc.lineno)
        return CheckCodeOutput(is_valid=False, issues=[issue])
    except ValueError as exc:  # e.g. NUL bytes
        return CheckCodeOutput(is_valid=False, issues=[_issue("error", "syntax", str(exc))])
    issues: list[CodeIssue] = []
    functions = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function_name
    ]
    if not functions:
        issues.append(
            _issue("error", "missing-function", f"no module-level function named `{function_name}`")
        )
    elif isinstance(functions[-1], ast.AsyncFunctionDef):
        issues.append(
            _issue(
                "error",
                "async-function",
                f"`{function_name}` is async; write a plain `def`",
                functions[-1].lineno,
            )
        )
    else:
        issues += _function_issues(functions[-1])
    issues += _import_issues(tree, allowed_modules)
    if lint:
        issues += ruff_issues(code, timeout=lint_timeout)
    issues.sort(key=lambda i: (i.severity != "error", i.line or 0))
    return CheckCodeOutput(is_valid=not any(i.severity == "error" for i in issues), issues=issues)
