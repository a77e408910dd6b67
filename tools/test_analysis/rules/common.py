"""Shared pieces of the rule families: compiled config, the finding emitter, AST helpers."""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tools.test_analysis.catalogue import SMELLS
from tools.test_analysis.parsing import ParsedFile, ParsedTree
from tools.test_analysis.schemas import AnalysisConfig, Finding, Source
from tools.test_analysis.templates import generic_suggestion

HelperMatcher = Callable[[str], bool]


def _is_plain(text: str) -> bool:
    return not any(c in text for c in "*?[]")


@functools.lru_cache(maxsize=64)
def helper_matcher(patterns: tuple[str, ...]) -> HelperMatcher:
    """Compile fnmatch-style ``patterns`` into a fast predicate (cached per distinct tuple).

    Patterns of the form ``prefix*`` (the common case) become one ``str.startswith`` with a
    tuple; exact names a set lookup; anything else one compiled regex. The predicate is a
    closure, not a method, because it runs for every call in every test.
    """
    exact_set: set[str] = set()
    prefix_list: list[str] = []
    complex_: list[str] = []
    for p in patterns:
        if _is_plain(p):
            exact_set.add(p)
        elif p.endswith("*") and _is_plain(p[:-1]):
            prefix_list.append(p[:-1])
        else:
            complex_.append(fnmatch.translate(p))
    exact = frozenset(exact_set)
    prefixes = tuple(prefix_list)
    match = re.compile("|".join(f"(?:{c})" for c in complex_)).match if complex_ else None

    def is_helper(name: str) -> bool:
        if name in exact or (prefixes and name.startswith(prefixes)):
            return True
        return match is not None and match(name) is not None

    return is_helper


@dataclass(frozen=True, slots=True)
class RuleConfig:
    """An :class:`AnalysisConfig` prepared for the hot path."""

    config: AnalysisConfig
    is_helper: HelperMatcher
    enabled: frozenset[str]
    allowed_numbers: frozenset[float]
    ignored_keywords: frozenset[str]
    default_test_names: frozenset[str]
    #: The strict profile: every smell by its literal catalogue definition.
    strict: bool


#: Smells the default profile still leaves out: in three rounds of hand judging on real suites
#: (bench/precision.py) maintainers dismissed nearly all of them (sensitive-equality 0 of 6,
#: test-maverick 0 of 4, obscure-setup 1 of 4, lack-of-cohesion 0 of 1), and no judging line
#: names a class of theirs worth fixing (bench/data/frozen/README.md calls str()/repr() under
#: test and one-subject classes wrong). magic-number and verbose-test are on since issue 28:
#: their rules tell the intended case (bound values, sentinels, statuses; a long but single
#: scenario) from the smell themselves; general-fixture since its rule keeps only dead set-up
#: state (a field no test uses), the one class a labeler called worth fixing.
#: ``config.enable`` brings any of these back.
DEFAULT_OFF = frozenset(
    {
        "sensitive-equality",
        "obscure-setup",
        "test-maverick",
        "lack-of-cohesion",
    }
)


@functools.lru_cache(maxsize=64)
def rule_config(config: AnalysisConfig) -> RuleConfig:
    """Compile ``config`` once (AnalysisConfig is frozen and hashable)."""
    off = frozenset() if config.profile == "strict" else DEFAULT_OFF - frozenset(config.enable)
    return RuleConfig(
        config=config,
        is_helper=helper_matcher(tuple(config.assertion_helpers)),
        enabled=frozenset(SMELLS) - frozenset(config.ignore) - off,
        allowed_numbers=frozenset(config.magic_number_allowed),
        ignored_keywords=frozenset(config.magic_number_ignored_keywords) | {"msg", "err_msg"},
        default_test_names=frozenset(config.default_test_names),
        strict=config.profile == "strict",
    )


@dataclass(slots=True)
class Emitter:
    """Collects findings of one file, dropping smells that are not enabled."""

    parsed: ParsedFile
    syntax: ParsedTree
    rc: RuleConfig
    findings: list[Finding] = field(default_factory=list)
    #: Share of the file's tests that print (computed on first use by redundant-print).
    print_share: float | None = None
    #: Module-level ``NAME = <value>`` assignments by name (computed on first use by
    #: magic-number: numbers a test sets up through a module constant).
    module_values: dict[str, ast.expr] | None = None

    def on(self, smell_id: str) -> bool:
        """Whether ``smell_id`` is enabled (rules skip work for ignored smells)."""
        return smell_id in self.rc.enabled

    def emit(
        self,
        smell_id: str,
        line: int,
        end_line: int | None,
        message: str,
        *,
        confidence: float = 1.0,
        context: dict[str, str] | None = None,
    ) -> None:
        """Record a finding with the catalogue's default severity and a generic suggestion."""
        if smell_id not in self.rc.enabled:
            return
        entry = SMELLS[smell_id]
        self.findings.append(
            Finding(
                file=self.parsed.path,
                line=line,
                end_line=max(end_line or line, line),
                smell=smell_id,
                severity=entry.severity,
                message=message,
                suggestion=generic_suggestion(smell_id),
                confidence=confidence,
                source=Source.RULE,
                context=context or {},
            )
        )

    def emit_node(
        self,
        smell_id: str,
        node: ast.AST,
        message: str,
        *,
        confidence: float = 1.0,
        context: dict[str, str] | None = None,
    ) -> None:
        """:meth:`emit` at the line range of ``node``."""
        line: int = getattr(node, "lineno", 1)
        self.emit(
            smell_id,
            line,
            getattr(node, "end_lineno", None) or line,
            message,
            confidence=confidence,
            context=context,
        )


# --------------------------------------------------------------------------- AST helpers


