"""general-fixture and test-maverick: set-up fields the tests do not use.

A field counts as used by a test when the test reads it, when a method the test calls reads
it (the class's own helpers, a base class's of this file, or an inherited one from elsewhere,
which may read any field: tornado's ``fetch()`` reads ``self.http_client``), when tearDown
reads it, or when the set-up itself reads it (infrastructure such as a socket path).

strict: general-fixture per set-up with unused fields; test-maverick per test that uses no
field. default: general-fixture only for dead set-up state, a field no test of the class uses
at all (a calibration labeler's call, CALIBRATION3A.md: worth fixing; a field some tests skip
is cheap to share and judged noise), not when a subclass in the file or a base class's tests
may use it; test-maverick (off by default, ``enable`` brings it back) once per unused field,
at its assignment, never for once-per-class set-up or classes whose tests may come from a
base class or mixin.
"""

from __future__ import annotations

import ast

from tools.test_analysis.parsing import TestClass, TestFunction, base_name
from tools.test_analysis.rules.common import Emitter, join_names
from tools.test_analysis.rules.facts import FactCollector, TestFacts
from tools.test_analysis.rules.fixes import identifier

__all__ = ["check_fixture_rules"]


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


_ONCE_PER_CLASS = frozenset({"setUpClass", "setup_class", "asyncSetUpClass"})


#: unittest.TestCase's own API: calling it reads no fixture field.
_CASE_API = frozenset(
    {
        "subTest",
        "skipTest",
        "addCleanup",
        "addClassCleanup",
        "enterContext",
        "doCleanups",
        "id",
        "shortDescription",
        "addTypeEqualityFunc",
        "run",
        "debug",
    }
)


def _may_inherit_tests(cls: TestClass) -> bool:
    """Tests may come from a base class (mixins, ``class TestPhilox(Base)``), and they may
    be the ones using the fixture's fields."""
    for base in cls.node.bases:
        name = base_name(base)
        if name and name not in _PLAIN_BASES and not name.endswith("TestCase"):
            return True
    return False


def _method_loads(
    collector: FactCollector, cls: TestClass, names: set[str], fields: set[str]
) -> set[str] | None:
    """Fields read by the helper methods ``names`` (following the helpers they call); None
    when one of them is inherited from outside this file (it may read any field)."""
    seen: set[str] = set()
    used: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        method = collector.method(cls, name)
        if method is None:
            return None
        _, loaded, _ = _self_attrs(method)
        used |= loaded & fields
        for n in ast.walk(method):
            if (
                type(n) is ast.Call
                and type(n.func) is ast.Attribute
                and type(n.func.value) is ast.Name
                and n.func.value.id == "self"
            ):
                todo.append(n.func.attr)
    return used


