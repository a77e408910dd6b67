"""Class-level rules: constructor init, default test, general fixture, test maverick, lack of
cohesion; plus skip markers on classes and ``pytestmark`` assignments."""

from __future__ import annotations

import ast
import functools
import math
import re

from tools.test_analysis.parsing import TestClass
from tools.test_analysis.rules.body import check_ignored_decorators, skip_marker
from tools.test_analysis.rules.common import Emitter
from tools.test_analysis.rules.facts import FactCollector, TestFacts
from tools.test_analysis.rules.fixes import identifier
from tools.test_analysis.rules.fixtures import check_fixture_rules

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


def check_class_rules(
    em: Emitter, cls: TestClass, facts: list[TestFacts], collector: FactCollector
) -> None:
    """All class-level rules for ``cls`` given the facts of its tests."""
    node = cls.node
    end = node.end_lineno or node.lineno
    init = cls.methods.get("__init__")
    # Only unittest constructs its TestCase instances with arguments __init__ must pass on;
    # a Test* class with __init__ is not a test class to pytest (it is not collected).
    if init is not None and cls.kind == "unittest":
        em.emit(
            "constructor-init",
            init.lineno,
            init.end_lineno,
            f"{cls.name} defines __init__; test runners construct test classes themselves, so "
            "set-up belongs in setUp or a fixture.",
            context={"cls": cls.name},
        )
    if cls.name in em.rc.default_test_names and not _named_by_its_file(em, cls.name):
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
        check_fixture_rules(em, cls, facts, collector)
    if em.on("lack-of-cohesion") and len(facts) >= em.rc.config.lack_of_cohesion_min_tests:
        _cohesion(em, cls, facts)


def check_pytestmark(em: Emitter, assign: ast.Assign, subject: str) -> None:
    """ignored-test for ``pytestmark = pytest.mark.skip`` (single mark or a list of marks)."""
    value = assign.value
    marks = value.elts if type(value) in (ast.List, ast.Tuple) else [value]  # type: ignore[attr-defined]
    skips = [m for m in marks if skip_marker(m, em.syntax) is not None]
    if skips:
        conditional = id(assign) in em.syntax.conditional_marks  # `if is_pypy: pytestmark = ...`
        check_ignored_decorators(
            em, skips, subject, assign.lineno, assign.end_lineno or 0, conditional=conditional
        )


# --------------------------------------------------------------------------- fixtures


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


def _named_by_its_file(em: Emitter, name: str) -> bool:
    """``TestClass`` in ``test_class.py``: the name repeats what the file tests (the CSS
    class selector), so it is no template left unchanged."""
    stem = em.parsed.path.rsplit("/", 1)[-1].removesuffix(".py").lower()
    words = [w.lower() for w in _WORD.findall(name) if w.lower() != "test"]
    return bool(words) and stem.replace("_", "").removeprefix("test") == "".join(words)


def cohesion(facts: list[TestFacts], vectors: list[dict[str, float]] | None = None) -> float:
    """Mean pairwise cosine similarity of the tests' token vectors (0 = unrelated).

    With unit vectors u_i, the sum over pairs of u_i . u_j is (|sum u|^2 - sum |u_i|^2) / 2,
    so the mean costs O(n * vocabulary) instead of O(n^2) pair products.
    """
    n = len(facts)
    if n < 2:
        return 1.0
    total: dict[str, float] = {}
    self_dot = 0.0
    for i, f in enumerate(facts):
        vec = vectors[i] if vectors is not None else _vector(f)
        if vec:
            self_dot += 1.0
        for w, v in vec.items():
            total[w] = total.get(w, 0.0) + v
    pair_sum = (sum(v * v for v in total.values()) - self_dot) / 2
    return max(0.0, min(1.0, pair_sum / (n * (n - 1) / 2)))


#: default profile: lack-of-cohesion only below this cohesion (tests grouped by feature share
#: some vocabulary; below this they share almost none).
_DEFAULT_MAX_COHESION = 0.1


#: Words of locals every kind of test has: sharing them says nothing about a subject.
_GENERIC = frozenset(
    {"expected", "actual", "data", "obj", "res", "ret", "output", "out", "input", "args",
     "kwargs", "response", "exc", "err", "error", "info", "excinfo", "tmp", "path"}
)  # fmt: skip
#: One subject: a word in at least this share of the class's tests.
_SUBJECT_SHARE = 0.75


def _one_subject(vectors: list[dict[str, float]]) -> bool:
    """A word (a class, function or fixture the tests exercise: ``BytesLogger``, ``parse``,
    ``markup``) appears in nearly every test: the class tests one subject, its tests just
    exercise different sides of it (the textual distance comes from differing inputs)."""
    seen: dict[str, int] = {}
    for vec in vectors:
        for word in vec:
            if word not in _GENERIC:
                seen[word] = seen.get(word, 0) + 1
    need = math.ceil(_SUBJECT_SHARE * len(vectors))
    return any(count >= need for count in seen.values())


def _cohesion(em: Emitter, cls: TestClass, facts: list[TestFacts]) -> None:
    vectors = [_vector(f) for f in facts]
    similarity = cohesion(facts, vectors)
    score = 1.0 - similarity
    if score < em.rc.config.lack_of_cohesion_threshold:
        return
    if em.rc.config.lack_of_cohesion_threshold > 0 and _one_subject(vectors):
        # both profiles: not "unrelated things", one subject from several sides (a threshold
        # of 0 asks for every class, subject or not)
        return
    if not em.rc.strict and (similarity >= _DEFAULT_MAX_COHESION or len(facts) < 4):
        return  # default: only classes whose tests share (almost) nothing
    node = cls.node
    stem = cls.name[4:] if cls.name.startswith("Test") else cls.name
    # Print the cohesion itself (the mean similarity, 0 = unrelated), so the worst case
    # reads "cohesion 0.00", not the 1.00 of its complement.
    em.emit(
        "lack-of-cohesion",
        node.lineno,
        node.end_lineno,
        f"The {len(facts)} tests of {cls.name} share little vocabulary (cohesion "
        f"{similarity:.2f}: the mean similarity of their code, 0 = unrelated, 1 = the same; "
        f"reported below {1 - em.rc.config.lack_of_cohesion_threshold:.2f}), so the class "
        "likely tests several unrelated things.",
        confidence=0.6,
        context={
            "cls": cls.name,
            "score": f"{similarity:.2f}",
            "cohesion": f"{similarity:.2f}",
            "cls_stem": identifier(stem) or "Unit",
        },
    )
