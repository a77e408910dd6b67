"""The default profile follows the judging lines published with the independent labeled set
(``bench/data/frozen/README.md``, section 2: the verdict definitions and "Lines drawn
consistently across projects"). Each line is checked on test files written for it here, in
pytest and unittest style, with its edge cases; none is taken from a judged suite."""

from __future__ import annotations

from tests.test_analysis.support import DEFAULT, STRICT, lines_of

# --------------------------------------------------------------------------- verbose test
# "flat tables of one-line checks are noise as verbose-test, a 60+ statement test mixing
# several behaviours is worth-fixing"


def _rows(lines: list[str], indent: str = "    ") -> str:
    return "\n".join(indent + line for line in lines)


FLAT_ASSERTS = "def test_parse_table():\n" + _rows(
    [f"assert parse_int('{i}') == {i}" for i in range(70)]
)
FLAT_UNITTEST = (
    "import unittest\n\n\nclass TestParse(unittest.TestCase):\n"
    "    def test_parse_table(self):\n"
    + _rows([f"self.assertEqual(parse_int('{i}'), {i})" for i in range(70)], " " * 8)
)
FLAT_PAIRS = "def test_parse_pairs():\n" + _rows(
    [line for i in range(35) for line in (f"value = parse_int('{i}')", f"assert value == {i}")]
)
FLAT_RAISES = "import pytest\n\n\ndef test_rejects():\n" + _rows(
    [
        line
        for i in range(32)
        for line in ("with pytest.raises(ValueError):", f"    parse_int('x{i}')")
    ]
)
ONE_SCENARIO = "def test_build_document():\n" + _rows(
    ["doc = Document()"]
    + [f"doc.add_section('part {i}')" for i in range(62)]
    + ["assert render(doc) == EXPECTED"]
)
_METHODS = ("push", "pop", "peek", "clear", "extend", "copy")
MIXED_PYTEST = "def test_stack_everything():\n" + _rows(
    [
        line
        for m in _METHODS
        for line in (
            "stack = Stack()",
            "stack.push(1)",
            "stack.push(2)",
            f"result = stack.{m}()",
            "assert result is not None",
            "assert len(stack) >= 0",
            "assert stack.top() in (1, 2)",
            "stack.close()",
            "assert stack.closed",
            "stats = stack.stats()",
        )
    ]
)
MIXED_UNITTEST = (
    "import unittest\n\n\nclass TestCache(unittest.TestCase):\n"
    "    def test_cache(self):\n"
    + _rows(
        [
            line
            for m in ("get", "set", "delete", "expire", "incr", "flush")
            for line in (
                "cache = Cache()",
                "cache.put('k', 1)",
                f"value = cache.{m}('k')",
                "self.assertTrue(cache.ok)",
                "self.assertEqual(cache.size(), 1)",
                "cache.reset()",
                "self.assertEqual(cache.size(), 0)",
                "info = cache.stats()",
                "self.assertIn('hits', info)",
                "self.assertFalse(cache.closed)",
            )
        ],
        " " * 8,
    )
)
MIXED_UNDER_SIXTY = "def test_stack():\n" + _rows(
    [
        line
        for m in ("push", "pop", "peek", "clear")
        for line in (
            "stack = Stack()",
            f"result = stack.{m}()",
            "assert result == 1",
            "stack.close()",
            "assert stack.closed",
            "stats = stack.stats()",
            "hits = stats.get('hits')",
            "misses = stats.get('misses')",
            "total = hits + misses",
            "size = stack.size()",
        )
    ]
)


def test_flat_tables_of_one_line_checks_are_not_verbose_by_default() -> None:
    for source in (FLAT_ASSERTS, FLAT_UNITTEST, FLAT_PAIRS, FLAT_RAISES):
        assert lines_of(source, "verbose-test", config=DEFAULT) == []
        assert lines_of(source, "verbose-test", config=STRICT) != []


def test_one_scenario_told_at_length_is_not_verbose_by_default() -> None:
    # 64 statements, one act repeated and a single check at the end
    assert lines_of(ONE_SCENARIO, "verbose-test", config=DEFAULT) == []
    assert lines_of(ONE_SCENARIO, "verbose-test", config=STRICT) == [1]


def test_a_test_of_sixty_statements_mixing_behaviours_is_verbose() -> None:
    # half of the statements are checks, so counting the non-check statements alone misses it
    assert lines_of(MIXED_PYTEST, "verbose-test", config=DEFAULT) == [1]
    assert lines_of(MIXED_UNITTEST, "verbose-test", config=DEFAULT) == [5]


def test_a_mixed_test_under_sixty_statements_is_verbose_only_for_strict() -> None:
    assert lines_of(MIXED_UNDER_SIXTY, "verbose-test", config=DEFAULT) == []
    assert lines_of(MIXED_UNDER_SIXTY, "verbose-test", config=STRICT) == [1]
