"""The default profile tells the intended case from the smell inside each rule (issue 28,
third calibration round). Each test file here is written for its class: the smell the
default profile keeps beside the intended look-alike it leaves out."""

from __future__ import annotations

from tests.test_analysis.support import DEFAULT, STRICT, lines_of, run_rules

# --------------------------------------------------------------------------- suboptimal assert

BOOL_RESULT_COMPARED = """
    import unittest
    class TestSlug(unittest.TestCase):
        def test_valid(self):
            self.assertEqual(is_slug("a-b"), True)
            self.assertEqual(is_slug("a b"), False)
            self.assertEqual(find_slug("zzz"), None)
        def test_type(self):
            self.assertEqual(isinstance(make_slug("a"), Slug), True)
"""
PYTEST_BOOL_COMPARED = """
    def test_valid():
        assert is_slug("a-b") == True
"""


def test_a_bool_or_none_compared_by_equality_is_kept_only_where_the_value_is_hidden() -> None:
    # the failure prints the bool / None whole: `assertIs` would show nothing more
    assert lines_of(BOOL_RESULT_COMPARED, "suboptimal-assert", config=DEFAULT) == [8]
    assert lines_of(BOOL_RESULT_COMPARED, "suboptimal-assert", config=STRICT) == [4, 5, 6, 8]
    # pytest's report prints the compared value anyway
    assert lines_of(PYTEST_BOOL_COMPARED, "suboptimal-assert", config=DEFAULT) == []
    assert lines_of(PYTEST_BOOL_COMPARED, "suboptimal-assert", config=STRICT) == [2]


EQUALITY_IS_THE_SUBJECT = """
    import copy
    import unittest
    class TestMatrixCopy(unittest.TestCase):
        def test_copy(self):
            m1 = Matrix([[1, 2]])
            m2 = copy.copy(m1)
            self.assertTrue(m1 == m2)
            self.assertTrue(m1 is not m2)
            self.assertTrue(m2.rows[0] is m1.rows[0])
        def test_determinant(self):
            det = Matrix([[1, 2], [3, 4]]).det()
            self.assertTrue(det == -2)
            self.assertTrue(det == expected_det)
"""


def test_assert_true_on_equality_of_two_held_objects_is_the_subject() -> None:
    # a copy compared with its original, identity of shared rows: __eq__ / `is` is what is
    # tested; a computed value against a literal or an expected value hides the value
    assert lines_of(EQUALITY_IS_THE_SUBJECT, "suboptimal-assert", config=DEFAULT) == [12, 13]
    assert lines_of(EQUALITY_IS_THE_SUBJECT, "suboptimal-assert", config=STRICT) == [
        7,
        8,
        9,
        12,
        13,
    ]


ISINSTANCE_IN_ITS_HANDLER = """
    import unittest
    class TestRetry(unittest.TestCase):
        def test_gives_up(self):
            try:
                fetch_with_retry()
            except IOError as err:
                self.assertTrue(isinstance(err, OSError))
            except Exception as other:
                self.assertTrue(isinstance(other, TimeoutError))
"""


def test_isinstance_of_what_the_handler_caught_cannot_fail() -> None:
    # `except IOError as err` already made err an OSError; `except Exception` did not make
    # `other` a TimeoutError, so assertIsInstance would show its type
    assert lines_of(ISINSTANCE_IN_ITS_HANDLER, "suboptimal-assert", config=DEFAULT) == [9]
    assert lines_of(ISINSTANCE_IN_ITS_HANDLER, "suboptimal-assert", config=STRICT) == [7, 9]


# --------------------------------------------------------------------------- duplicate assert

REENTRANT_STATES = """
    def test_reentrant_session():
        pool = Pool()
        with pool.session() as outer:
            assert pool.active
            with pool.session() as inner:
                assert pool.active
            assert pool.active
        assert not pool.active
"""
COPIED_CHECKS = """
    def test_reentrant_session():
        pool = Pool()
        with pool.session():
            assert pool.active
            assert pool.size == 1
            assert pool.active
"""


