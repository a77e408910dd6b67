"""Every smell of SMELLS.md: positive cases (id, line, severity) and negative cases."""

from __future__ import annotations

import pytest

from tests.test_analysis.support import lines_of, run_rules
from tools.test_analysis.catalogue import SMELLS, Severity

# (smell, case name, source, expected lines). Line 1 is the first line of the snippet.
POSITIVE: list[tuple[str, str, str, list[int]]] = [
    (
        "assertion-roulette",
        "pytest",
        """
        def test_totals():
            assert add(1, 2) == 3
            assert add(2, 2) == 4
        """,
        [1],
    ),
    (
        "assertion-roulette",
        "unittest, one message missing",
        """
        import unittest
        class TestAdd(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(1, 2), 3)
                self.assertEqual(add(2, 2), 4, "two plus two")
        """,
        [3],
    ),
    (
        "conditional-logic",
        "for loop",
        """
        def test_all_positive():
            for value in values():
                assert value > 0
        """,
        [2],
    ),
    (
        "conditional-logic",
        "if in unittest",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                result = compute()
                if result:
                    self.assertTrue(result.ok)
        """,
        [5],
    ),
    (
        "conditional-logic",
        "comprehension holding the assertion",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                [self.assertTrue(v) for v in values()]
        """,
        [4],
    ),
    (
        "conditional-logic",
        "while loop",
        """
        def test_drain(queue):
            while queue:
                assert queue.pop() is not None
        """,
        [2],
    ),
    (
        "constructor-init",
        "unittest",
        """
        import unittest
        class TestThing(unittest.TestCase):
            def __init__(self, *args):
                super().__init__(*args)
                self.thing = 1
            def test_thing(self):
                self.assertEqual(self.thing, 1)
        """,
        [3],
    ),
    (
        "default-test",
        "template name",
        """
        import unittest
        class MyTestCase(unittest.TestCase):
            def test_something(self):
                self.assertEqual(compute(), 1)
        """,
        [2],
    ),
    (
        "duplicate-assert",
        "pytest",
        """
        def test_twice():
            x = compute()
            assert x == 1
            assert x == 1
        """,
        [4],
    ),
    (
        "duplicate-assert",
        "unittest, different spacing",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                result = compute()
                self.assertEqual(result, 1)
                self.assertEqual(result,1)
        """,
        [6],
    ),
    (
        "empty-test",
        "pass",
        """
        def test_todo():
            pass
        """,
        [1],
    ),
    (
        "empty-test",
        "docstring and ellipsis",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_todo(self):
                \"\"\"Will check the parser.\"\"\"
                ...
        """,
        [3],
    ),
    (
        "exception-handling",
        "try/except",
        """
        def test_parse():
            try:
                parse("x")
            except ValueError:
                pass
        """,
        [2],
    ),
    (
        "exception-handling",
        "raise",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                if not compute():
                    raise ValueError("bad")
        """,
        [5],
    ),
    (
        "general-fixture",
        "unittest",
        """
        import unittest
        class TestThing(unittest.TestCase):
            def setUp(self):
                self.a = make_a()
                self.b = make_b()
            def test_a(self):
                self.assertEqual(self.a.x, 1)
            def test_b(self):
                self.assertEqual(self.b.y, 2)
        """,
        [3],
    ),
    (
        "general-fixture",
        "pytest setup_method",
        """
        class TestThing:
            def setup_method(self, method):
                self.a = make_a()
                self.b = make_b()
            def test_a(self):
                assert self.a.x == 1
            def test_b(self):
                assert self.a.x == 2 and self.b.y == 2
        """,
        [2],
    ),
    (
        "ignored-test",
        "bare pytest skip",
        """
        import pytest
        @pytest.mark.skip
        def test_later():
            assert compute() == 1
        """,
        [2],
    ),
    (
        "ignored-test",
        "unittest skip with reason (unconditional)",
        """
        import unittest
        class TestX(unittest.TestCase):
            @unittest.skip("flaky on CI")
            def test_x(self):
                self.assertEqual(compute(), 1)
        """,
        [3],
    ),
    (
        "ignored-test",
        "skipif without reason",
        """
        import sys, pytest
        @pytest.mark.skipif(sys.platform == "win32")
        def test_posix():
            assert compute() == 1
        """,
        [2],
    ),
    (
        "ignored-test",
        "imperative skip",
        """
        import pytest
        def test_later():
            pytest.skip("not ready")
            assert compute() == 1
        """,
        [3],
    ),
    (
        "ignored-test",
        "skipTest in unittest",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                self.skipTest("todo")
        """,
        [4],
    ),
    (
        "lack-of-cohesion",
        "unrelated tests",
        """
        class TestMisc:
            def test_parse_json(self):
                data = json_loads(payload_text)
                assert data
            def test_socket_timeout(self):
                conn = open_connection(remote_host)
                assert conn
            def test_render_html(self):
                page = render_template(layout_name)
                assert page
        """,
        [1],
    ),
    (
        "magic-number",
        "pytest",
        """
        def test_answer():
            assert compute() == 42
        """,
        [2],
    ),
    (
        "magic-number",
        "unittest, negative",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                self.assertEqual(offset(), -15)
        """,
        [4],
    ),
    (
        "mystery-guest",
        "file",
        """
        def test_config():
            with open("data/config.json") as fh:
                assert fh.read()
        """,
        [2],
    ),
    (
        "mystery-guest",
        "network and database",
        """
        import requests, sqlite3
        def test_remote():
            assert requests.get("https://example.com").ok
            conn = sqlite3.connect("app.db")
            assert conn
        """,
        [3, 4],
    ),
    (
        "obscure-setup",
        "eleven locals",
        """
        def test_setup_heavy():
            a = 1; b = 2; c = 3; d = 4; e = 5; f = 6
            g = 7; h = 8; i = 9; j = 10; k = 0
            assert a + b + c + d + e + f + g + h + i + j + k
        """,
        [1],
    ),
    (
        "redundant-assertion",
        "pytest forms",
        """
        def test_nothing():
            x = compute()
            assert True
            assert x == x
            assert 1 == 1
            assert (x, "message")
        """,
        [3, 4, 5, 6],
    ),
    (
        "redundant-assertion",
        "unittest forms",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                a = compute()
                self.assertTrue(True)
                self.assertEqual(a, a)
        """,
        [5, 6],
    ),
    (
        "redundant-print",
        "print",
        """
        def test_show():
            result = compute()
            print(result)
            assert result
        """,
        [3],
    ),
    (
        "sensitive-equality",
        "str and repr",
        """
        def test_text():
            p = Point(1, 2)
            assert str(p) == "Point(1, 2)"
            assert p.__repr__() != "P"
        """,
        [3, 4],
    ),
    (
        "sensitive-equality",
        "unittest",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                self.assertEqual(repr(make()), "Thing()")
        """,
        [4],
    ),
    (
        "sleepy-test",
        "time.sleep",
        """
        import time
        def test_wait():
            start()
            time.sleep(0.5)
            assert done()
        """,
        [4],
    ),
    (
        "sleepy-test",
        "asyncio and imported sleep",
        """
        import asyncio
        from time import sleep
        async def test_wait():
            await asyncio.sleep(1)
            sleep(2)
            assert done()
        """,
        [4, 5],
    ),
    (
        "suboptimal-assert",
        "unittest forms",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                a, b = compute()
                self.assertTrue(a == b)
                self.assertEqual(a, None)
                self.assertFalse(a in b)
                self.assertTrue(isinstance(a, int))
                self.assertEquals(a, b)
        """,
        [5, 6, 7, 8, 9],
    ),
    (
        "suboptimal-assert",
        "pytest == None",
        """
        def test_x():
            assert compute() == None
        """,
        [2],
    ),
    (
        "test-maverick",
        "uses no setUp field",
        """
        import unittest
        class TestThing(unittest.TestCase):
            def setUp(self):
                self.thing = Thing()
            def test_uses(self):
                self.assertEqual(self.thing.size, 1)
            def test_maverick(self):
                self.assertEqual(len([]), 0)
        """,
        [7],
    ),
    (
        "unknown-test",
        "pytest",
        """
        def test_runs():
            run()
        """,
        [1],
    ),
    (
        "unknown-test",
        "unittest",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                compute()
        """,
        [3],
    ),
    (
        "verbose-test",
        "31 statements",
        "def test_long():\n" + "    x = 1\n" * 30 + "    assert x\n",
        [1],
    ),
]

NEGATIVE: list[tuple[str, str, str]] = [
    (
        "constructor-init",
        "a Test* helper class that is no TestCase (pytest does not collect it)",
        """
        class TestServer:
            def __init__(self, port):
                self.port = port
            def test_helper(self):
                assert self.port
        """,
    ),
    (
        "assertion-roulette",
        "all messages",
        """
        import unittest
        class TestAdd(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(1, 2), 3, "one plus two")
                self.assertEqual(add(2, 2), 4, msg="two plus two")
                assert add(0, 0) == 0, "zero"
        """,
    ),
    (
        "assertion-roulette",
        "one value check beside raises",
        """
        import pytest
        def test_x():
            with pytest.raises(ValueError):
                parse("")
            assert parse("a") == ["a"]
        """,
    ),
    (
        "conditional-logic",
        "branch without assertion, subTest loop, all()",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                total = 0
                for v in values():
                    total += v
                if total:
                    total -= 1
                for case in cases():
                    with self.subTest(case=case):
                        self.assertTrue(check(case))
                self.assertTrue(all(v > 0 for v in values()))
        """,
    ),
    (
        "constructor-init",
        "helper class with __init__",
        """
        class Helper:
            def __init__(self):
                self.x = 1
        def test_helper():
            assert Helper().x == 1
        """,
    ),
    (
        "default-test",
        "descriptive name",
        """
        import unittest
        class TestParser(unittest.TestCase):
            def test_parse(self):
                self.assertEqual(parse(""), [])
        """,
    ),
    (
        "duplicate-assert",
        "distinct assertions, raises blocks, separate tests",
        """
        import pytest
        def test_one():
            assert f(1) == 2
            assert f(2) == 3
            with pytest.raises(ValueError):
                f(-1)
            with pytest.raises(ValueError):
                f(-2)
        def test_two():
            assert f(1) == 2
        """,
    ),
    (
        "empty-test",
        "test with a body",
        """
        def test_something():
            \"\"\"Checks f.\"\"\"
            assert f() == 1
        """,
    ),
    (
        "exception-handling",
        "pytest.raises, try/finally, nested raise, SkipTest",
        """
        import unittest
        from unittest import mock
        import pytest
        def test_x():
            with pytest.raises(ValueError):
                parse("")
            try:
                assert parse("a")
            finally:
                cleanup()
            def boom():
                raise RuntimeError("injected")
            assert call_with(boom) is None
        class TestY(unittest.TestCase):
            def test_y(self):
                if not HAS_X:
                    raise unittest.SkipTest("needs X")
                self.assertTrue(run())
        """,
    ),
    (
        "general-fixture",
        "every field used; infrastructure fields",
        """
        import unittest
        from unittest import mock
        class TestThing(unittest.TestCase):
            def setUp(self):
                self.a = make_a()
                self.patcher = mock.patch("x.y")
                self.patcher.start()
            def tearDown(self):
                self.patcher.stop()
            def test_a(self):
                self.assertEqual(self.a.x, 1)
            def test_b(self):
                self.assertEqual(self.a.y, 2)
        """,
    ),
    (
        "ignored-test",
        "conditional skips with reasons",
        """
        import sys, unittest, pytest
        @pytest.mark.skipif(sys.platform == "win32", reason="posix only")
        def test_posix():
            assert compute() == 1
        def test_optional():
            if not HAS_X:
                pytest.skip("needs X")
            assert compute() == 1
        class TestX(unittest.TestCase):
            @unittest.skipIf(sys.version_info < (3, 12), "3.12 feature")
            def test_x(self):
                self.assertEqual(compute(), 1)
        """,
    ),
    (
        "lack-of-cohesion",
        "cohesive tests",
        """
        class TestParser:
            def test_parse_empty(self):
                parser = Parser()
                assert parser.parse("") == []
            def test_parse_one(self):
                parser = Parser()
                assert parser.parse("a") == ["a"]
        """,
    ),
    (
        "magic-number",
        "allowed numbers and tolerances",
        """
        import pytest
        from numpy.testing import assert_allclose
        def test_x():
            assert compute() == 7
            assert size() == 100
            assert offset() == -1
            assert_allclose(a(), b(), rtol=1e-7, atol=0.001)
            assert ratio() == pytest.approx(0.5)
        """,
    ),
    (
        "mystery-guest",
        "fixtures and doubles",
        """
        import sqlite3, requests, io
        from unittest import mock
        def test_file(tmp_path):
            path = tmp_path / "x.txt"
            path.write_text("hi")
            with open(path) as fh:
                assert fh.read() == "hi"
        def test_db():
            conn = sqlite3.connect(":memory:")
            assert conn
        @mock.patch("requests.get")
        def test_remote(get):
            assert requests.get("https://example.com")
        def test_buffer():
            assert io.StringIO("x").read() == "x"
        """,
    ),
    (
        "obscure-setup",
        "ten locals, comprehension variables",
        """
        def test_setup_light():
            a = 1; b = 2; c = 3; d = 4; e = 5
            f = 6; g = 7; h = 8; i = 9; j = 10
            assert [n * n for n in range(3)]
            assert a + b + c + d + e + f + g + h + i + j
        """,
    ),
    (
        "redundant-assertion",
        "real checks and the fail idiom",
        """
        def test_x():
            x, y = compute()
            assert x == y
            assert next(it()) == next(it())
            if x:
                assert False, "unreachable"
        """,
    ),
    (
        "redundant-print",
        "logging and a helper's print",
        """
        import logging
        def helper():
            print("not a test")
        def test_x():
            logging.info("running")
            assert compute()
        """,
    ),
    (
        "sensitive-equality",
        "attributes, and str() not compared",
        """
        def test_x():
            p = Point(1, 2)
            assert p.x == 1
            assert str(p)
            assert len(str(p)) == 7
        """,
    ),
    (
        "sleepy-test",
        "commented sleep, zero and variable asyncio sleeps",
        """
        import time, asyncio
        async def test_x(delay):
            time.sleep(0.1)  # the OS needs a tick to flush the pipe
            await asyncio.sleep(0)
            await asyncio.sleep(delay)
            assert done()
        """,
    ),
    (
        "suboptimal-assert",
        "specific assertions",
        """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                a, b = compute()
                self.assertEqual(a, b)
                self.assertIsNone(a)
                self.assertTrue(a)
                assert a is None
        """,
    ),
    (
        "test-maverick",
        "uses fields through a helper; no fields",
        """
        import unittest
        class TestThing(unittest.TestCase):
            def setUp(self):
                self.thing = Thing()
            def size(self):
                return self.thing.size
            def test_helper(self):
                self.assertEqual(self.size(), 1)
        class TestOther(unittest.TestCase):
            def setUp(self):
                reset_world()
            def test_x(self):
                self.assertEqual(len([]), 0)
        """,
    ),
    (
        "unknown-test",
        "assertion helpers, mocks, local helpers, raises",
        """
        from unittest import mock
        import numpy as np
        import pytest
        def check(value):
            assert value > 0
        def test_output(pytester):
            result = pytester.runpytest()
            result.stdout.fnmatch_lines(["*1 passed*"])
        def test_mock():
            m = mock.Mock()
            run(m)
            m.assert_called_once_with(1)
        def test_local_helper():
            check(compute())
        def test_numpy():
            np.testing.assert_allclose(compute(), 1.0)
        def test_raises():
            with pytest.raises(ValueError):
                compute(-1)
        """,
    ),
    ("verbose-test", "30 statements", "def test_long():\n" + "    x = 1\n" * 29 + "    assert x\n"),
]


