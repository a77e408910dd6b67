"""Findings whose premise is false are made by neither profile (issue 28, third calibration
round: the labelers judged these classes "wrong"). Each test file is written for its class,
beside the smell the strict profile still reports."""

from __future__ import annotations

from tests.test_analysis.support import DEFAULT, STRICT, lines_of

# --------------------------------------------------------------------------- unknown test

REUSED_TEST = """
    def test_round_trip(make_converter=default_converter):
        converter = make_converter()
        assert converter.loads(converter.dumps({"a": 1})) == {"a": 1}

    def test_round_trip_fast():
        test_round_trip(fast_converter)

    class TestLogging:
        def test_logs(self, exc_info=False):
            assert emit(exc_info=exc_info) == 1

        def test_logs_with_exc_info(self):
            self.test_logs(exc_info=True)

        def test_cache_speed(self, benchmark):
            benchmark(self._check_cache)

        def _check_cache(self):
            assert lookup("k") == "v"

    def test_reraises():
        try:
            retry(fail_once, reraise=True)
        except CustomError:
            pass
        else:
            raise Exception("CustomError was not re-raised")

    def test_nothing_checked():
        make_converter().dumps({"a": 1})
"""


def test_a_test_that_runs_another_asserting_test_or_helper_asserts() -> None:
    # another test reused with a parameter, a method handed to pytest-benchmark, and an
    # else that raises all assert; the last test checks nothing
    assert lines_of(REUSED_TEST, "unknown-test", config=STRICT) == [29]


SUPPORT_MODULE_CHECK = """
    from common import check_warnings, make_table

    def test_string_alignment_warns():
        check_warnings((render, [make_table()], {"align": "center"}), num=2)
"""


def test_a_check_named_function_of_the_suites_support_module_asserts() -> None:
    assert lines_of(SUPPORT_MODULE_CHECK, "unknown-test", config=STRICT) == []


# --------------------------------------------------------------------------- sensitive equality

MESSAGE_AND_OWN_INPUT = """
    import pickle
    import pytest

    def test_bad_input_message():
        with pytest.raises(ValueError) as excinfo:
            parse("x")
        assert str(excinfo.value) == "bad input: 'x'"

    def test_error_equality():
        assert repr(validate({})) == repr(ValueError("missing key"))

    def test_pickle_keeps_text():
        before = Rule("daily")
        after = pickle.loads(pickle.dumps(before))
        assert str(after) == str(before)

    @pytest.mark.parametrize("value", [1, 10**20])
    def test_big_ints_as_text(value):
        assert dumps_json({"n": value})["n"] == str(value)

    def test_settings_text():
        assert str(load_settings()) == "Settings(debug=True)"
"""


def test_a_message_a_round_trip_or_the_tests_own_input_is_no_formatting_accident() -> None:
    # the message is the behaviour; both reprs share one format; str(value) writes the text
    # the serializer must produce; only the settings' repr compared with a literal remains
    assert lines_of(MESSAGE_AND_OWN_INPUT, "sensitive-equality", config=STRICT) == [22]


# --------------------------------------------------------------------------- lack of cohesion

ONE_SUBJECT = """
    class TestTokenizer:
        def test_empty_source(self):
            assert Tokenizer("").tokens == []

        def test_unicode_identifiers(self):
            names = [tok.text for tok in Tokenizer("größe = 1").tokens if tok.kind == NAME]
            assert names == ["größe"]

        def test_line_numbers(self):
            lines = {t.line for t in Tokenizer("a\\nb\\nc").tokens}
            assert max(lines) == 3

        def test_rejects_tabs_after_spaces(self):
            with pytest.raises(IndentationError):
                Tokenizer("  \\tx").run()
"""
GRAB_BAG = """
    class TestMisc:
        def test_parse_json(self):
            assert parse_json("{}") == {}

        def test_socket_timeout(self):
            assert socket_timeout() is None

        def test_render_html(self):
            assert render_html() == ""

        def test_version(self):
            assert version().startswith("1.")
"""


def test_a_class_testing_one_subject_from_several_sides_is_cohesive() -> None:
    assert lines_of(ONE_SUBJECT, "lack-of-cohesion", config=STRICT) == []
    assert lines_of(GRAB_BAG, "lack-of-cohesion", config=STRICT) == [1]


# --------------------------------------------------------------------------- mystery guest

FIXTURE_PATHS = """
    import os
    import socket
    from pathlib import Path

    def test_malformed_record(lock_file):
        Path(f"{lock_file}.rw", "gen", "0001").write_bytes(b"garbage\\n")
        with Path(lock_file).with_suffix(".wal").open("wb") as wal:
            wal.write(b"x")
        assert not acquire(lock_file)

    def test_pipe_is_not_seekable():
        read_fd, write_fd = os.pipe()
        os.close(write_fd)
        with open(read_fd, "rb") as f:
            assert load(f) is None

    def test_loopback_server():
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        assert serve_once(server)

    def test_shared_config():
        assert load(open("/etc/app/config.toml").read())
"""


def test_paths_from_a_fixture_a_pipe_and_a_loopback_server_are_no_guests() -> None:
    # data written under a fixture's path (the receiver holds the path, the argument is the
    # data), a pipe the test made, a server bound to loopback; /etc is a real machine file
    assert lines_of(FIXTURE_PATHS, "mystery-guest", config=STRICT) == [23]


# --------------------------------------------------------------------------- default test

NAMED_BY_ITS_FILE = """
    import unittest

    class TestClass(unittest.TestCase):
        def test_matches_one_class(self):
            self.assertEqual(select(".a", "<p class='a'></p>"), ["p"])
"""


def test_a_template_like_name_that_repeats_the_files_subject_is_no_template() -> None:
    # TestClass in test_class.py tests the class selector
    assert lines_of(NAMED_BY_ITS_FILE, "default-test", path="tests/test_class.py") == []
    assert lines_of(NAMED_BY_ITS_FILE, "default-test", path="tests/test_select.py") == [3]
    assert lines_of(NAMED_BY_ITS_FILE, "default-test", config=DEFAULT) == [3]
