"""Names of assertion calls shared by the assertion rule modules."""

from __future__ import annotations

import ast

#: Assertions whose failure already names what failed (raised/warned/logged/called): they do
#: not make a test a roulette, and as context managers they are not duplicates either.
SELF_DESCRIBING = frozenset(
    {
        "assertRaises",
        "assertRaisesRegex",
        "assertRaisesRegexp",
        "assertWarns",
        "assertWarnsRegex",
        "assertLogs",
        "assertNoLogs",
        "raises",
        "warns",
        "deprecated_call",
        "fnmatch_lines",
        "re_match_lines",
        "no_fnmatch_line",
        "no_re_match_line",
        "assert_called",
        "assert_called_once",
        "assert_called_with",
        "assert_called_once_with",
        "assert_any_call",
        "assert_has_calls",
        "assert_not_called",
        "assert_awaited",
        "assert_awaited_once",
        "assert_awaited_with",
        "assert_awaited_once_with",
        "assert_any_await",
        "assert_has_awaits",
        "assert_not_awaited",
    }
)


EQUALITY_CALLS = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertIs",
        "assertAlmostEqual",
        "assertAlmostEquals",
        "assertCountEqual",
        "assertListEqual",
        "assertTupleEqual",
        "assertSetEqual",
        "assertDictEqual",
        "assertMultiLineEqual",
        "assertSequenceEqual",
        "assertItemsEqual",
        "assertGreaterEqual",
        "assertLessEqual",
        "failUnlessEqual",
    }
)


TRUE_OPS = (ast.Eq, ast.Is, ast.LtE, ast.GtE)


#: Names whose presence means the test replaces real resources with doubles.
MOCK_NAMES = frozenset(
    {
        "patch",
        "mock",
        "Mock",
        "MagicMock",
        "AsyncMock",
        "monkeypatch",
        "responses",
        "respx",
        "requests_mock",
        "httpx_mock",
        "aioresponses",
        "httpserver",
        "mocker",
    }
)


#: HTTP client calls (`requests.get`, `httpx.post`, ...) the mystery-guest rule checks.
HTTP_CALLS = frozenset({"get", "post", "put", "delete", "patch", "head", "request", "options"})


#: numpy loaders that read a file the mystery-guest rule checks.
NUMPY_LOADERS = frozenset({"load", "loadtxt", "genfromtxt", "fromfile"})


#: Called names that may touch real resources; refined in the mystery-guest rule, so every
#: name that rule accepts must be here.
GUEST_NAMES = (
    HTTP_CALLS
    | NUMPY_LOADERS
    | frozenset(
        {
            "open",
            "urlopen",
            "urlretrieve",
            "create_connection",
            "socket",
            "connect",
            "bind",  # not a guest itself: where a socket the test made listens
            "create_engine",
            "HTTPConnection",
            "HTTPSConnection",
            "read_csv",
            "read_json",
            "read_excel",
            "read_parquet",
            "read_table",
            "read_text",
            "read_bytes",
            "write_text",
            "write_bytes",
        }
    )
)


#: Helper-looking names: a test calling them may assert indirectly (lowers unknown-test
#: confidence instead of suppressing it).
HELPERISH_PREFIXES = (
    "check",
    "verify",
    "expect",
    "validate",
    "ensure",
    "_check",
    "_assert",
    "_verify",
    "do_test",
    "_test",
    "run_test",
    "helper",
)