def test_the_same_check_after_a_with_block_exits_reads_another_state() -> None:
    # the inner session's __exit__ ran between lines 6 and 7: the pool must still be active
    assert lines_of(REENTRANT_STATES, "duplicate-assert", config=STRICT) == []
    assert lines_of(REENTRANT_STATES, "duplicate-assert", config=DEFAULT) == []
    # a copy with only other checks in between reads the same state
    assert lines_of(COPIED_CHECKS, "duplicate-assert", config=DEFAULT) == [6]


MEMOISED_PROPERTY = """
    def test_total_is_memoised():
        invoice = Invoice(lines=[3, 4])
        assert invoice.total == 7
        assert invoice.compute.call_count == 1
        assert invoice.total == 7
        assert invoice.compute.call_count == 1
"""


def test_a_repeat_whose_evaluation_a_call_counter_observes_is_the_subject() -> None:
    # the second read of the property is the cached access the counters check
    assert lines_of(MEMOISED_PROPERTY, "duplicate-assert", config=STRICT) == []


SPACING_IN_THE_INPUT = """
    def test_unterminated_comment():
        assert_invalid("a/* note")
        assert_invalid("a /* note")
"""


def test_inputs_that_differ_only_in_spaces_are_different_assertions() -> None:
    assert lines_of(SPACING_IN_THE_INPUT, "duplicate-assert", config=STRICT) == []
    assert lines_of(SPACING_IN_THE_INPUT.replace("a /*", "a/*"), "duplicate-assert") == [3]


# --------------------------------------------------------------------------- exception handling

ACTIVE_EXCEPTION_AS_INPUT = """
    import logging

    def test_error_is_logged_with_traceback(caplog):
        try:
            raise KeyError("missing")
        except KeyError:
            logging.getLogger("app").exception("lookup failed")
        assert "KeyError" in caplog.text
"""
CAUGHT_FROM_THE_CODE = """
    def test_lookup_reports_the_key():
        try:
            lookup("missing")
        except KeyError as err:
            assert err.args == ("missing",)
"""


def test_a_try_that_raises_its_own_exception_is_the_stimulus() -> None:
    # nothing is expected to raise: the test needs an active exception to log
    assert lines_of(ACTIVE_EXCEPTION_AS_INPUT, "exception-handling", config=STRICT) == []
    # the code under test raises here, and the test passes if it stops raising
    assert lines_of(CAUGHT_FROM_THE_CODE, "exception-handling", config=DEFAULT) == [2]


EXCEPTION_FED_TO_A_MANAGER = """
    def test_transaction_rolls_back_on_error(db):
        with db.transaction():
            db.insert("row")
            raise RuntimeError("abort")
        assert db.count() == 0
"""
RAISE_AS_A_FAILURE = """
    def test_total(cart):
        if cart.total() != 12:
            raise ValueError("wrong total")
"""


def test_a_raise_inside_a_managed_block_is_fed_to_the_manager() -> None:
    assert lines_of(EXCEPTION_FED_TO_A_MANAGER, "exception-handling", config=STRICT) == []
    assert lines_of(RAISE_AS_A_FAILURE, "exception-handling", config=DEFAULT) == [3]


SKIPPING_GUARD = """
    import pytest

    def test_frame_rendering():
        try:
            import pandas
        except ImportError:
            pytest.skip("pandas is not installed")
        assert render(pandas.DataFrame()) == ""
"""
SUBSTITUTE_GUARD = """
    def test_colored_cells():
        try:
            import colorama
            cell = colorama.Fore.RED + "x"
        except ImportError:
            cell = "\\x1b[31mx"
        assert width(cell) == 1
"""


def test_an_import_guard_is_kept_when_it_hides_that_the_check_did_not_run() -> None:
    # an explicit skip is reported by pytest: nothing is hidden
    assert lines_of(SKIPPING_GUARD, "exception-handling", config=STRICT) == []
    # a substitute run in the handler passes whether or not the dependency is there
    assert lines_of(SUBSTITUTE_GUARD, "exception-handling", config=DEFAULT) == [2]


