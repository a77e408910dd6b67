"""Suppression (# noqa, ignore list), configurable helpers and thresholds, and the
false-positive guards of the rules."""

from __future__ import annotations

import pydantic
import pytest

from tests.test_analysis.support import lines_of, run_rules
from tools.test_analysis.schemas import AnalysisConfig

ROULETTE = """
    def test_totals():
        assert add(1, 2) == 3
        assert add(2, 2) == 4
    """


# --------------------------------------------------------------------------- noqa


def test_noqa_with_id_suppresses_that_smell_on_that_line() -> None:
    src = """
        def test_answer():
            assert compute() == 42  # noqa: magic-number
            print(compute())  # noqa: redundant-print, magic-number
        """
    smells = {f.smell for f in run_rules(src)}
    assert "magic-number" not in smells
    assert "redundant-print" not in smells
    assert "assertion-roulette" not in smells  # one assertion only


def test_noqa_with_other_ids_suppresses_nothing_of_ours() -> None:
    src = """
        def test_answer():
            assert compute() == 42  # noqa: E501
        """
    assert lines_of(src, "magic-number") == [2]


def test_bare_noqa_suppresses_all_smells_on_its_line_unless_disabled() -> None:
    src = """
        def test_answer():
            assert compute() == 37  # noqa
        """
    assert lines_of(src, "magic-number") == []
    strict = AnalysisConfig(profile="strict", honor_bare_noqa=False)
    assert lines_of(src, "magic-number", config=strict) == [2]


def test_noqa_for_test_level_smell_goes_on_the_def_line_only() -> None:
    on_def = """
        def test_totals():  # noqa: assertion-roulette
            assert add(1, 2) == 3
            assert add(2, 2) == 4
        """
    in_body = """
        def test_totals():
            assert add(1, 2) == 3  # noqa: assertion-roulette
            assert add(2, 2) == 4
        """
    assert lines_of(on_def, "assertion-roulette") == []
    assert lines_of(in_body, "assertion-roulette") == [1]


def test_noqa_on_the_last_line_of_a_multiline_statement() -> None:
    src = """
        def test_answer():
            assert compute(
                1,
            ) == 42  # noqa: magic-number
        """
    assert lines_of(src, "magic-number") == []


def test_noqa_is_case_insensitive_and_tolerates_spacing() -> None:
    src = """
        def test_answer():
            assert compute() == 42  #NOQA:magic-number
        """
    assert lines_of(src, "magic-number") == []


# --------------------------------------------------------------------------- ignore list


def test_ignore_list_switches_smells_off() -> None:
    config = AnalysisConfig(ignore=("assertion-roulette", "magic-number"))
    assert lines_of(ROULETTE, "assertion-roulette", config=config) == []
    assert lines_of(ROULETTE, "assertion-roulette") == [1]


def test_ignore_list_rejects_unknown_ids_naming_the_valid_ones() -> None:
    with pytest.raises(pydantic.ValidationError, match="unknown smell id.*valid ids: "):
        AnalysisConfig(ignore=("assertion-roulete",))


def test_config_rejects_unknown_keys() -> None:
    with pytest.raises(pydantic.ValidationError, match="verbose_test_max_statments"):
        AnalysisConfig.model_validate({"verbose_test_max_statments": 3})


def test_syntax_error_can_be_ignored() -> None:
    config = AnalysisConfig(ignore=("syntax-error",))
    assert run_rules("def test_x(:\n", config=config) == []


# --------------------------------------------------------------------------- helpers


def test_fnmatch_lines_only_test_is_not_unknown() -> None:
    src = """
        def test_output(pytester):
            result = pytester.runpytest()
            result.stdout.fnmatch_lines(["*1 passed*"])
        """
    assert lines_of(src, "unknown-test") == []
    # without the helper in the configured list, the test has no assertion
    bare = AnalysisConfig(profile="strict", assertion_helpers=())
    assert lines_of(src, "unknown-test", config=bare) == [1]


def test_custom_assertion_helpers_by_pattern() -> None:
    src = """
        def test_a():
            verify_snapshot(render())
        def test_b():
            expect(render()).to_equal("x")
        """
    assert lines_of(src, "unknown-test") == [1, 3]
    config = AnalysisConfig(assertion_helpers=("verify_*", "to_equal"))
    assert lines_of(src, "unknown-test", config=config) == []


def test_complex_helper_patterns_compile() -> None:
    src = """
        def test_a():
            check_v2(render())
        """
    config = AnalysisConfig(assertion_helpers=("check_v[0-9]",))
    assert lines_of(src, "unknown-test", config=config) == []


def test_local_helper_inference_can_be_disabled() -> None:
    src = """
        def check(value):
            assert value > 0
        def test_x():
            check(compute())
        """
    assert lines_of(src, "unknown-test") == []
    config = AnalysisConfig(profile="strict", infer_local_helpers=False)
    assert lines_of(src, "unknown-test", config=config) == [3]


def test_local_helper_inference_follows_methods_and_helper_chains() -> None:
    src = """
        import unittest
        def _inner(x):
            assert x
        def outer(x):
            _inner(x)
        class TestX(unittest.TestCase):
            def _check(self, value):
                self.assertTrue(value)
            def test_method_helper(self):
                self._check(compute())
            def test_chain(self):
                outer(compute())
        """
    assert lines_of(src, "unknown-test") == []


def test_unknown_test_confidence_is_lower_when_a_helper_may_assert() -> None:
    src = """
        def test_a():
            run()
        def test_b():
            check_output(run())
        """
    found = {f.line: f.confidence for f in run_rules(src) if f.smell == "unknown-test"}
    assert found[1] > found[3]


# --------------------------------------------------------------------------- thresholds


