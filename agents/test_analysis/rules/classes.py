"""Class-level rules: constructor init, default test, general fixture, test maverick, lack of
cohesion; plus skip markers on classes and ``pytestmark`` assignments."""

from __future__ import annotations

import ast
import functools
import math
import re

from agents.test_analysis.parsing import TestClass, base_name
from agents.test_analysis.rules.body import check_ignored_decorators, skip_marker
from agents.test_analysis.rules.common import Emitter, join_names
from agents.test_analysis.rules.facts import TestFacts

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: Words every test shares; counting them would make unrelated tests look cohesive.
_STOPWORDS = frozenset(
    {
        "self",
        "cls",
        "test",
        "tests",
        "assert",
        "true",
        "false",
        "none",
        "is",
        "in",
        "not",
        "of",
        "to",
        "a",
        "the",
        "and",
        "or",
        "with",
        "for",
        "len",
        "str",
        "int",
        "list",
        "dict",
        "set",
        "equal",
        "equals",
        "raises",
        "pytest",
        "np",
        "mock",
        "called",
        "once",
        "fail",
        "almost",
        "instance",
        "greater",
        "less",
        "regex",
        "count",
        "items",
        "value",
        "values",
        "result",
    }
)


def check_class_rules(em: Emitter, cls: TestClass, facts: list[TestFacts]) -> None:
    """All class-level rules for ``cls`` given the facts of its tests."""
    node = cls.node
    end = node.end_lineno or node.lineno
    init = cls.methods.get("__init__")
    if init is not None:
        em.emit(
            "constructor-init",
            init.lineno,
            init.end_lineno,
            f"{cls.name} defines __init__; test runners construct test classes themselves, so "
            "set-up belongs in setUp or a fixture.",
            context={"cls": cls.name},
        )
    if cls.name in em.rc.default_test_names:
        em.emit(
            "default-test",
            node.lineno,
            end,
            f"{cls.name} keeps a template name that says nothing about what it tests.",
            context={"cls": cls.name},
        )
    if em.on("ignored-test"):
        check_ignored_decorators(em, node.decorator_list, cls.name, node.lineno, end)
        for stmt in node.body:
            if type(stmt) is ast.Assign and any(
                type(t) is ast.Name and t.id == "pytestmark" for t in stmt.targets
            ):
                check_pytestmark(em, stmt, cls.name)
    if cls.setup_methods and facts and (em.on("general-fixture") or em.on("test-maverick")):
        _fixture_rules(em, cls, facts)
    if em.on("lack-of-cohesion") and len(facts) >= em.rc.config.lack_of_cohesion_min_tests:
        _cohesion(em, cls, facts)


def check_pytestmark(em: Emitter, assign: ast.Assign, subject: str) -> None:
    """ignored-test for ``pytestmark = pytest.mark.skip`` (single mark or a list of marks)."""
    value = assign.value
    marks = value.elts if type(value) in (ast.List, ast.Tuple) else [value]  # type: ignore[attr-defined]
    skips = [m for m in marks if skip_marker(m, em.syntax) is not None]
    if skips:
        check_ignored_decorators(em, skips, subject, assign.lineno, assign.end_lineno or 0)


# --------------------------------------------------------------------------- fixtures


def _self_attrs(func: ast.AST) -> tuple[set[str], set[str], set[str]]:
    """``(stored, loaded, receivers)`` attributes of ``self``/``cls`` in ``func``; receivers
    are fields whose methods are called (``self.patcher.start()``)."""
    stored: set[str] = set()
    loaded: set[str] = set()
    receivers: set[str] = set()
    for n in ast.walk(func):
        if type(n) is ast.Attribute and type(n.value) is ast.Name and n.value.id in ("self", "cls"):
            (stored if type(n.ctx) is ast.Store else loaded).add(n.attr)
        elif type(n) is ast.Call and type(n.func) is ast.Attribute:
            owner = n.func.value
            if (
                type(owner) is ast.Attribute
                and type(owner.value) is ast.Name
                and owner.value.id in ("self", "cls")
            ):
                receivers.add(owner.attr)
    return stored, loaded, receivers


_PLAIN_BASES = frozenset({"object", "ABC"})


def _may_inherit_tests(cls: TestClass) -> bool:
    """Tests may come from a base class (mixins, ``class TestPhilox(Base)``), and they may
    be the ones using the fixture's fields."""
    for base in cls.node.bases:
        name = base_name(base)
        if name and name not in _PLAIN_BASES and not name.endswith("TestCase"):
            return True
    return False