UNREACHABLE_BRANCH = """
    import pytest

    @pytest.mark.parametrize("kind", ["int", "str"])
    def test_default(kind):
        if kind == "int":
            option = Option(int)
        elif kind == "str":
            option = Option(str)
        else:
            raise NotImplementedError(kind)
        assert option.default is None
"""
ERRORS_ALLOWED_IN_A_SWEEP = """
    def test_truncated_headers_never_crash():
        data = build_header()
        for size in range(len(data)):
            try:
                parse_header(data[:size])
            except ValueError:
                pass
"""


def test_an_unreachable_branch_and_an_allowed_error_in_a_sweep_are_intended() -> None:
    assert lines_of(UNREACHABLE_BRANCH, "exception-handling", config=DEFAULT) == []
    assert lines_of(UNREACHABLE_BRANCH, "exception-handling", config=STRICT) == [10]
    assert lines_of(ERRORS_ALLOWED_IN_A_SWEEP, "exception-handling", config=DEFAULT) == []
    assert lines_of(ERRORS_ALLOWED_IN_A_SWEEP, "exception-handling", config=STRICT) == [4]


FAIL_MARKER_AFTER_THE_CALL = """
    def test_removed_module_is_gone():
        try:
            import app.legacy
            1 / 0
        except ImportError:
            pass
"""


def test_a_division_by_zero_nobody_catches_marks_must_not_get_here() -> None:
    # 1 / 0 is not caught by `except ImportError`: the test expects the import to fail
    assert lines_of(FAIL_MARKER_AFTER_THE_CALL, "exception-handling", config=DEFAULT) == [2]


# --------------------------------------------------------------------------- conditional logic

SUITE_HELPER_SWEEP = """
    import pytest
    from . import support

    class TestWidths:
        def renderers(self):
            for name in ("plain", "ansi"):
                yield make_renderer(name)

        def test_width_per_renderer(self):
            for renderer in self.renderers():
                assert renderer.width("ab") == 2

        def test_width_per_backend(self):
            for backend in support.available_backends("c", "python"):
                assert measure("ab", backend) == 2

        def test_width_of_parsed_cells(self):
            for cell in parse_table("a|b").cells:
                assert cell.width == 1
"""


def test_a_loop_over_what_the_suites_helper_yields_cannot_pass_empty() -> None:
    # a generator of this class, a support module of the suite: not the code under test;
    # the cells the code under test parsed may be none
    assert lines_of(SUITE_HELPER_SWEEP, "conditional-logic", config=DEFAULT) == [18]
    strict = [f for f in run_rules(SUITE_HELPER_SWEEP) if f.smell == "conditional-logic"]
    # strict reports every loop, but claims "may run zero times" only for the parsed cells
    assert [(f.line, "not at all" in f.message) for f in strict] == [
        (10, False),
        (14, False),
        (18, True),
    ]


GUARDED_BEFORE_THE_LOOP = """
    import pytest

    def test_every_locale_formats():
        locales = installed_locales()
        if not locales:
            pytest.skip("no locale installed")
        for locale in locales:
            assert format_number(1000, locale)
"""


def test_a_loop_the_test_skips_when_empty_cannot_pass_without_checking() -> None:
    assert lines_of(GUARDED_BEFORE_THE_LOOP, "conditional-logic", config=DEFAULT) == []
    (strict,) = [f for f in run_rules(GUARDED_BEFORE_THE_LOOP) if f.smell == "conditional-logic"]
    assert "not at all" not in strict.message


GENERATED_SWEEP = """
    import itertools
    import unittest
    class TestShuffle(unittest.TestCase):
        def test_every_order_sorts(self):
            for order in itertools.permutations("abcd"):
                self.assertEqual(my_sort(order), list("abcd"))
        def test_roman(self):
            for number, roman in ((1, "I"), (4, "IV"), (9, "IX")):
                self.assertEqual(to_roman(number), roman.upper())
"""


