"""LLM-side pure helpers: batching, the structured output schema, validation."""

from __future__ import annotations

import json

import pytest

from tools.test_analysis.batches import (
    LLMBatch,
    LLMReview,
    MalformedLLMOutput,
    batch_tests_for_llm,
    review_json_schema,
    validate_llm_review,
)
from tools.test_analysis.parsing import parse_file

SRC_A = "\n".join(f"def test_a{i}():\n    assert f({i})\n" for i in range(7))
SRC_B = "import pytest\n\n@pytest.mark.slow\ndef test_b():\n    run()\n"


@pytest.fixture
def batches() -> list[LLMBatch]:
    files = [
        parse_file("tests/test_a.py", SRC_A, cache=None),
        parse_file("tests/test_b.py", SRC_B, cache=None),
        parse_file("tests/test_broken.py", "def test_(:\n", cache=None),
    ]
    return batch_tests_for_llm(files, 5)


def test_batches_of_five_in_file_then_line_order(batches: list[LLMBatch]) -> None:
    assert [len(b.tests) for b in batches] == [5, 3]
    assert [b.index for b in batches] == [0, 1]
    assert [u.qualname for u in batches[1].tests] == ["test_a5", "test_a6", "test_b"]
    unit_b = batches[1].tests[2]
    assert (unit_b.start_line, unit_b.line, unit_b.end_line) == (3, 4, 5)
    assert unit_b.source.startswith("@pytest.mark.slow\ndef test_b():")


def test_batch_ids_are_stable_and_content_derived(batches: list[LLMBatch]) -> None:
    again = batch_tests_for_llm(
        [
            parse_file("tests/test_a.py", SRC_A, cache=None),
            parse_file("tests/test_b.py", SRC_B, cache=None),
        ],
        5,
    )
    assert [b.batch_id for b in again] == [b.batch_id for b in batches]
    changed = batch_tests_for_llm(
        [
            parse_file("tests/test_a.py", SRC_A + "\n", cache=None),
            parse_file("tests/test_b.py", SRC_B.replace("run", "go"), cache=None),
        ],
        5,
    )
    assert changed[0].batch_id == batches[0].batch_id  # same tests, same source
    assert changed[1].batch_id != batches[1].batch_id  # test_b's source changed
    assert len({b.batch_id for b in batches}) == len(batches)


def test_render_numbers_lines_like_the_file(batches: list[LLMBatch]) -> None:
    text = batches[1].render()
    assert "### tests/test_b.py :: test_b (lines 3-5)" in text
    assert "    5 |     run()" in text
    assert batches[1].estimated_tokens > 10


def test_long_tests_are_cut() -> None:
    src = "def test_long():\n" + "    x = 1\n" * 400
    [batch] = batch_tests_for_llm(
        [parse_file("tests/test_l.py", src, cache=None)], 5, max_lines_per_test=50
    )
    unit = batch.tests[0]
    assert unit.source.count("\n") == 50
    assert "351 more lines not shown" in unit.source
    assert unit.end_line == 401


def test_schema_lists_the_catalogue_ids() -> None:
    schema = review_json_schema()
    props = schema["$defs"]["LLMReviewFinding"]["properties"]
    assert "unknown-test" in props["smell"]["enum"]
    assert "syntax-error" not in props["smell"]["enum"]
    assert props["confidence"]["maximum"] == 1.0


def answer(*items: dict[str, object]) -> str:
    return json.dumps({"findings": list(items)})


def item(**overrides: object) -> dict[str, object]:
    base = {
        "file": "tests/test_b.py",
        "line": 5,
        "smell": "unknown-test",
        "message": "test_b asserts nothing",
        "confidence": 0.9,
    }
    base.update(overrides)
    return base


def test_validation_drops_unknown_smells_bad_lines_and_low_confidence(
    batches: list[LLMBatch],
) -> None:
    batch = batches[1]
    result = validate_llm_review(
        answer(
            item(),
            item(smell="made-up-smell"),
            item(line=99),
            item(file="tests/test_other.py"),
            item(confidence=0.3),
            item(confidence=1.7),
            {"file": "tests/test_b.py"},  # schema violation
            item(smell="syntax-error"),
        ),
        batch,
        min_confidence=0.6,
    )
    assert len(result.findings) == 1
    reasons = [d.reason for d in result.dropped]
    assert any("unknown smell id 'made-up-smell'" in r for r in reasons)
    assert any("line 99 is outside" in r for r in reasons)
    assert any("not in this batch" in r for r in reasons)
    assert any("below 0.6" in r for r in reasons)
    assert any("outside [0, 1]" in r for r in reasons)
    assert any("invalid item" in r for r in reasons)
    assert any("'syntax-error'" in r for r in reasons)


def test_test_level_smells_snap_to_the_def_line(batches: list[LLMBatch]) -> None:
    [f] = validate_llm_review(answer(item(line=5)), batches[1]).findings
    assert (f.line, f.end_line, f.source, f.severity) == (4, 5, "llm", "high")
    [g] = validate_llm_review(
        answer(item(smell="magic-number", line=5, end_line=40)), batches[1]
    ).findings
    assert (g.line, g.end_line) == (5, 5)


def test_accepts_fenced_json_model_objects_and_dicts(batches: list[LLMBatch]) -> None:
    batch = batches[1]
    fenced = "```json\n" + answer(item()) + "\n```"
    assert len(validate_llm_review(fenced, batch).findings) == 1
    chatty = "Here you go: " + answer(item()) + " Hope it helps."
    assert len(validate_llm_review(chatty, batch).findings) == 1
    model = LLMReview.model_validate({"findings": [item()]})
    assert len(validate_llm_review(model, batch).findings) == 1
    assert len(validate_llm_review({"findings": [item()]}, batch).findings) == 1
    assert validate_llm_review('{"findings": []}', batch).findings == []


@pytest.mark.parametrize("bad", ["not json at all", '{"findings": 3}', "[1, 2", "42"])
def test_malformed_output_raises_for_a_retry(bad: str, batches: list[LLMBatch]) -> None:
    with pytest.raises(MalformedLLMOutput):
        validate_llm_review(bad, batches[1])
