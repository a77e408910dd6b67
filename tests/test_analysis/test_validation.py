"""Input processing: path normalisation, limits, per-file decoding."""

from __future__ import annotations

import pydantic
import pytest

from tools.test_analysis.pipeline import validate_files
from tools.test_analysis.schemas import SourceFile
from tools.test_analysis.validation import (
    DecodeProblem,
    DuplicatePathError,
    LimitExceededError,
    UnsafePathError,
    check_limits,
    decode_content,
    normalize_path,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("tests/test_a.py", "tests/test_a.py"),
        ("./tests/test_a.py", "tests/test_a.py"),
        ("tests//unit/./test_a.py", "tests/unit/test_a.py"),
        ("tests\\unit\\test_a.py", "tests/unit/test_a.py"),
        ("test_a.py", "test_a.py"),
        ("a..b/test..py", "a..b/test..py"),  # dots inside names are not traversal
        ("tests/~backup/test_a.py", "tests/~backup/test_a.py"),
        ("tests/tést_ünïcode.py", "tests/tést_ünïcode.py"),
    ],
)
def test_normal_paths_are_kept(raw: str, expected: str) -> None:
    assert normalize_path(raw) == expected


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("../etc/passwd", "'..'"),
        ("tests/../../etc/passwd", "'..'"),
        ("tests/..", "'..'"),
        ("..\\..\\windows\\system32", "'..'"),
        ("tests\\..\\secrets.py", "'..'"),
        ("/etc/passwd", "absolute"),
        ("\\\\server\\share\\x.py", "absolute"),
        ("C:\\Users\\x.py", "absolute"),
        ("c:/x.py", "absolute"),
        ("~/secrets.py", "'~'"),
        ("~root/x.py", "'~'"),
        ("tests/a\x00.py", "NUL"),
        ("tests/a\n.py", "control character"),
        ("", "empty"),
        ("   ", "empty"),
        ("tests/", "directory"),
        (".", "names no file"),
        ("x" * 2000, "limit is 1024"),
    ],
)
def test_unsafe_paths_are_rejected_with_a_clear_error(raw: str, needle: str) -> None:
    with pytest.raises(UnsafePathError) as info:
        normalize_path(raw)
    assert needle in str(info.value)
    assert info.value.status_code == 400


def test_source_file_model_rejects_traversal_via_pydantic() -> None:
    with pytest.raises(pydantic.ValidationError, match="path traversal"):
        SourceFile(path="../x.py", content="")
    assert SourceFile(path="./a/test_x.py", content="").path == "a/test_x.py"


def test_validate_files_raises_the_specific_error_for_dicts() -> None:
    with pytest.raises(UnsafePathError):
        validate_files([{"path": "/abs.py", "content": ""}])
    files = validate_files([{"path": "tests\\test_a.py", "content": "x = 1\n"}])
    assert files[0].path == "tests/test_a.py"


def test_duplicate_paths_after_normalisation_are_rejected() -> None:
    with pytest.raises(DuplicatePathError, match="appears twice"):
        validate_files(
            [{"path": "a/test_x.py", "content": ""}, {"path": "./a//test_x.py", "content": ""}]
        )


def test_file_count_limit() -> None:
    files = [{"path": f"test_{i}.py", "content": ""} for i in range(4)]
    validate_files(files, max_files=4)
    with pytest.raises(LimitExceededError, match="more than 3 files") as info:
        validate_files(files, max_files=3)
    assert info.value.status_code == 413


def test_total_size_limit_counts_utf8_bytes() -> None:
    check_limits([("a.py", 6), ("b.py", 4)], max_files=10, max_total_bytes=10)
    with pytest.raises(LimitExceededError, match="11 bytes"):
        check_limits([("a.py", 6), ("b.py", 5)], max_files=10, max_total_bytes=10)
    # "é" is two bytes in UTF-8: five of them are ten bytes
    validate_files([{"path": "a.py", "content": "é" * 5}], max_total_bytes=10)
    with pytest.raises(LimitExceededError):
        validate_files([{"path": "a.py", "content": "é" * 6}], max_total_bytes=10)


def test_default_limits_are_1000_files_and_10_mb() -> None:
    with pytest.raises(LimitExceededError, match="limit is 1000"):
        validate_files([{"path": f"t{i}.py", "content": ""} for i in range(1001)])
    with pytest.raises(LimitExceededError, match="10485760"):
        validate_files([{"path": "big.py", "content": "x" * (10 * 1024 * 1024 + 1)}])


def test_decode_content() -> None:
    assert decode_content("x = 1\n") == "x = 1\n"
    assert decode_content(b"x = 'caf\xc3\xa9'\n") == "x = 'café'\n"
    assert decode_content(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"  # BOM
    latin = b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n"
    assert decode_content(latin) == "# -*- coding: latin-1 -*-\nx = 'café'\n"
    problem = decode_content(b"x = 1\ny = '\xff'\n")
    assert isinstance(problem, DecodeProblem)
    assert problem.line == 2
    assert "not UTF-8" in problem.message and "0xff" in problem.message
    surrogate = decode_content("x = 1\ny = '\udc80'\n")
    assert isinstance(surrogate, DecodeProblem) and surrogate.line == 2
