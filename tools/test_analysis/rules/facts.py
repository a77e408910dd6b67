"""One traversal per test: collect every fact the test-level rules need.

The rules never walk a test themselves. :func:`collect_facts` visits each node of a test's
body once (iteratively, so deep nesting cannot overflow the stack), skipping nodes no rule
looks at (expression contexts, operators), and records assertions, control flow around them,
try/raise, print/sleep/resource calls, assigned names, ``self`` attribute use and tokens.

Over 400 lines because it is one visitor: `FactCollector` records every fact in one traversal, so
its handlers share the collector's state and the `TestFacts` record they fill.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from tools.test_analysis.parsing import ParsedTree, TestFunction
from tools.test_analysis.rules.common import RuleConfig
from tools.test_analysis.rules.helpers import PYTEST_ASSERTS, HelperResolver, decorator_name
from tools.test_analysis.rules.kinds import GUEST_NAMES, HELPERISH_PREFIXES, MOCK_NAMES

PYTEST_SKIPS = frozenset({"skip"})
SLEEP_MODULES = frozenset({"time", "asyncio", "trio", "anyio", "gen"})
#: ``self.<name>()`` waits of async test frameworks that fail the test on timeout (tornado's
#: and Twisted's ``AsyncTestCase.wait``): they check that the awaited event happened.
FRAMEWORK_WAITS = frozenset({"wait", "wait_for", "wait_until", "waitUntil"})
#: Context managers that fail the test when the expected thing (a log line, a warning) is
#: missing: tornado's ``ExpectLog``, ``expect_log``-style helpers.
EXPECTING_PREFIXES = ("Expect", "expect_", "expecting")

_CONTROL = frozenset(
    {
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
        ast.Match,
    }
)
_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_STMT = frozenset(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.stmt))
_SKIP_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "type_comment",
        "id",
        "attr",
        "arg",
        "name",
        "names",
        "kind",
        "module",
        "level",
        "is_async",
        "conversion",
        "tag",
        "type_ignores",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}

F_NESTED = 1  # inside a def/lambda/class nested in the test
F_TRY = 2  # inside a try statement that has handlers
F_EXPECT = 4  # inside `with pytest.raises(...)` / `with self.assertRaises(...)`
F_LABEL = 8  # inside `with self.subTest(<label>):`: a failure names its case
#: inside the block of another context manager (``with ctx.scope():``, ``with attempt:``):
#: a raise there is fed to that manager, the stimulus of the test
F_MANAGED = 16
_EXPECTING = frozenset(
    {
        "raises",
        "assertRaises",
        "assertRaisesRegex",
        "assertRaisesRegexp",
        "warns",
        "assertWarns",
        "assertWarnsRegex",
    }
)


def _child_fields(t: type) -> tuple[str, ...]:
    fields = _FIELDS.get(t)
    if fields is None:
        fields = tuple(f for f in t._fields if f not in _SKIP_FIELDS)  # type: ignore[attr-defined]
        _FIELDS[t] = fields
    return fields


@dataclass(eq=False, slots=True)
class Assertion:
    """An assertion in a test. ``kind``: assert | unittest | pytest | helper | local | raise."""

    node: ast.AST
    kind: str
    name: str
    #: Inside a def/lambda nested in the test (a callback, or a test of an assertion helper).
    nested: bool = False
    #: Used as a context manager (``with self.assertLogs(...):``): guards a block.
    guard: bool = False
    #: Inside a labelled ``subTest`` block: unittest reports the label with the failure.
    labelled: bool = False


@dataclass(eq=False, slots=True)
class TestFacts:
    """Everything the test-level rules need about one test."""

    __test__ = False

    test: TestFunction
    assertions: list[Assertion] = field(default_factory=list)
    #: Outermost if/for/while/comprehension nodes that contain an assertion, by id.
    control_hits: dict[int, ast.AST] = field(default_factory=dict)
    #: ids of the control nodes among them that sit in a def nested in the test (a stub).
    nested_controls: set[int] = field(default_factory=set)
    tries: list[ast.AST] = field(default_factory=list)
    raises: list[ast.Raise] = field(default_factory=list)
    prints: list[ast.Call] = field(default_factory=list)
    sleeps: list[tuple[ast.Call, str]] = field(default_factory=list)
    guests: list[tuple[ast.Call, str, str]] = field(default_factory=list)
    #: (node, conditional, has_reason) of imperative skips: pytest.skip, skipTest, SkipTest.
    skips: list[tuple[ast.AST, bool, bool]] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)
    #: Names the test reads (anywhere, nested code included).
    loaded: set[str] = field(default_factory=set)
    self_loads: set[str] = field(default_factory=set)
    self_calls: set[str] = field(default_factory=set)
    statements: int = 0
    #: Statements inside defs/classes nested in the test (a schema class, a callback).
    nested_statements: int = 0
    #: First lines of every statement (duplicate-assert looks for state changes in between).
    stmt_lines: list[int] = field(default_factory=list)
    tokens: list[str] | None = None
    mentions_mock: bool = False
    helperish_calls: bool = False
    #: ``self.<method>()`` calls to methods neither the class nor a base class of this file
    #: defines (inherited from elsewhere: they may use any fixture field).
    inherited_calls: set[str] = field(default_factory=set)
    #: Names bound in the test by ``with ... as <names>`` on a call (an in-test server,
    #: a temporary directory): mystery-guest treats what comes from them as local.
    with_names: set[str] = field(default_factory=set)
    #: Local name -> value assigned inside a def nested in the test (its own loops' tables).
    nested_bindings: dict[str, ast.expr] = field(default_factory=dict)
    #: Numbers the test writes down (magic-number's default profile; computed on demand).
    numbers: dict[Any, int] | None = None
    #: Local name -> the expression assigned to it (first assignment; mystery-guest follows
    #: a URL or path back to where it came from).
    bindings: dict[str, ast.expr] = field(default_factory=dict)
    #: The test's own input names (sensitive-equality; computed on demand).
    inputs: set[str] | None = None


class FactCollector(HelperResolver):
    """Collects :class:`TestFacts` for the tests of one file under one config."""

    def __init__(self, syntax: ParsedTree, rc: RuleConfig) -> None:
        self.syntax = syntax
        self.rc = rc
        self.infer = rc.config.infer_local_helpers
        self._asserts_memo: dict[int, bool] = {}

    # ------------------------------------------------------------------ the traversal

    def collect(self, test: TestFunction, *, want_tokens: bool = False) -> TestFacts:
        """Visit ``test``'s body once and return its facts."""
        facts = TestFacts(test)
        tokens: list[str] | None = [] if want_tokens else None
        facts.tokens = tokens
        assertions = facts.assertions
        hits = facts.control_hits
        assigned = facts.assigned
        loaded = facts.loaded
        stmt_lines = facts.stmt_lines
        body = test.node.body
        # Three parallel stacks instead of a stack of (node, ctrl, flags) tuples: a tuple per
        # node is a GC-tracked allocation, and the collections it triggers cost more than
        # the traversal itself on large files.
        nodes: list[ast.AST] = list(body)
        ctrls: list[ast.AST | None] = [None] * len(body)
        flag_stack: list[int] = [0] * len(body)
        push_node, push_ctrl, push_flags = nodes.append, ctrls.append, flag_stack.append
        pop_node, pop_ctrl, pop_flags = nodes.pop, ctrls.pop, flag_stack.pop
        statements = 0
        guards: set[int] = set()
        gen_test = any(decorator_name(d) == "gen_test" for d in test.node.decorator_list)
        Name, Attribute, Call, Assert = ast.Name, ast.Attribute, ast.Call, ast.Assert
        Store = ast.Store
        fields_of = _FIELDS
        while nodes:
            node = pop_node()
            ctrl = pop_ctrl()
            flags = pop_flags()
            t = type(node)
            if t is Name:
                ident = node.id  # type: ignore[attr-defined]
                if tokens is not None:
                    tokens.append(ident)
                if type(node.ctx) is Store:  # type: ignore[attr-defined]
                    if not flags & F_NESTED:
                        assigned.add(ident)
                else:
                    loaded.add(ident)
                    if ident in MOCK_NAMES:
                        facts.mentions_mock = True
                continue
            if t is Attribute:
                value = node.value  # type: ignore[attr-defined]
                attr = node.attr  # type: ignore[attr-defined]
                if tokens is not None:
                    tokens.append(attr)
                if type(value) is Name and value.id in ("self", "cls"):
                    if type(node.ctx) is not Store:  # type: ignore[attr-defined]
                        facts.self_loads.add(attr)
                    continue
                if attr in MOCK_NAMES:
                    facts.mentions_mock = True
                push_node(value)
                push_ctrl(ctrl)
                push_flags(flags)
                continue
            if t is ast.Constant:
                continue
            child_ctrl = ctrl
            child_flags = flags
            if t is Call:
                kind = self._call(node, ctrl, flags, facts)  # type: ignore[arg-type]
                if kind is not None:
                    assertions.append(
                        Assertion(
                            node,
                            kind,
                            _name_of(node),  # type: ignore[arg-type]
                            bool(flags & F_NESTED),
                            id(node) in guards,
                            bool(flags & F_LABEL),
                        )
                    )
                    if ctrl is not None and kind != "framework":
                        hits[id(ctrl)] = ctrl
            elif (t is ast.Await or t is ast.Yield) and gen_test and not flags & F_NESTED:
                # `yield event.wait()` under @gen_test: the test fails when the event never
                # comes (gen_test's timeout), so the wait checks something.
                value = node.value  # type: ignore[attr-defined]
                if type(value) is Call and _name_of(value).startswith("wait"):
                    assertions.append(Assertion(value, "framework", _name_of(value)))
            elif t in _STMT:
                statements += 1
                if flags & F_NESTED:
                    facts.nested_statements += 1
                stmt_lines.append(node.lineno)  # type: ignore[attr-defined]
                if t is Assert:
                    assertions.append(
                        Assertion(
                            node,
                            "assert",
                            "assert",
                            bool(flags & F_NESTED),
                            labelled=bool(flags & F_LABEL),
                        )
                    )
                    if ctrl is not None:
                        hits[id(ctrl)] = ctrl
                elif t is ast.If or t is ast.For or t is ast.While or t is ast.AsyncFor:
                    if ctrl is None:
                        child_ctrl = node
                        if flags & F_NESTED:
                            facts.nested_controls.add(id(node))
                    if t is not ast.If and t is not ast.While and not flags & F_NESTED:
                        for name in _target_names(node.target):  # type: ignore[attr-defined]
                            facts.bindings.setdefault(name, node.iter)  # type: ignore[attr-defined]
                elif t is ast.Assign and flags & F_NESTED:
                    for target in node.targets:  # type: ignore[attr-defined]
                        if type(target) is Name:
                            facts.nested_bindings.setdefault(target.id, node.value)  # type: ignore[attr-defined]
                elif t is ast.Assign:
                    for target in node.targets:  # type: ignore[attr-defined]
                        if type(target) is Name:
                            facts.bindings.setdefault(target.id, node.value)  # type: ignore[attr-defined]
                        elif type(target) is ast.Tuple:
                            # `host, port = server.address`: every name comes from the value
                            for name in _target_names(target):
                                facts.bindings.setdefault(name, node.value)  # type: ignore[attr-defined]
                elif t is ast.AnnAssign and not flags & F_NESTED:
                    # `count: Final = 200`
                    target = node.target  # type: ignore[attr-defined]
                    if type(target) is Name and node.value is not None:  # type: ignore[attr-defined]
                        facts.bindings.setdefault(target.id, node.value)  # type: ignore[attr-defined]
                elif t is ast.Try or t is ast.TryStar:
                    if node.handlers:  # type: ignore[attr-defined]
                        child_flags |= F_TRY
                        if not flags & (F_NESTED | F_TRY):
                            facts.tries.append(node)
                elif t is ast.Raise:
                    self._raise(node, ctrl, flags, facts)  # type: ignore[arg-type]
                elif t is ast.With or t is ast.AsyncWith:
                    managers = _with_names(node)  # type: ignore[arg-type]
                    for item in node.items:  # type: ignore[attr-defined]
                        if type(item.context_expr) is Call:
                            guards.add(id(item.context_expr))
                            if item.optional_vars is not None and not flags & F_NESTED:
                                facts.with_names.update(_target_names(item.optional_vars))
                    if "subTest" in managers:
                        # `for case in cases: with self.subTest(case): ...` is unittest's own
                        # way to parametrise; it is not conditional test logic.
                        child_ctrl = None
                        if _labelled_subtest(node):  # type: ignore[arg-type]
                            child_flags |= F_LABEL
                    if not managers.isdisjoint(_EXPECTING):
                        child_flags |= F_EXPECT  # a raise in here is the code under test
                    elif "subTest" not in managers:
                        child_flags |= F_MANAGED
                elif t is ast.Match:
                    if ctrl is None:
                        child_ctrl = node
                elif t in _NESTED:
                    child_flags |= F_NESTED
            elif t in _CONTROL:  # comprehensions
                if ctrl is None:
                    child_ctrl = node
                for gen in node.generators:  # type: ignore[attr-defined]
                    # comprehension variables are not locals of the test
                    push_node(gen.target)
                    push_ctrl(child_ctrl)
                    push_flags(child_flags | F_NESTED)
                    for sub in (gen.iter, *gen.ifs):
                        push_node(sub)
                        push_ctrl(child_ctrl)
                        push_flags(child_flags)
                parts = (node.key, node.value) if t is ast.DictComp else (node.elt,)  # type: ignore[attr-defined]
                for sub in parts:
                    push_node(sub)
                    push_ctrl(child_ctrl)
                    push_flags(child_flags)
                continue
            elif t is ast.Lambda:
                child_flags |= F_NESTED
            for fname in fields_of.get(t) or _child_fields(t):
                value = getattr(node, fname)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            push_node(item)
                            push_ctrl(child_ctrl)
                            push_flags(child_flags)
                elif isinstance(value, ast.AST):
                    push_node(value)
                    push_ctrl(child_ctrl)
                    push_flags(child_flags)
        if body and _is_docstring(body[0]):
            statements -= 1
        facts.statements = statements
        return facts

    # ------------------------------------------------------------------ node handlers

    def _call(
        self, node: ast.Call, ctrl: ast.AST | None, flags: int, facts: TestFacts
    ) -> str | None:
        """Classify a call; returns the assertion kind or None (recording other facts)."""
        func = node.func
        tf = type(func)
        receiver: str | None = None
        if tf is ast.Attribute:
            name: str = func.attr  # type: ignore[attr-defined]
            value = func.value  # type: ignore[attr-defined]
            if type(value) is ast.Name:
                receiver = value.id
        elif tf is ast.Name:
            name = func.id  # type: ignore[attr-defined]
        else:
            return None
        syntax = self.syntax
        if receiver == "self" or receiver == "cls":
            facts.self_calls.add(name)
            if name.startswith(("assert", "fail")):
                return "unittest"
            if name == "skipTest":
                facts.skips.append((node, ctrl is not None or bool(flags), bool(node.args)))
                return None
            if name in FRAMEWORK_WAITS and not self._defined_here(name, facts.test.cls):
                return "framework"
        elif receiver == "pytest" or (tf is ast.Name and name in syntax.pytest_names):
            pname = name if receiver else syntax.pytest_names[name]
            if pname in PYTEST_ASSERTS:
                return "pytest"
            if pname in PYTEST_SKIPS:
                has_reason = bool(node.args) or any(
                    k.arg in ("reason", "msg") for k in node.keywords
                )
                facts.skips.append((node, ctrl is not None or bool(flags), has_reason))
                return None
        if self.rc.is_helper(name):
            return "helper"
        if name.startswith(EXPECTING_PREFIXES):
            return "framework"
        if name == "simplefilter" and node.args and _is_error_filter(node.args[0]):
            return "framework"  # warnings.simplefilter("error"): any warning fails the test
        if self.infer and self._is_local_helper(name, receiver, tf, facts.test.cls):
            return "local"
        if tf is ast.Name and self.suite_check(name):
            return "helper"
        if name == "benchmark" and self.infer and self._runs_a_check(node, facts):
            return "local"  # pytest-benchmark runs the asserting method it is given
        if tf is ast.Name and (name == "print" or name == "pprint"):
            if not flags & F_NESTED:  # a print in a nested def is code under test
                facts.prints.append(node)
        elif name == "sleep":
            if flags & F_NESTED:
                return None  # a handler's or callback's sleep is code under test, not a wait
            module = receiver if receiver in SLEEP_MODULES else None
            if module is None and tf is ast.Name:
                module = syntax.sleep_names.get(name)
            if module is not None:
                facts.sleeps.append((node, module))
        elif name in GUEST_NAMES and not flags & F_NESTED:
            # a nested def's open() is code under test (a command, a handler), not the test's
            # receiver: a module/variable name, "" for a bare call, "?" for a computed one
            facts.guests.append(
                (node, name, receiver if receiver is not None else ("" if tf is ast.Name else "?"))
            )
        elif name.startswith(HELPERISH_PREFIXES):
            facts.helperish_calls = True
        elif receiver == "self":
            cls = facts.test.cls
            if cls is not None and self.method(cls, name) is None:
                facts.helperish_calls = True  # an inherited helper might assert
                facts.inherited_calls.add(name)
        return None

    def _raise(self, node: ast.Raise, ctrl: ast.AST | None, flags: int, facts: TestFacts) -> None:
        exc = node.exc
        target = exc.func if type(exc) is ast.Call else exc
        name = ""
        if type(target) is ast.Name:
            name = target.id
        elif type(target) is ast.Attribute:
            name = target.attr
        if name == "SkipTest" or (
            name == "Exception" and target is not None and "skip" in ast.dump(target)
        ):
            has_reason = type(exc) is ast.Call and bool(exc.args)
            facts.skips.append((node, ctrl is not None or bool(flags), has_reason))
            return
        if name == "AssertionError":
            facts.assertions.append(Assertion(node, "raise", "AssertionError"))
            if ctrl is not None:
                facts.control_hits[id(ctrl)] = ctrl
        if not flags & (F_NESTED | F_TRY | F_EXPECT | F_MANAGED):
            facts.raises.append(node)

    def _runs_a_check(self, node: ast.Call, facts: TestFacts) -> bool:
        """``benchmark(self._check, ...)``: the first argument is a helper that asserts."""
        if not node.args:
            return False
        target = node.args[0]
        cls = facts.test.cls
        func: ast.AST | None = None
        if type(target) is ast.Name:
            func = self.syntax.functions.get(target.id)
        elif (
            type(target) is ast.Attribute
            and type(target.value) is ast.Name
            and target.value.id == "self"
            and cls is not None
        ):
            func = self.method(cls, target.attr)
        return func is not None and self.function_asserts(func, cls)

    # ------------------------------------------------------------------ local helpers


def _is_error_filter(arg: ast.expr) -> bool:
    return type(arg) is ast.Constant and arg.value == "error"


def _target_names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if type(n) is ast.Name]


def _name_of(node: ast.Call) -> str:
    func = node.func
    if type(func) is ast.Attribute:
        return func.attr
    if type(func) is ast.Name:
        return func.id
    return ""


def _with_names(node: ast.With | ast.AsyncWith) -> set[str]:
    """Called names of the context managers (``pytest.raises(E)`` -> ``raises``)."""
    names: set[str] = set()
    for item in node.items:
        expr = item.context_expr
        if type(expr) is ast.Call:
            func = expr.func
            if type(func) is ast.Attribute:
                names.add(func.attr)
            elif type(func) is ast.Name:
                names.add(func.id)
    return names


def _labelled_subtest(node: ast.With | ast.AsyncWith) -> bool:
    for item in node.items:
        expr = item.context_expr
        if type(expr) is ast.Call and _name_of(expr) == "subTest" and (expr.args or expr.keywords):
            return True
    return False


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        type(stmt) is ast.Expr
        and type(stmt.value) is ast.Constant
        and isinstance(stmt.value.value, str)
    )