def test_a_generated_sweep_is_no_table_of_cases() -> None:
    # every permutation of four letters is a property check; written rows are cases
    assert lines_of(GENERATED_SWEEP, "conditional-logic", config=DEFAULT) == [8]


SETTING_SWEEP = """
    import unittest
    import engine

    class TestMatch(unittest.TestCase):
        def test_match_with_and_without_cache(self):
            markup = "<p id='1'></p>"
            for mode in (engine.CACHED, engine.UNCACHED):
                self.assertEqual(select("p", markup, mode=mode), ["1"])

        def test_match_named_by_message(self):
            for selector in ("p", "p:first-child"):
                self.assertEqual(select(selector, "<p/>"), ["1"], msg=selector)

        def test_falsy_timeouts(self):
            for timeout in (None, 0):
                self.assertEqual(fetch("x", timeout=timeout).status, 200)
"""


def test_a_sweep_of_named_modes_or_a_case_named_by_its_message_is_intended() -> None:
    # the mode only switches an option under the same check; msg= names the case; the
    # timeouts are values under test, and the failure does not say which one broke
    assert lines_of(SETTING_SWEEP, "conditional-logic", config=DEFAULT) == [15]


PROPERTY_AND_PARAMETERS = """
    import pytest
    from hypothesis import given, strategies as st

    @given(st.lists(st.integers()))
    def test_sorted_is_ordered(values):
        result = my_sort(values)
        for a, b in zip(result, result[1:]):
            assert a <= b

    @pytest.mark.parametrize("case", CASES)
    def test_parse(case):
        text, kind = case
        parsed = parse(text)
        if kind in {Kind.INT, Kind.FLOAT}:
            assert parsed.is_number

    def test_parse_computed():
        parsed = parse("1")
        if parsed.kind in {Kind.INT, Kind.FLOAT}:
            assert parsed.is_number
"""


def test_branches_on_drawn_data_or_on_parameters_are_not_hidden_checks() -> None:
    # hypothesis draws many examples; `kind` is unpacked from the parameter; the last if
    # is on what the code under test returned
    assert lines_of(PROPERTY_AND_PARAMETERS, "conditional-logic", config=DEFAULT) == [19]


TYPE_NARROWING = """
    def test_retry_result():
        for attempt in Retrying(stop=stop_after_attempt(3)):
            with attempt:
                outcome = attempt.outcome
            assert outcome  # for mypy
        assert calls() == 3
"""
ONE_SHOT_STUB = """
    import pytest

    def test_release_error_keeps_claim(monkeypatch):
        failed = False
        def fail_once(path):
            nonlocal failed
            if not failed:
                failed = True
                assert path.name == "claim"
                raise PermissionError("busy")
        monkeypatch.setattr(store, "unlink", fail_once)
        with pytest.raises(PermissionError):
            store.release()
"""


def test_a_type_checker_assert_and_a_stubs_branch_are_not_conditional_checks() -> None:
    assert lines_of(TYPE_NARROWING, "conditional-logic", config=STRICT) == []
    assert lines_of(ONE_SHOT_STUB, "conditional-logic", config=DEFAULT) == []
    assert lines_of(ONE_SHOT_STUB, "conditional-logic", config=STRICT) == [7]


ACCUMULATED_RESULTS = """
    import unittest
    class TestThreads(unittest.TestCase):
        def test_same_pattern_everywhere(self):
            results = []
            run_threads(lambda: results.append(compile_pattern("p")))
            self.assertEqual(len(results), 8)
            for result in results:
                self.assertIs(result, results[0])
"""


def test_an_empty_list_filled_later_is_no_table_of_cases() -> None:
    # computed results whose count the test checked first
    assert lines_of(ACCUMULATED_RESULTS, "conditional-logic", config=DEFAULT) == []


# --------------------------------------------------------------------------- redundant print

