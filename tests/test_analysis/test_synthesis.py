"""Synthesis (merge, dedupe, priority, sort, summary) and enhancement."""

from __future__ import annotations

import pytest

from tests.test_analysis.support import run_rules
from tools.test_analysis.catalogue import SMELLS, Severity
from tools.test_analysis.enhance import enhance
from tools.test_analysis.parsing import parse_file
from tools.test_analysis.schemas import Finding, Source
from tools.test_analysis.synthesis import merge_findings, prioritise, summarize, synthesize
from tools.test_analysis.templates import TEMPLATES


def finding(
    smell: str = "magic-number",
    *,
    file: str = "tests/test_a.py",
    line: int = 3,
    confidence: float = 0.8,
    source: Source = Source.RULE,
    message: str = "m",
) -> Finding:
    return Finding(
        file=file,
        line=line,
        end_line=line,
        smell=smell,
        severity=SMELLS[smell].severity,
        message=message,
        confidence=confidence,
        source=source,
    )


def test_same_file_line_smell_is_one_finding_rule_preferred_and_boosted() -> None:
    rule = finding(confidence=0.7, message="from rule")
    llm = finding(confidence=0.8, source=Source.LLM, message="from llm")
    merged = merge_findings([rule], [llm])
    assert len(merged) == 1
    assert merged[0].source == "rule" and merged[0].message == "from rule"
    assert merged[0].confidence == pytest.approx(1 - 0.3 * 0.2)  # noisy-OR: 0.94


def test_duplicates_within_one_source_keep_the_most_confident() -> None:
    merged = merge_findings(
        [
            finding(source=Source.LLM, confidence=0.65, message="weak"),
            finding(source=Source.LLM, confidence=0.9, message="strong"),
        ]
    )
    assert [(f.message, f.confidence) for f in merged] == [("strong", 0.9)]


def test_different_line_or_smell_or_file_are_kept_apart() -> None:
    merged = merge_findings(
        [
            finding(),
            finding(line=4),
            finding("redundant-print"),
            finding(file="tests/test_b.py"),
        ]
    )
    assert len(merged) == 4


def test_sorted_by_file_line_then_severity() -> None:
    kept, dropped = prioritise(
        [
            finding("magic-number", file="b.py", line=1),
            finding("redundant-assertion", file="a.py", line=9),
            finding("magic-number", file="a.py", line=2),
            finding("redundant-assertion", file="a.py", line=2),
        ],
        None,
    )
    assert dropped == 0
    assert [(f.file, f.line, f.smell) for f in kept] == [
        ("a.py", 2, "redundant-assertion"),
        ("a.py", 2, "magic-number"),
        ("a.py", 9, "redundant-assertion"),
        ("b.py", 1, "magic-number"),
    ]


def test_max_findings_keeps_the_highest_severity_then_confidence() -> None:
    findings = [
        finding("magic-number", line=1, confidence=1.0),
        finding("unknown-test", line=2, confidence=0.7),
        finding("duplicate-assert", line=3, confidence=0.9),
        finding("duplicate-assert", line=4, confidence=0.5),
    ]
    kept, dropped = prioritise(findings, 2)
    assert dropped == 2
    assert [f.line for f in kept] == [2, 3]
    issues, summary = synthesize(findings, max_findings=2)
    assert summary.truncated == 2 and summary.total == 2


def test_severity_ordering() -> None:
    assert Severity.LOW < Severity.MEDIUM < Severity.HIGH < Severity.CRITICAL
    assert sorted([Severity.HIGH, Severity.LOW, Severity.CRITICAL, Severity.MEDIUM]) == [
        Severity.LOW,
        Severity.MEDIUM,
        Severity.HIGH,
        Severity.CRITICAL,
    ]
    assert max(Severity) is Severity.CRITICAL


def test_summary_counts() -> None:
    summary = summarize(
        [
            finding("magic-number"),
            finding("magic-number", line=5),
            finding("unknown-test", file="tests/test_b.py", source=Source.LLM),
        ]
    )
    assert summary.total == 3
    assert summary.by_severity == {"high": 1, "low": 2}
    assert list(summary.by_severity) == ["high", "low"]  # most severe first
    assert summary.by_smell == {"magic-number": 2, "unknown-test": 1}
    assert summary.by_file == {"tests/test_a.py": 2, "tests/test_b.py": 1}
    assert summary.by_source == {"rule": 2, "llm": 1}


def test_enhance_fills_templates_from_rule_context() -> None:
    src = """
        import unittest
        class TestX(unittest.TestCase):
            def test_x(self):
                a, b = compute()
                self.assertTrue(a == b)
        """
    found = [f for f in run_rules(src) if f.smell == "suboptimal-assert"]
    [enhanced] = enhance(found)
    assert "self.assertEqual(a, b)" in enhanced.suggestion
    assert "self.assertTrue(a == b)" in enhanced.example
    assert "self.assertEqual(a, b)" in enhanced.example
    assert enhanced.confidence == found[0].confidence


def test_every_rule_finding_gets_a_concrete_suggestion_and_example() -> None:
    src = """
        import time, unittest, pytest
        def test_many():
            x = compute()
            assert x == 42
            assert x == 42
            print(x)
            time.sleep(1)
            for v in x:
                assert str(v) == "1"
        class MyTestCase(unittest.TestCase):
            def __init__(self):
                pass
            def test_empty(self):
                pass
        """
    for f in enhance(run_rules(src)):
        assert f.suggestion and f.example, f.smell
        assert "{" not in f.suggestion.replace("{}", ""), (f.smell, f.suggestion)


def test_enhance_builds_context_for_llm_findings_from_source() -> None:
    content = "def test_x():\n    x = compute()\n    assert x == 42\n"
    parsed = parse_file("tests/test_a.py", content, cache=None)
    llm = finding("magic-number", line=3, source=Source.LLM)
    [enhanced] = enhance([llm], {"tests/test_a.py": parsed})
    assert "assert x == 42" in enhanced.suggestion
    # without the source, the generic texts are used
    [plain] = enhance([llm])
    assert plain.suggestion == TEMPLATES["magic-number"].generic
    assert plain.example == TEMPLATES["magic-number"].generic_example


def test_enhance_keeps_a_specific_llm_suggestion() -> None:
    llm = finding("unknown-test", line=1, source=Source.LLM).model_copy(
        update={"suggestion": "Assert that run() returns 0."}
    )
    [enhanced] = enhance([llm])
    assert enhanced.suggestion == "Assert that run() returns 0."
    assert enhanced.example


def test_every_smell_has_templates() -> None:
    assert set(SMELLS) <= set(TEMPLATES)


def test_context_survives_a_checkpoint_round_trip_and_enhance_still_fills_templates() -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    src = """
        def test_answer():
            assert compute() == 42
        """
    [f] = run_rules(src)
    serde = JsonPlusSerializer(
        allowed_msgpack_modules=[
            ("tools.test_analysis.schemas", "Finding"),
            ("tools.test_analysis.schemas", "Source"),
            ("tools.test_analysis.catalogue", "Severity"),
        ]
    )
    restored = serde.loads_typed(serde.dumps_typed(f))
    assert restored == f and restored.context["numbers"] == "42"
    [enhanced] = enhance([restored])
    assert "42" in enhanced.suggestion