def _fixture_rules(em: Emitter, cls: TestClass, facts: list[TestFacts]) -> None:
    fields: set[str] = set()
    plumbing: set[str] = set()
    setup_with_fields = None
    for method in cls.setup_methods:
        stored, _, receivers = _self_attrs(method)
        if stored and setup_with_fields is None:
            setup_with_fields = method
        fields |= stored
        plumbing |= receivers
    for method in cls.teardown_methods:
        plumbing |= _self_attrs(method)[1]
    if not fields or setup_with_fields is None:
        return
    # Fields the fixture drives itself (patchers it starts, resources teardown closes) are
    # plumbing: tests are not expected to touch them, so they do not make a General Fixture.
    data_fields = fields - plumbing
    helpers = {
        name
        for name in cls.methods
        if not name.startswith("test") and name not in ("setUp", "tearDown", "__init__")
    }
    usage: list[tuple[TestFacts, set[str]]] = []
    for f in facts:
        if f.self_calls & helpers:
            used = set(fields)  # a helper method may use any field
        else:
            used = f.self_loads & fields
        usage.append((f, used))
    setup_name = setup_with_fields.name
    if em.on("test-maverick") and data_fields:
        for f, used in usage:
            if not used:
                t = f.test
                em.emit(
                    "test-maverick",
                    t.line,
                    t.end_line,
                    f"{t.name} uses none of the fields {setup_name} sets "
                    f"({join_names(data_fields, 3)}), yet pays for that set-up.",
                    confidence=0.7,
                    context={
                        "test": t.name,
                        "fields": join_names(data_fields, 3),
                        "setup": setup_name,
                        "test_plain": t.name,
                    },
                )
    if em.on("general-fixture") and data_fields and not _may_inherit_tests(cls):
        unused = {name for name in data_fields if any(name not in used for _, used in usage)}
        if unused:
            missing = sum(1 for _, used in usage if not data_fields <= used)
            em.emit(
                "general-fixture",
                setup_with_fields.lineno,
                setup_with_fields.end_lineno,
                f"{setup_name} sets {join_names(unused, 3)}, which {missing} of {len(usage)} "
                "tests never use.",
                confidence=0.7,
                context={
                    "setup": setup_name,
                    "fields": join_names(unused, 3),
                    "first_field": sorted(unused)[0],
                    "unused_by": str(missing),
                    "tests": str(len(usage)),
                    "cls": cls.name,
                },
            )


# --------------------------------------------------------------------------- cohesion


@functools.lru_cache(maxsize=65536)
def _words(token: str) -> tuple[str, ...]:
    return tuple(
        w
        for w in (m.lower() for m in _WORD.findall(token))
        if len(w) > 1 and w not in _STOPWORDS and not w.isdigit()
    )


def _vector(f: TestFacts) -> dict[str, float]:
    counts: dict[str, int] = {}
    get = counts.get
    for token in (*(f.tokens or ()), f.test.name):
        if token.startswith("assert"):
            continue
        for word in _words(token):
            counts[word] = get(word, 0) + 1
    norm = math.sqrt(sum(c * c for c in counts.values()))
    return {w: c / norm for w, c in counts.items()} if norm else {}


def cohesion(facts: list[TestFacts]) -> float:
    """Mean pairwise cosine similarity of the tests' token vectors (0 = unrelated).

    With unit vectors u_i, the sum over pairs of u_i . u_j is (|sum u|^2 - sum |u_i|^2) / 2,
    so the mean costs O(n * vocabulary) instead of O(n^2) pair products.
    """
    n = len(facts)
    if n < 2:
        return 1.0
    total: dict[str, float] = {}
    self_dot = 0.0
    for f in facts:
        vec = _vector(f)
        if vec:
            self_dot += 1.0
        for w, v in vec.items():
            total[w] = total.get(w, 0.0) + v
    pair_sum = (sum(v * v for v in total.values()) - self_dot) / 2
    return max(0.0, min(1.0, pair_sum / (n * (n - 1) / 2)))


def _cohesion(em: Emitter, cls: TestClass, facts: list[TestFacts]) -> None:
    score = 1.0 - cohesion(facts)
    if score < em.rc.config.lack_of_cohesion_threshold:
        return
    node = cls.node
    stem = cls.name[4:] if cls.name.startswith("Test") else cls.name
    em.emit(
        "lack-of-cohesion",
        node.lineno,
        node.end_lineno,
        f"The {len(facts)} tests of {cls.name} share little vocabulary (1 - mean similarity = "
        f"{score:.2f}), so the class likely tests several unrelated things.",
        confidence=0.6,
        context={"cls": cls.name, "score": f"{score:.2f}", "cls_stem": stem or "Unit"},
    )