def test_verbose_threshold_from_config() -> None:
    src = "def test_x():\n" + "    x = 1\n" * 5 + "    assert x\n"
    assert lines_of(src, "verbose-test") == []
    config = AnalysisConfig(profile="strict", verbose_test_max_statements=5)
    assert lines_of(src, "verbose-test", config=config) == [1]


def test_obscure_setup_threshold_from_config() -> None:
    src = """
        def test_x():
            a, b, c = 1, 2, 3
            assert a + b + c
        """
    assert lines_of(src, "obscure-setup") == []
    config = AnalysisConfig(profile="strict", obscure_setup_max_locals=2)
    assert lines_of(src, "obscure-setup", config=config) == [1]


def test_magic_number_allowed_set_from_config() -> None:
    src = """
        def test_x():
            assert compute() == 42
        """
    config = AnalysisConfig(magic_number_allowed=frozenset({42}))
    assert lines_of(src, "magic-number", config=config) == []


def test_cohesion_threshold_from_config() -> None:
    src = """
        class TestParser:
            def test_parse_empty(self):
                parser = Parser()
                assert parser.parse("") == []
            def test_parse_one(self):
                parser = Parser()
                assert parser.parse("a") == ["a"]
        """
    assert lines_of(src, "lack-of-cohesion") == []
    strict = AnalysisConfig(profile="strict", lack_of_cohesion_threshold=0.0)
    assert lines_of(src, "lack-of-cohesion", config=strict) == [1]


# --------------------------------------------------------------------------- FP guards


def test_duplicate_after_a_state_change_is_not_reported() -> None:
    src = """
        def test_x():
            x = make()
            assert x.ok
            x = make(other=True)
            assert x.ok
        """
    assert lines_of(src, "duplicate-assert") == []


def test_sensitive_equality_not_reported_when_formatting_is_the_subject() -> None:
    src = """
        def test_repr_of_point():
            assert repr(Point(1, 2)) == "Point(1, 2)"
        """
    assert lines_of(src, "sensitive-equality") == []
    assert lines_of(src, "sensitive-equality", path="tests/test_arrayprint.py") == []


def test_literal_assertions_inside_lambdas_are_not_redundant() -> None:
    src = """
        import pytest
        def test_assert_string_equal_raises():
            pytest.raises(AssertionError, lambda: assert_string_equal("foo", "hello"))
        """
    assert lines_of(src, "redundant-assertion") == []


def test_general_fixture_skipped_when_tests_may_be_inherited() -> None:
    src = """
        class Base:
            def test_data(self):
                assert self.data1
        class TestPhilox(Base):
            @classmethod
            def setup_class(cls):
                cls.data1 = load()
            def test_other(self):
                assert run()
        """
    assert lines_of(src, "general-fixture") == []


def test_fields_used_to_build_other_fields_still_count_as_used() -> None:
    src = """
        import unittest, shutil, tempfile
        class TestFiles(unittest.TestCase):
            def setUp(self):
                self.dir = tempfile.mkdtemp()
                self.src = self.dir + "/a.c"
            def tearDown(self):
                shutil.rmtree(self.dir)
            def test_compile(self):
                self.assertTrue(compile_in(self.dir))
        """
    assert lines_of(src, "test-maverick") == []


def test_skip_guard_try_except_has_low_confidence() -> None:
    src = """
        import pytest
        def test_big():
            try:
                a = allocate()
            except MemoryError:
                pytest.skip("not enough memory")
            assert a
        """
    found = [f for f in run_rules(src) if f.smell == "exception-handling"]
    assert [f.line for f in found] == [3]
    assert found[0].confidence <= 0.6


def test_mystery_guest_ignores_in_memory_buffers_and_literal_lists() -> None:
    src = """
        import numpy as np
        from io import StringIO
        def test_x():
            assert np.loadtxt(StringIO("0 1 2")).size == 3
            assert np.loadtxt(["1,2"], delimiter=",").size == 2
        """
    assert lines_of(src, "mystery-guest") == []


def test_mystery_guest_path_built_from_dunder_file() -> None:
    src = """
        import os
        import numpy as np
        def test_x():
            data = np.load(os.path.join(os.path.dirname(__file__), "data", "x.npy"))
            assert data.size
        """
    assert lines_of(src, "mystery-guest") == [4]


def test_power_exponent_is_not_a_magic_number() -> None:
    src = """
        def test_x():
            assert limit() == 2**31 - 1
        """
    assert lines_of(src, "magic-number") == []


def test_raise_inside_pytest_raises_is_the_code_under_test() -> None:
    src = """
        import pytest
        def test_raises_reports_type():
            with pytest.raises(ValueError):
                raise ValueError("x")
        """
    assert lines_of(src, "exception-handling") == []


def test_prints_in_nested_defs_and_capture_tests_are_the_subject() -> None:
    nested = """
        def test_runs_callback():
            def callback():
                print("called")
            assert run(callback)
        """
    capsys = """
        def test_greets(capsys):
            print("hello")
            assert capsys.readouterr().out == "hello\\n"
        """
    assert lines_of(nested, "redundant-print") == []
    assert lines_of(capsys, "redundant-print") == []
    assert lines_of(capsys, "redundant-print", path="tests/test_capture.py") == []


def test_pytester_paths_are_temporary() -> None:
    src = """
        def test_log(pytester):
            log_file = str(pytester.path.joinpath("pytest.log"))
            pytester.runpytest(f"--log-file={log_file}")
            with open(log_file) as fh:
                assert "x" in fh.read()
        """
    assert lines_of(src, "mystery-guest") == []


def test_camel_case_assert_helpers_count_by_default() -> None:
    src = """
        def test_inline(pytester):
            reprec = pytester.inline_run()
            reprec.assertoutcome(passed=1)
        """
    assert lines_of(src, "unknown-test") == []