PRINTS_FOR_A_READER = """
    import time

    def test_throughput(server):
        print("warming up the server")
        start = time.time()
        replies = [server.ping() for _ in range(100)]
        print(f"ping latency: {(time.time() - start) * 10:.2f} ms")
        print(repr(server))
        assert all(r == "pong" for r in replies)

    def test_config_dump(tmp_path):
        config = load_config(tmp_path / "app.toml")
        print(config)
        assert config.name == "app"
"""


def test_a_bare_value_print_is_a_leftover_and_text_for_a_reader_is_not() -> None:
    # a banner, a labelled measurement and a repr smoke check are written for a reader;
    # print(config) is the debugging leftover
    assert lines_of(PRINTS_FOR_A_READER, "redundant-print", config=DEFAULT) == [13]
    assert lines_of(PRINTS_FOR_A_READER, "redundant-print", config=STRICT) == [4, 7, 8, 13]


# --------------------------------------------------------------------------- sleepy test

WAITS = """
    import time

    HEARTBEAT = 0.05

    def test_lease_stays_healthy(lease):
        deadline = time.monotonic() + 5
        while not lease.acquired():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(HEARTBEAT * 3)
        # let the worker thread queue its next job before cancelling
        time.sleep(0.05)
        time.sleep(0.5)
        assert lease.compromise is None
"""


def test_a_poll_interval_a_period_count_or_a_documented_wait_is_no_fixed_sleep() -> None:
    # the poll interval is no fixed wait at all; three heartbeats are the premise of the
    # check; a comment above says why; the bare half second waits for nobody knows what
    assert lines_of(WAITS, "sleepy-test", config=DEFAULT) == [13]
    assert lines_of(WAITS, "sleepy-test", config=STRICT) == [10, 12, 13]


# --------------------------------------------------------------------------- verbose test


def _scenario_with_stubs_and_error_handling() -> str:
    stubs = "\n".join(
        f"    def stub_{i}(*args):\n"
        f"        if args:\n"
        f"            raise OSError({i})\n"
        f"        return None"
        for i in range(3)
    )
    steps = "\n".join(
        f"    try:\n        lock.step_{i}()\n    except OSError:\n        errors.append({i})"
        for i in range(7)
    )
    return (
        "def test_cleanup_errors_are_collected(lock):\n"
        "    errors = []\n"
        f"{stubs}\n{steps}\n"
        "    assert errors == [0, 1, 2, 3, 4, 5, 6]\n"
    )


def test_length_from_stubs_and_error_handling_is_one_scenario() -> None:
    source = _scenario_with_stubs_and_error_handling()
    # over the limit, with branches in its stubs and a try per step: one behaviour told at
    # length, not several paths of the test's own flow
    assert lines_of(source, "verbose-test", config=STRICT) == [1]
    assert lines_of(source, "verbose-test", config=DEFAULT) == []


# --------------------------------------------------------------------------- magic number

NUMBERS_THAT_SAY_WHAT_THEY_ARE = """
    import os
    import unittest

    ONE_HOUR = 3600

    class TestFiles(unittest.TestCase):
        def test_mode(self):
            path = make_private_dir()
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o700)

        def test_offset(self):
            self.assertEqual(zone.utcoffset(None).total_seconds(), -5 * ONE_HOUR)

        def test_grace(self):
            waited = open_with_retry("x")
            self.assertGreaterEqual(waited, GRACE - 0.05)

        def test_multinomial(self):
            # M(11; 5, 2, 1, 1, 2) = 83160
            self.assertEqual(multinomial(5, 2, 1, 1, 2), 83160)

        def test_exponent(self):
            self.assertEqual(parse_float("45.8e-2"), 45.8e-2)

        def test_summary_length(self):
            self.assertEqual(len(summarize(DATA)), 113)
"""


def test_numbers_written_in_base_counted_in_units_or_stated_are_explained() -> None:
    # an octal mode, five hours, a tolerance off a named bound, a value the comment states
    # and one the parsed input spells out; 113 is explained by nothing
    assert lines_of(NUMBERS_THAT_SAY_WHAT_THEY_ARE, "magic-number", config=DEFAULT) == [26]


