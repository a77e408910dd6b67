"""The semantic layer: the question table against hand-written SQL, honest refusals, periods."""

from __future__ import annotations

from datetime import date

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from tests.analytics.questions import CASES, HELD_OUT, TODAY, UNMAPPABLE, Case, same_rows
from tools.analytics.executor import _json_value, run_readonly
from tools.analytics.periods import find_periods, parse_comparison, parse_period
from tools.analytics.semantic import asks_why, generate


@pytest.mark.parametrize("case", CASES, ids=[c.question for c in CASES])
async def test_question_matches_hand_written_sql(
    case: Case, reader_pool: AsyncConnectionPool, owner: psycopg.Connection
) -> None:
    generation = generate(case.question, TODAY)
    assert generation.sql is not None, generation.message
    got = await run_readonly(reader_pool, generation.sql)
    expected = [
        [_json_value(v) for v in row] for row in owner.execute(case.sql.encode()).fetchall()
    ]
    assert expected, "the hand-written SQL returned nothing; the case proves nothing"
    assert same_rows(got.rows, expected, case.ordered), (generation.sql, got.rows[:5], expected[:5])


async def test_held_out_paraphrases(
    reader_pool: AsyncConnectionPool, owner: psycopg.Connection
) -> None:
    """Wording the layer was never tuned on: 14 of 15 at first run, 15 of 15 since "Midwest
    dealers" reads as the region's dealers together (`tools.analytics.reading`, issue 25: the
    class of a rate filtered by a region); it must not regress."""
    correct = 0
    for case in HELD_OUT:
        generation = generate(case.question, TODAY)
        if generation.sql is None:
            continue
        got = await run_readonly(reader_pool, generation.sql)
        expected = [[_json_value(v) for v in row] for row in owner.execute(case.sql.encode())]
        correct += same_rows(got.rows, expected, case.ordered)
    assert correct == len(HELD_OUT)


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 40


def test_the_comparison_notices_wrong_answers() -> None:
    assert same_rows([["West", 1.0]], [["West", 1.004]], ordered=False)
    assert not same_rows([["West", 1.0]], [["West", 1.5]], ordered=False)
    assert not same_rows([["a", 1], ["b", 2]], [["b", 2], ["a", 1]], ordered=True)
    assert not same_rows([["a", 1]], [["a", 1], ["b", 2]], ordered=False)


@pytest.mark.parametrize("question, fragment", UNMAPPABLE)
def test_unmappable_questions_get_an_honest_answer(question: str, fragment: str) -> None:
    generation = generate(question, TODAY)
    assert generation.sql is None
    assert fragment.lower() in generation.message.lower(), generation.message
    if "could not find a metric" in fragment:
        # the answer lists what can be asked
        for word in ("Units sold", "Damage rate", "Downtime", "by region"):
            assert word.lower() in generation.message.lower()


def test_generation_reports_metrics_dimensions_and_periods() -> None:
    g = generate("Warranty attach rate by region, 2024 vs 2025", TODAY)
    assert g.metrics == ["warranty_attach_pct"] and g.dimensions == ["region"]
    assert g.period is not None and g.period.label == "2025"
    assert g.comparison is not None and g.comparison.label == "2024"
    assert g.measures["warranty_attach_pct"].unit == "percent"
    assert not g.measures["warranty_attach_pct"].additive


@pytest.mark.parametrize(
    "text, label, start, end",
    [
        ("in 2025", "2025", "2025-01-01", "2026-01-01"),
        ("Q3 2024", "Q3 2024", "2024-07-01", "2024-10-01"),
        ("third quarter of 2024", "Q3 2024", "2024-07-01", "2024-10-01"),
        ("last quarter", "Q4 2025", "2025-10-01", "2026-01-01"),
        ("last month", "December 2025", "2025-12-01", "2026-01-01"),
        ("last year", "2025", "2025-01-01", "2026-01-01"),
        ("since March", "since March 2025", "2025-03-01", "2026-01-01"),
        ("since 2024-11-15", "since 2024-11-15", "2024-11-15", "2026-01-01"),
        ("in June", "June 2025", "2025-06-01", "2025-07-01"),
        ("H1 2025", "H1 2025", "2025-01-01", "2025-07-01"),
        ("from March to June 2025", "March 2025 - June 2025", "2025-03-01", "2025-07-01"),
        ("between 2024-01-01 and 2024-01-31", "January 2024", "2024-01-01", "2024-02-01"),
        ("past 90 days", "last 90 days", "2025-10-03", "2026-01-01"),
        ("2025-08", "August 2025", "2025-08-01", "2025-09-01"),
    ],
)
def test_periods(text: str, label: str, start: str, end: str) -> None:
    period = parse_period(text, TODAY)
    assert (period.label, period.start.isoformat(), period.end.isoformat()) == (label, start, end)


def test_periods_follow_the_reference_date() -> None:
    today = date(2025, 5, 20)
    assert parse_period("last quarter", today).label == "Q1 2025"
    assert parse_period("since March", today).start == date(2025, 3, 1)
    assert parse_period("in June", today).label == "June 2024"  # June 2025 has not started


def test_may_the_verb_is_not_a_month() -> None:
    assert find_periods("what may explain the damage rate", TODAY) == []
    assert parse_period("in may 2025", TODAY).label == "May 2025"


def test_comparisons() -> None:
    august = parse_period("August 2025", TODAY)
    assert parse_comparison("", august, TODAY).label == "July 2025"
    assert parse_comparison("same period last year", august, TODAY).label == "August 2024"
    q3 = parse_period("Q3 2025", TODAY)
    assert parse_comparison("previous period", q3, TODAY).label == "Q2 2025"
    assert parse_comparison("Q1 2025", q3, TODAY).label == "Q1 2025"
    with pytest.raises(ValueError, match="cannot read one period"):
        parse_period("sometime", TODAY)


def test_why_questions() -> None:
    assert asks_why("Why did the damage rate rise in Q3 2025?")
    assert asks_why("What drove the drop in warranty attach?")
    assert not asks_why("Damage rate by carrier")
