"""The coding REST API on a real app: check and execute without a model, generate through the
graph over the stub OpenAI server, limits as 4xx, the sandbox in /health and the tools in
/metrics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tests.coding.scripted_coder import ScriptedCoder, fenced
from tests.coding.test_loop import DATA, FIXED, RAISES, SPEC
from tests.coding.transcript import render_transcript
from tests.support.stub_openai import StubOpenAI

SIX = {
    "generated_code",
    "iteration_count",
    "is_code_valid",
    "code_issues",
    "runtime_error",
    "execution_result",
}
TOTALS = '''
import pandas as pd


def totals(df: pd.DataFrame) -> dict[str, float]:
    """The amount per region."""
    if "amount" not in df.columns:
        raise ValueError("no amount column")
    print("regions:", df["region"].nunique())
    return df.groupby("region")["amount"].sum().to_dict()
'''
RECORDS = [
    {"region": "north", "amount": 10.0},
    {"region": "south", "amount": 20.5},
    {"region": "north", "amount": 7.25},
]


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    """The API without a chat model."""
    with TestClient(create_app(make_settings(coding_max_test_rows=50))) as test_client:
        yield test_client


def test_check_works_without_a_model(client: TestClient) -> None:
    good = client.post("/code/check", json={"code": TOTALS, "function_name": "totals"})
    assert good.status_code == 200, good.text
    assert good.json() == {"is_valid": True, "issues": []}
    broken = client.post(
        "/code/check", json={"code": "def totals(df:\n    return 1\n", "function_name": "totals"}
    )
    assert broken.status_code == 200
    body = broken.json()
    assert body["is_valid"] is False
    assert body["issues"][0]["severity"] == "error" and body["issues"][0]["code"] == "syntax"
    missing = client.post("/code/check", json={"code": TOTALS, "function_name": "total"}).json()
    assert missing["is_valid"] is False and "total" in missing["issues"][0]["message"]


def test_execute_runs_in_the_sandbox_without_a_model(client: TestClient) -> None:
    ran = client.post(
        "/code/execute", json={"code": TOTALS, "function_name": "totals", "test_data": RECORDS}
    )
    assert ran.status_code == 200, ran.text
    body = ran.json()
    assert body["success"] is True and body["error"] is None
    assert body["result"]["type"] == "dict"
    assert body["result"]["value"] == {"north": 17.25, "south": 20.5}
    assert body["stdout"] == "regions: 2\n" and body["duration_ms"] > 0
    # Columns work as well as records; a failure of the code is a 200 with its error.
    failing = client.post(
        "/code/execute",
        json={
            "code": RAISES,
            "function_name": "top_amount",
            "test_data": DATA,
        },
    ).json()
    assert failing["success"] is False and failing["error_type"] == "KeyError"
    assert 'big.loc[0, "amount"]' in failing["traceback"]


def test_execute_contains_the_code(client: TestClient) -> None:
    # The sandbox's guarantees hold through the API, and the API stays healthy after.
    escape = """
import socket


def escape():
    s = socket.create_connection(("127.0.0.1", 6379), timeout=2)
    return "connected"