# --------------------------------------------------------------------------- worth fixing

SKIPPED_FOR_A_FAILURE = """
    import pytest
    import unittest

    class TestCalendar(unittest.TestCase):
        @unittest.skip("leap seconds: known bug in the parser")
        def test_leap_second(self):
            self.assertEqual(parse("23:59:60").second, 60)

        @unittest.skip("disabled until the v2 field names ship")
        def test_renamed_fields(self):
            self.assertEqual(fields(Event), ["start", "end"])
"""


def test_a_skip_whose_reason_names_a_failure_is_kept_as_xfail_material() -> None:
    # a known bug: xfail would run it and report the fix; a decision stays a decision
    found = [f for f in run_rules(SKIPPED_FOR_A_FAILURE, config=DEFAULT)]
    assert [(f.line, f.smell) for f in found if f.smell == "ignored-test"] == [(5, "ignored-test")]
    assert "xfail" in found[0].context["advice"]


SAME_BUILTIN_TWICE = """
    def test_ascii_fold():
        folded = fold("Ünïcödé")
        assert len(folded) == len(folded)
        assert folded == folded
"""


def test_a_builtins_result_compared_with_itself_always_passes() -> None:
    # len() of the same value twice is an int compared with itself; `x == x` on the value
    # itself may be a test of its __eq__
    assert lines_of(SAME_BUILTIN_TWICE, "redundant-assertion", config=DEFAULT) == [3]


ZIP_OF_A_RESULT = """
    CASES = [[1, 2], [3], []]

    def test_reverse_matches_list():
        for items in CASES:
            expected = list(reversed(items))
            for want, got in zip(expected, my_reversed(items)):
                assert want == got
        total = sum(len(c) for c in CASES)
        assert total == 3

    def test_reverse_lengths():
        for items in CASES:
            result = list(my_reversed(items))
            assert len(result) == len(items)
            for want, got in zip(reversed(items), result):
                assert want == got
"""


def test_a_zip_with_a_computed_side_stops_at_the_shorter_one() -> None:
    # a short or empty result passes the first test; the second checks the length first,
    # and is reported only as a whole test over the module's table of cases
    found = run_rules(ZIP_OF_A_RESULT, config=DEFAULT)
    loops = [f for f in found if f.smell == "conditional-logic"]
    assert [f.line for f in loops] == [4, 12]
    assert "shorter side" in loops[0].message and "fixed table" in loops[1].message


ROUND_TRIP_DROPPED = """
    def test_nested_union_round_trip():
        converter = make_converter()
        data = converter.to_dict(Order(lines=[Line(sku="a")]))
        converter.from_dict(data, Order)

    def test_extra_keys_are_accepted():
        converter = make_converter()
        converter.from_dict({"lines": [], "note": "x"}, Order)
"""


def test_a_round_trip_whose_result_is_dropped_has_lost_its_assertion() -> None:
    # the second is a smoke test: accepting the input is the behaviour
    assert lines_of(ROUND_TRIP_DROPPED, "unknown-test", config=DEFAULT) == [1]


HANDLER_MARKS_THAT_IT_RAN = """
    def test_prompt_abort(capsys):
        try:
            ask("Password")
        except Aborted:
            say("interrupted")
        assert capsys.readouterr().out == "interrupted\\n"
"""


def test_a_handler_that_only_marks_it_ran_expects_the_exception() -> None:
    assert lines_of(HANDLER_MARKS_THAT_IT_RAN, "exception-handling", config=DEFAULT) == [2]


SMOKE_ROUND_TRIP = """
    def test_pickles():
        inst = make()
        # exact values are no concern as long as neither direction raises
        data = pickle.dumps(inst)
        pickle.loads(data)
"""


def test_a_round_trip_declared_as_a_smoke_test_is_intended() -> None:
    assert lines_of(SMOKE_ROUND_TRIP, "unknown-test", config=DEFAULT) == []