def check_fixture_rules(
    em: Emitter, cls: TestClass, facts: list[TestFacts], collector: FactCollector
) -> None:
    fields: set[str] = set()
    plumbing: set[str] = set()
    setup_with_fields = None
    for method in cls.setup_methods:
        stored, loaded, receivers = _self_attrs(method)
        if stored and setup_with_fields is None:
            setup_with_fields = method
        fields |= stored
        # a field set-up itself reads (self.sockfile passed to the server it starts) is
        # infrastructure of the fixture, like the receivers of its calls
        plumbing |= receivers | (loaded & stored)
    for method in cls.teardown_methods:
        plumbing |= _self_attrs(method)[1]  # fields tearDown uses are used
    if not fields or setup_with_fields is None:
        return
    # Fields the fixture drives itself (patchers it starts, resources teardown closes) are
    # plumbing: tests are not expected to touch them, so they do not make a General Fixture.
    data_fields = fields - plumbing
    usage: list[tuple[TestFacts, set[str]]] = []
    for f in facts:
        used = f.self_loads & fields
        # Methods the test calls (its class's, a base's, or inherited from elsewhere, like
        # tornado's fetch() using self.http_client) use the fields they read.
        called = {
            n for n in f.self_calls if not n.startswith(("assert", "fail")) and n not in _CASE_API
        }
        if called:
            via = _method_loads(collector, cls, called, fields)
            used = set(fields) if via is None else used | via
        usage.append((f, used))
    setup_name = setup_with_fields.name
    if em.on("test-maverick") and data_fields:
        mavericks = [f.test for f, used in usage if not used]
        if not em.rc.strict and _may_inherit_tests(cls):
            mavericks = []  # the set-up may be there for tests a mixin or base class adds
        if not em.rc.strict and setup_name in _ONCE_PER_CLASS:
            mavericks = []  # set up once for the class: no test pays for it
        if mavericks and em.rc.strict:
            for t in mavericks:
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
                        "advice": f"{t.name} uses none of {join_names(data_fields, 3)} set in "
                        f"{setup_name}: move it to a class or module without that set-up.",
                    },
                )
        elif mavericks:
            _maverick_per_field(em, cls, setup_with_fields, data_fields, mavericks)
    if em.on("general-fixture") and data_fields and not _may_inherit_tests(cls):
        unused = {name for name in data_fields if any(name not in used for _, used in usage)}
        dead = not em.rc.strict
        if dead:
            # default: only dead set-up state, a field no test of the class uses at all
            # (CALIBRATION3A.md: "worth-fixing as dead fixture state"); a field some tests
            # skip is cheap to share (noise), and a subclass in this file may use it
            unused = (
                {name for name in unused if all(name not in used for _, used in usage)}
                if usage and not _subclassed(em, cls)
                else set()
            )
        if unused:
            missing = sum(1 for _, used in usage if not data_fields <= used)
            message = (
                f"{setup_name} sets {join_names(unused, 3)} for every test, but no test "
                "uses it: dead set-up state."
                if dead
                else f"{setup_name} sets {join_names(unused, 3)} for every test, but "
                f"{missing} of {len(usage)} tests do not use all of them."
            )
            em.emit(
                "general-fixture",
                setup_with_fields.lineno,
                setup_with_fields.end_lineno,
                message,
                confidence=0.7,
                context={
                    "setup": setup_name,
                    "fields": join_names(unused, 3),
                    "fixture_example": _fixture_example(cls, sorted(unused)[0]),
                    "first_field": sorted(unused)[0],
                    "unused_by": str(missing),
                    "tests": str(len(usage)),
                    "cls": cls.name,
                },
            )


def _subclassed(em: Emitter, cls: TestClass) -> bool:
    """Another class of this file derives from ``cls`` (its tests may use the fields)."""
    return any(
        base_name(base) == cls.name
        for other in em.syntax.all_classes.values()
        if other is not cls.node
        for base in other.bases
    )


def _fixture_example(cls: TestClass, field_name: str) -> str:
    name = identifier(field_name) or "resource"
    if cls.kind == "unittest":
        return (
            f"def make_{name}(self):\n    return ...  # only the tests that use it call "
            f"self.make_{name}()"
        )
    return (
        f"@pytest.fixture\ndef {name}():\n    return ...  # only the tests that use it ask for it"
    )


def _maverick_per_field(
    em: Emitter,
    cls: TestClass,
    setup: ast.FunctionDef | ast.AsyncFunctionDef,
    fields: set[str],
    mavericks: list[TestFunction],
) -> None:
    """default profile: one finding per unused set-up field, at its assignment, naming the
    tests that use no field at all (not one finding per test)."""
    lines: dict[str, ast.AST] = {}
    for n in ast.walk(setup):
        if (
            type(n) is ast.Attribute
            and type(n.ctx) is ast.Store
            and type(n.value) is ast.Name
            and n.value.id in ("self", "cls")
            and n.attr in fields
        ):
            current = lines.get(n.attr)
            if current is None or n.lineno < current.lineno:  # type: ignore[attr-defined]
                lines[n.attr] = n
    names = [t.name for t in mavericks]
    shown = join_names(names, 3)
    for field_name in sorted(lines, key=lambda k: lines[k].lineno):  # type: ignore[attr-defined]
        node = lines[field_name]
        em.emit_node(
            "test-maverick",
            node,
            f"{setup.name} of {cls.name} sets self.{field_name} for every test, but "
            f"{len(names)} of its {cls.test_count} tests ({shown}) use no field of "
            f"{setup.name} at all and still pay for it.",
            confidence=0.7,
            context={
                "test": names[0],
                "tests": shown,
                "fields": field_name,
                "setup": setup.name,
                "test_plain": names[0],
                "advice": f"Move {shown} to a class or module without {setup.name} (they use "
                f"none of its fields), or build self.{field_name} only where it is needed.",
            },
        )