def test_every_smell_has_positive_and_negative_cases() -> None:
    assert {c[0] for c in POSITIVE} == set(SMELLS)
    assert {c[0] for c in NEGATIVE} == set(SMELLS)


@pytest.mark.parametrize(
    ("smell", "source", "expected"),
    [pytest.param(s, src, lines, id=f"{s}: {name}") for s, name, src, lines in POSITIVE],
)
def test_smell_fires(smell: str, source: str, expected: list[int]) -> None:
    found = [f for f in run_rules(source) if f.smell == smell]
    assert [f.line for f in found] == expected
    for f in found:
        assert f.severity == SMELLS[smell].severity
        assert f.end_line >= f.line
        assert f.message and f.suggestion
        assert 0.0 < f.confidence <= 1.0
        assert f.source == "rule"


@pytest.mark.parametrize(
    ("smell", "source"),
    [pytest.param(s, src, id=f"{s}: {name}") for s, name, src in NEGATIVE],
)
def test_smell_does_not_fire(smell: str, source: str) -> None:
    assert lines_of(source, smell) == []


def test_default_severities_follow_smells_md() -> None:
    high = {"empty-test", "redundant-assertion", "unknown-test"}
    medium = {
        "conditional-logic",
        "constructor-init",
        "duplicate-assert",
        "exception-handling",
        "mystery-guest",
        "sleepy-test",
    }
    for smell_id, entry in SMELLS.items():
        expected = (
            Severity.HIGH
            if smell_id in high
            else (Severity.MEDIUM if smell_id in medium else Severity.LOW)
        )
        assert entry.severity == expected, smell_id
    assert len(SMELLS) == 21