"""
    body = client.post("/code/execute", json={"code": escape, "function_name": "escape"}).json()
    assert body["success"] is False and body["error_type"] in {
        "ConnectionRefusedError", "OSError", "PermissionError"
    }  # fmt: skip
    loop = "def spin():\n    while True:\n        pass\n"
    body = client.post("/code/execute", json={"code": loop, "function_name": "spin"}).json()
    assert body["success"] is False and body["error_type"] in {
        "CpuTimeExceeded", "TimeoutError", "ResourceLimitExceeded"
    }  # fmt: skip
    assert client.get("/health").json()["status"] == "ok"


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/code/check", {"code": "x = 1\n" * 5000, "function_name": "f"}, "CODING_MAX_CODE_CHARS"),
        ("/code/check", {"code": "def f(): pass", "function_name": "1f"}, "function_name"),
        ("/code/check", {"code": "", "function_name": "f"}, "code"),
        ("/code/check", {"code": "def f(): pass", "function_name": "f", "x": 1}, "x"),
        (
            "/code/execute",
            {"code": "def f(df): return 1", "function_name": "f", "test_data": [{"a": 1}] * 51},
            "CODING_MAX_TEST_ROWS",
        ),
        (
            "/code/execute",
            {"code": "def f(df): return 1", "function_name": "f", "test_data": {"a": [1], "b": []}},
            "different lengths",
        ),
        (
            "/code/execute",
            {"code": "def f(df): return 1", "function_name": "f", "test_data": [{"a": [1]}]},
            "test_data",
        ),
        ("/code/generate", {"execution_spec": {"function_name": "f"}}, "description"),
        (
            "/code/generate",
            {"execution_spec": {"function_name": "f", "description": "d"}, "max_iterations": 21},
            "max_iterations",
        ),
        (
            "/code/generate",
            {"execution_spec": {"function_name": "f", "description": "d"}, "max_iterations": 0},
            "max_iterations",
        ),
    ],
)
def test_bad_requests_are_422_naming_the_problem(
    client: TestClient, path: str, body: dict[str, Any], expected: str
) -> None:
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["error"]["message"]


def test_generate_without_a_model_is_503_naming_the_fix(client: TestClient) -> None:
    response = client.post("/code/generate", json={"execution_spec": SPEC, "test_data": DATA})
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["dependency"] == "llm" and "LLM_PROVIDER" in error["message"]
    assert "/code/execute" in error["message"] and "Retry-After" not in response.headers


def test_a_missing_sandbox_is_visible_and_refuses_execution(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(sandbox_bwrap_path="/nonexistent/bwrap")
    with TestClient(create_app(settings)) as client:
        health = client.get("/health")
        assert health.status_code == 200  # not required: the rest of the API is healthy
        sandbox = health.json()["dependencies"]["sandbox"]
        assert sandbox["status"] == "error" and sandbox["required"] is False
        assert "apt-get install -y bubblewrap" in sandbox["error"]
        refused = client.post("/code/execute", json={"code": TOTALS, "function_name": "totals"})
        assert refused.status_code == 503
        error = refused.json()["error"]
        assert error["dependency"] == "sandbox" and "bubblewrap" in error["message"]
        checked = client.post("/code/check", json={"code": TOTALS, "function_name": "totals"})
        assert checked.status_code == 200 and checked.json()["is_valid"] is True


def test_health_and_metrics_show_the_sandbox_and_the_tools(client: TestClient) -> None:
    sandbox = client.get("/health").json()["dependencies"]["sandbox"]
    assert sandbox["status"] == "ok" and sandbox["required"] is False
    assert sandbox["target"].endswith("bwrap") and sandbox["mode"] in {"root-drop", "userns"}
    client.post("/code/check", json={"code": TOTALS, "function_name": "totals"})
    client.post("/code/execute", json={"code": TOTALS, "function_name": "totals"})  # no data
    coding = client.get("/metrics").json()["coding"]
    tools = coding["tools"]
    assert tools["check_code"]["calls"] == 1 and tools["check_code"]["failed"] == 0
    assert tools["test_code"]["calls"] == 1 and tools["test_code"]["failed"] == 1
    assert tools["test_code"]["mean_ms"] > 0 and tools["test_code"]["max_ms"] > 0
    assert coding["sandbox"]["executions"] >= 1


# --- with the stub model ----------------------------------------------------------------------


@pytest.fixture
def llm_client(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> Iterator[TestClient]:
    """The API with the OpenAI provider on the stub server (no LLM cache: every call reaches
    the scripted model)."""
    with TestClient(create_app(stub_settings(llm_cache_ttl_seconds=0))) as test_client:
        yield test_client


def test_generate_runs_the_loop_through_the_graph(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    """The issue's "must show": request -> tool calls -> code that runs on the DataFrame -> the
    six-field result, over the real OpenAI client and the real sandbox."""
    coder = ScriptedCoder(generations=[fenced(RAISES), fenced(FIXED)])
    stub_openai.responder = coder
    response = llm_client.post(
        "/code/generate", json={"execution_spec": SPEC, "test_data": DATA, "max_iterations": 3}
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert set(result) == SIX
    assert result["is_code_valid"] is True and result["iteration_count"] == 2
    assert result["execution_result"] == {"type": "float", "value": 2.0}
    assert result["runtime_error"] is None and 'big["amount"].iloc[0]' in result["generated_code"]
    transcript = render_transcript(stub_openai.requests, result)
    print("\n" + transcript)
    model = "MODEL   -> "
    calls = [
        line.removeprefix(model).split("(")[0]
        for line in transcript.splitlines()
        if line.startswith(model)
    ]
    assert calls == ["generate_code", "check_code", "test_code", "analyze_error", "generate_code"]
    assert "KeyError" in transcript  # the first code's error reached the model
    coding = llm_client.get("/metrics").json()["coding"]
    assert coding["runs"]["total"] == 1 and coding["runs"]["valid"] == 1
    assert coding["tools"]["generate_code"]["calls"] == 2
    assert coding["tools"]["test_code"] == {**coding["tools"]["test_code"], "calls": 2, "failed": 1}


def test_generate_stops_at_the_bound_with_the_best_code(
    llm_client: TestClient, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = ScriptedCoder(generations=[fenced(RAISES)])
    result = llm_client.post(
        "/code/generate", json={"execution_spec": SPEC, "test_data": DATA, "max_iterations": 2}
    ).json()
    assert set(result) == SIX and result["iteration_count"] == 2
    assert result["is_code_valid"] is False and result["runtime_error"].startswith("KeyError")
    assert result["generated_code"].strip() == RAISES.strip()


def test_generate_survives_a_failing_model(llm_client: TestClient, stub_openai: StubOpenAI) -> None:
    stub_openai.responder = ScriptedCoder(generations=[fenced(RAISES)])
    stub_openai.fail_next(*[500] * 10)
    result = llm_client.post("/code/generate", json={"execution_spec": SPEC}).json()
    assert set(result) == SIX and result["is_code_valid"] is False
    assert any("stopped early" in issue for issue in result["code_issues"])