#: Fields that hold no node a rule looks for: expression contexts, operators, names.
_NO_NODES = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "names"})
_WALK_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (same breadth-first order) without expression contexts, operators and
    import aliases.

    ``ast.walk`` goes through two generators and a ``getattr`` per field of every node; the
    rules that scan whole tests for calls, branches or awaits spent most of their time
    there. A per-type table of the fields that can hold nodes makes the scan ~3x cheaper.
    """
    todo = [node]
    append = todo.append
    fields_of = _WALK_FIELDS
    AST = ast.AST
    for n in todo:  # the list grows while it is iterated: breadth first, like ast.walk
        yield n
        t = type(n)
        fields = fields_of.get(t)
        if fields is None:
            fields = tuple(f for f in t._fields if f not in _NO_NODES)
            fields_of[t] = fields
        for name in fields:
            value = getattr(n, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        append(item)
            elif isinstance(value, AST):
                append(value)


def dotted_name(expr: ast.expr) -> str:
    """``a.b.c`` for Name/Attribute chains (calls are looked through: ``a().b`` -> ``a.b``)."""
    parts: list[str] = []
    node: ast.expr = expr
    while True:
        t = type(node)
        if t is ast.Attribute:
            parts.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif t is ast.Call:
            node = node.func  # type: ignore[attr-defined]
        elif t is ast.Name:
            parts.append(node.id)  # type: ignore[attr-defined]
            break
        else:
            break
    return ".".join(reversed(parts))


def call_name(node: ast.Call) -> str:
    """The called name: ``f`` for ``f()``, ``m`` for ``x.y.m()``; '' otherwise."""
    f = node.func
    if type(f) is ast.Attribute:
        return f.attr
    if type(f) is ast.Name:
        return f.id
    return ""


def literal_value(node: ast.AST) -> tuple[bool, object]:
    """``(True, value)`` when ``node`` is a literal (constants, signed numbers, containers)."""
    t = type(node)
    if t is ast.Constant:
        return True, node.value  # type: ignore[attr-defined]
    if t is ast.UnaryOp and type(node.operand) is ast.Constant:  # type: ignore[attr-defined]
        op = type(node.op)  # type: ignore[attr-defined]
        value: Any = node.operand.value  # type: ignore[attr-defined]
        if op is ast.USub and _is_number(value):
            return True, -value
        if op is ast.UAdd and _is_number(value):
            return True, value
        if op is ast.Not:
            return True, not value
        return False, None
    if t in (ast.Tuple, ast.List, ast.Set):
        values = []
        for elt in node.elts:  # type: ignore[attr-defined]
            ok, item = literal_value(elt)
            if not ok:
                return False, None
            values.append(item)
        return True, tuple(values)
    return False, None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | complex) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A numeric literal value (bool excluded, although bool is an int)."""
    return _is_number(value)


_IMPURE = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


def is_pure(node: ast.AST, allow: frozenset[str] = frozenset()) -> bool:
    """No calls (but of the names in ``allow``), awaits, yields or walrus inside: evaluating
    it twice gives the same value."""
    for n in ast.walk(node):
        if isinstance(n, _IMPURE):
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in allow:
                continue
            return False
    return True


def same_expr(a: ast.AST, b: ast.AST) -> bool:
    """Structural equality (positions ignored)."""
    return type(a) is type(b) and ast.dump(a) == ast.dump(b)


def names_in(target: ast.AST) -> set[str]:
    """The names in ``target`` (a loop's or comprehension's target, an expression)."""
    return {n.id for n in ast.walk(target) if type(n) is ast.Name}


def within(node: ast.AST, ctrl: ast.AST) -> bool:
    """``node`` starts on one of the lines of ``ctrl``."""
    line = getattr(node, "lineno", 0)
    return ctrl.lineno <= line <= (ctrl.end_lineno or ctrl.lineno)  # type: ignore[attr-defined]


def segment(parsed: ParsedFile, node: ast.AST, limit: int = 120) -> str:
    """Source text of ``node`` (first line only for multi-line nodes), shortened to ``limit``."""
    line = getattr(node, "lineno", 0)
    text = parsed.line_text(line)
    if not text:
        return ""
    start = getattr(node, "col_offset", 0)
    end_line = getattr(node, "end_lineno", line)
    end = getattr(node, "end_col_offset", None) if end_line == line else None
    # col offsets are UTF-8 byte offsets; slice bytes so non-ASCII lines stay aligned.
    raw = text.encode("utf-8", "surrogatepass")
    out = raw[start:end].decode("utf-8", "replace").strip()
    if end_line != line:
        out += " ..."
    return out if len(out) <= limit else out[: limit - 3] + "..."


def source_text(parsed: ParsedFile, node: ast.AST) -> str:
    """Exact source of ``node`` (all its lines); '' when positions are missing."""
    line: int = getattr(node, "lineno", 0)
    end_line: int = getattr(node, "end_lineno", None) or line
    start, end = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", None)
    lines = parsed.lines[line - 1 : end_line] if line else []
    if not lines:
        return ""
    # col offsets count UTF-8 bytes; ASCII lines (nearly all code) can be sliced directly.
    if all(text.isascii() for text in lines):
        if len(lines) == 1:
            return lines[0][start:end]
        return "\n".join([lines[0][start:], *lines[1:-1], lines[-1][:end]])
    raw = [text.encode("utf-8", "surrogatepass") for text in lines]
    if len(raw) == 1:
        return raw[0][start:end].decode("utf-8", "replace")
    joined = b"\n".join([raw[0][start:], *raw[1:-1], raw[-1][:end]])
    return joined.decode("utf-8", "replace")


def join_names(names: Iterable[str], limit: int = 5) -> str:
    """``a, b, c`` (sorted), with ``and N more`` past ``limit``."""
    items = sorted(names)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
