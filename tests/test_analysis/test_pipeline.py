"""analyze_files end to end: every file accounted for, metrics, isolation of bad files."""

from __future__ import annotations

import pytest

from tools.test_analysis.cache import ParseCache
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.schemas import AnalysisConfig, AnalysisResult, Finding, Source, SourceFile
from tools.test_analysis.validation import UnsafePathError

STRICT = AnalysisConfig(profile="strict")
GOOD = "def test_a():\n    result = run()\n\ndef test_b():\n    assert compute() == 37\n"


def test_result_shape_and_metrics() -> None:
    result = analyze_files(
        [
            SourceFile(path="tests/test_good.py", content=GOOD),
            {"path": "tests/test_other.py", "content": "def test_c():\n    assert 1 == 1\n"},
        ],
        STRICT,
        cache=ParseCache(),
    )
    assert isinstance(result, AnalysisResult)
    assert [(i.file, i.line, i.smell) for i in result.issues] == [
        ("tests/test_good.py", 1, "unknown-test"),
        ("tests/test_good.py", 5, "magic-number"),
        ("tests/test_other.py", 2, "redundant-assertion"),
    ]
    for issue in result.issues:
        assert issue.suggestion and issue.example and issue.source == "rule"
    m = result.metrics
    assert (m.files_analyzed, m.tests_analyzed, m.lines_analyzed, m.llm_calls) == (2, 3, 7, 0)
    assert set(m.stage_ms) == {"parse", "rules", "synthesis", "enhance"}
    assert m.analysis_time_ms > 0
    assert result.summary.total == 3
    assert [(f.path, f.status, f.tests, f.findings) for f in result.files] == [
        ("tests/test_good.py", "ok", 2, 2),
        ("tests/test_other.py", "ok", 1, 1),
    ]
    dumped = result.model_dump(mode="json")
    assert "context" not in dumped["issues"][0]
    assert set(dumped["issues"][0]) == {
        "file",
        "line",
        "end_line",
        "smell",
        "severity",
        "message",
        "suggestion",
        "example",
        "confidence",
        "source",
    }


def test_cache_hits_are_reported() -> None:
    cache = ParseCache()
    files = [SourceFile(path="tests/test_good.py", content=GOOD)]
    first = analyze_files(files, cache=cache)
    second = analyze_files(files, cache=cache)
    assert (first.metrics.cache_hits, second.metrics.cache_hits) == (0, 1)
    assert second.issues == first.issues


def test_syntax_error_and_encoding_error_do_not_stop_other_files() -> None:
    result = analyze_files(
        [
            SourceFile(path="tests/test_bad.py", content="def test_x():\n    x = (\n"),
            SourceFile(path="tests/test_latin.py", content=b"x = '\xff'\n"),
            SourceFile(path="tests/test_good.py", content=GOOD),
        ],
        STRICT,
        cache=None,
    )
    statuses = {f.path: f.status for f in result.files}
    assert statuses == {
        "tests/test_bad.py": "syntax-error",
        "tests/test_latin.py": "encoding-error",
        "tests/test_good.py": "ok",
    }
    by_file = {i.file: i for i in result.issues if i.smell in ("syntax-error", "encoding-error")}
    assert by_file["tests/test_bad.py"].line == 2
    assert by_file["tests/test_bad.py"].severity == "critical"
    assert by_file["tests/test_latin.py"].line == 1
    assert "not UTF-8" in by_file["tests/test_latin.py"].message
    assert {i.smell for i in result.issues if i.file == "tests/test_good.py"} == {
        "unknown-test",
        "magic-number",
    }
    # critical findings sort first within the same file/line
    assert result.summary.by_severity["critical"] == 2


def test_llm_findings_are_merged_and_enhanced() -> None:
    llm = Finding(
        file="tests/test_good.py",
        line=1,
        end_line=2,
        smell="unknown-test",
        severity="high",
        message="asserts nothing",
        confidence=0.8,
        source=Source.LLM,
    )
    extra = Finding(
        file="tests/test_good.py",
        line=5,
        end_line=5,
        smell="verbose-test",
        severity="low",
        message="long",
        confidence=0.7,
        source=Source.LLM,
    )
    result = analyze_files(
        [SourceFile(path="tests/test_good.py", content=GOOD)],
        STRICT,
        cache=None,
        llm_findings=[llm, extra],
    )
    unknown = [i for i in result.issues if i.smell == "unknown-test"]
    assert len(unknown) == 1 and unknown[0].source == "rule"
    assert unknown[0].confidence == pytest.approx(1 - 0.1 * 0.2)
    assert result.summary.by_source == {"rule": 2, "llm": 1}


def test_unsafe_path_raises_before_any_work() -> None:
    with pytest.raises(UnsafePathError):
        analyze_files([{"path": "../../etc/passwd", "content": "x"}], cache=None)


def test_config_is_applied() -> None:
    result = analyze_files(
        [SourceFile(path="tests/test_good.py", content=GOOD)],
        AnalysisConfig(profile="strict", ignore=("magic-number",)),
        cache=None,
    )
    assert {i.smell for i in result.issues} == {"unknown-test"}


def test_empty_request() -> None:
    result = analyze_files([], cache=None)
    assert result.issues == [] and result.files == [] and result.summary.total == 0