def test_empty_test_is_not_also_unknown() -> None:
    smells = {f.smell for f in run_rules("def test_todo():\n    pass\n")}
    assert smells == {"empty-test"}


def test_unconditionally_skipped_test_is_not_also_unknown() -> None:
    src = """
        import pytest
        @pytest.mark.skip(reason="later")
        def test_later():
            run()
        """
    assert {f.smell for f in run_rules(src)} == {"ignored-test"}


def test_module_level_functions_are_tests_only_in_test_files() -> None:
    src = "def test_runs():\n    run()\n"
    assert lines_of(src, "unknown-test", path="tests/test_x.py") == [1]
    assert lines_of(src, "unknown-test", path="tests/x_test.py") == [1]
    assert lines_of(src, "unknown-test", path="src/helpers.py") == []
    # methods of Test* classes and TestCase subclasses are tests in any file
    cls = "class TestX:\n    def test_runs(self):\n        run()\n"
    assert lines_of(cls, "unknown-test", path="src/helpers.py") == [2]


def test_unittest_subclass_of_in_file_base_and_nested_classes() -> None:
    src = """
        import unittest
        class Base(unittest.TestCase):
            pass
        class Checks(Base):
            def test_a(self):
                run()
        class TestOuter:
            class TestInner:
                def test_b(self):
                    run()
        """
    assert lines_of(src, "unknown-test") == [5, 9]


def test_conditional_logic_reports_outermost_construct_once() -> None:
    src = """
        def test_grid():
            for row in grid():
                for cell in row:
                    if cell:
                        assert cell.ok
        """
    assert lines_of(src, "conditional-logic") == [2]


def test_pytestmark_and_class_skips() -> None:
    src = """
        import pytest, unittest
        pytestmark = pytest.mark.skip
        @unittest.skip("broken")
        class TestX(unittest.TestCase):
            def test_x(self):
                self.assertTrue(run())
        """
    assert lines_of(src, "ignored-test") == [2, 3]
