"""POST /api/v1/analyze: the response, input processing (limits, paths, encodings), modes."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config import Settings
from main import create_app
from tests.support.stub_openai import StubOpenAI
from tests.test_analysis.conftest import FAST_QUEUE
from tests.test_analysis.graphkit import BatchRecorder, synthetic_suite

GOOD = "import time\n\ndef test_waits():\n    time.sleep(1)\n    assert run() == 3\n"
ISSUE_KEYS = {
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
METRIC_KEYS = {
    "analysis_time_ms",
    "files_analyzed",
    "tests_analyzed",
    "llm_calls",
    "cache_hits",
    "stage_ms",
}


def analyze(client: TestClient, files: list[dict[str, Any]], **body: Any) -> Any:
    # json.dumps escapes lone surrogates (\udcff) as JSON allows; the client's encoder cannot
    payload = json.dumps({"files": files, **body})
    return client.post(
        "/api/v1/analyze", content=payload, headers={"content-type": "application/json"}
    )


def test_the_response_has_the_issue_shape(client: TestClient) -> None:
    response = analyze(client, [{"path": "tests/test_a.py", "content": GOOD}], mode="rules-only")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) >= {"issues", "summary", "metrics"}
    (issue,) = body["issues"]
    assert set(issue) == ISSUE_KEYS
    assert issue["smell"] == "sleepy-test" and issue["file"] == "tests/test_a.py"
    assert issue["line"] == 4 and issue["source"] == "rule" and issue["example"]
    assert set(body["metrics"]) >= METRIC_KEYS
    assert body["metrics"]["files_analyzed"] == 1 and body["metrics"]["tests_analyzed"] == 1
    assert {
        "plan_analysis",
        "parse_files",
        "check_rules",
        "synthesize_findings",
        "enhance_findings",
    } <= set(body["metrics"]["stage_ms"])
    assert body["summary"]["total"] == 1 and body["quality"]["passed"]


def test_hybrid_mode_reviews_with_the_model(
    stub_client: TestClient, stub_openai: StubOpenAI
) -> None:
    recorder = BatchRecorder()
    stub_openai.responder = recorder
    response = analyze(stub_client, synthetic_suite(12, per_file=6), mode="hybrid")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["metrics"]["llm_calls"] == 3 == recorder.total
    assert body["summary"]["by_source"]["llm"] == 3
    tools = stub_openai.requests[0]["tools"][0]["function"]
    assert tools["name"] == "LLMReview"  # structured output through a tool call


def test_an_llm_mode_without_a_model(client: TestClient) -> None:
    files = [{"path": "tests/test_a.py", "content": GOOD}]
    refused = analyze(client, files, mode="llm-only", allow_downgrade=False)
    assert refused.status_code == 422
    assert "needs a chat model" in refused.json()["error"]["message"]
    downgraded = analyze(client, files, mode="hybrid", allow_downgrade=True).json()
    assert downgraded["mode"] == "rules-only" and downgraded["warnings"]


@pytest.mark.parametrize(
    "path",
    [
        "../secrets.py",
        "tests/../../x.py",
        "/etc/test_x.py",
        "~/test_x.py",
        "C:\\tests\\test_x.py",
        "..\\..\\x.py",
    ],
)
def test_traversal_paths_are_rejected_not_rewritten(client: TestClient, path: str) -> None:
    response = analyze(client, [{"path": path, "content": GOOD}])
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "relative" in message or "traversal" in message


def test_paths_are_normalised(client: TestClient) -> None:
    body = analyze(
        client, [{"path": "./tests//test_a.py", "content": GOOD}], mode="rules-only"
    ).json()
    assert body["files"][0]["path"] == "tests/test_a.py"
    duplicate = analyze(
        client,
        [
            {"path": "tests/test_a.py", "content": GOOD},
            {"path": "./tests/test_a.py", "content": GOOD},
        ],
    )
    assert duplicate.status_code == 400 and "appears twice" in duplicate.json()["error"]["message"]


@pytest.fixture
def small_client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    settings = make_settings(max_files=3, max_request_bytes=4096, **FAST_QUEUE)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_the_file_and_size_limits(small_client: TestClient) -> None:
    many = [{"path": f"tests/test_{i}.py", "content": "x = 1\n"} for i in range(4)]
    too_many = analyze(small_client, many)
    assert too_many.status_code == 413
    assert "the limit is 3" in too_many.json()["error"]["message"]
    big = analyze(small_client, [{"path": "tests/test_big.py", "content": "#" * 5000}])
    assert big.status_code == 413 and "MAX_REQUEST_BYTES" in big.json()["error"]["message"]
    # under the limit, base64 content is accepted and counted as its decoded bytes
    blob = base64.b64encode(b"#" * 2500).decode()
    assert (
        analyze(
            small_client,
            [{"path": "tests/test_b.py", "content": blob, "encoding": "base64"}],
            mode="rules-only",
        ).status_code
        == 200
    )


def test_non_utf8_content_is_reported_per_file(client: TestClient) -> None:
    latin1 = base64.b64encode("def test_caf\xe9():\n    pass\n".encode("latin-1")).decode()
    response = analyze(
        client,
        [
            {"path": "tests/test_latin.py", "content": latin1, "encoding": "base64"},
            {"path": "tests/test_surrogate.py", "content": "x = '\udcff'\n"},
            {"path": "tests/test_ok.py", "content": GOOD},
        ],
        mode="rules-only",
    )
    assert response.status_code == 200, response.text
    body = response.json()
    by_file = {f["path"]: f["status"] for f in body["files"]}
    assert by_file == {
        "tests/test_latin.py": "encoding-error",
        "tests/test_surrogate.py": "encoding-error",
        "tests/test_ok.py": "ok",
    }
    errors = [i for i in body["issues"] if i["smell"] == "encoding-error"]
    assert {i["file"] for i in errors} == {"tests/test_latin.py", "tests/test_surrogate.py"}
    assert "line 1" in errors[0]["message"]
    assert any(i["file"] == "tests/test_ok.py" for i in body["issues"])


def test_bad_requests_name_the_problem(client: TestClient) -> None:
    typo = analyze(
        client, [{"path": "tests/test_a.py", "content": GOOD}], config={"verbose_max": 3}
    )
    assert typo.status_code == 422 and "verbose_max" in typo.json()["error"]["message"]
    unknown_smell = analyze(
        client, [{"path": "tests/test_a.py", "content": GOOD}], config={"ignore": ["sleepy"]}
    )
    assert unknown_smell.status_code == 422
    assert "unknown smell id" in unknown_smell.json()["error"]["message"]
    assert analyze(client, []).status_code == 422
    assert (
        analyze(client, [{"path": "t.py", "content": "!!", "encoding": "base64"}]).status_code
        == 422
    )
    assert client.post("/api/v1/analyze", json={"files": [{"path": "t.py"}]}).status_code == 422


def test_config_overrides_apply_to_one_request(client: TestClient) -> None:
    files = [{"path": "tests/test_a.py", "content": GOOD}]
    quiet = analyze(client, files, mode="rules-only", config={"ignore": ["sleepy-test"]}).json()
    assert quiet["issues"] == []
    assert len(analyze(client, files, mode="rules-only").json()["issues"]) == 1


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=st.text(max_size=400))
def test_arbitrary_text_as_a_file_never_crashes_an_analysis(client: TestClient, text: str) -> None:
    response = analyze(
        client,
        [
            {"path": "tests/test_any.py", "content": text},
            {"path": "tests/test_ok.py", "content": GOOD},
        ],
        mode="rules-only",
    )
    assert response.status_code == 200, response.text
    body = response.json()
    statuses = {f["path"]: f["status"] for f in body["files"]}
    assert statuses["tests/test_ok.py"] == "ok"
    assert any(
        i["file"] == "tests/test_ok.py" and i["smell"] == "sleepy-test" for i in body["issues"]
    )
    fatal = [
        i
        for i in body["issues"]
        if i["file"] == "tests/test_any.py" and i["smell"] in ("syntax-error", "encoding-error")
    ]
    if statuses["tests/test_any.py"] == "ok":
        assert fatal == []
    else:
        assert len(fatal) == 1 and fatal[0]["smell"] == statuses["tests/test_any.py"]
