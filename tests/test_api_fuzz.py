"""Property-based API fuzzing (schemathesis) over every operation of a real API process:
no answer is a 5xx, and every answer conforms to the OpenAPI schema (status code, content
type, headers, body)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.pgvector import PgvectorServer
from tests.support.processes import ApiProcess

#: Operations that need a chat model: the fuzzed server has none (LLM_PROVIDER=none), so their
#: documented answer to a valid request is 503 with `dependency: llm` (the message names the fix).
NEEDS_A_MODEL = {"POST /code/generate"}


def no_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """`not_a_server_error`, except the documented "no chat model" 503 of NEEDS_A_MODEL."""
    if (
        f"{case.method.upper()} {case.path}" in NEEDS_A_MODEL
        and response.status_code == 503
        and (response.json().get("error") or {}).get("dependency") == "llm"
    ):
        return None
    return not_a_server_error(ctx, response, case)


CHECKS = [
    no_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
#: Operations that answer an endless stream (an SSE connection open until the client leaves):
#: a case would only end at its timeout. Covered by tests/personal/test_reminders.py.
ENDLESS = {"GET /notifications/stream"}
#: Cases per operation: enough to vary every field, few enough for the suite's time budget.
EXAMPLES = 40
#: Fewer for operations whose every valid case costs a sandboxed run (about 0.6 s each; the
#: sandbox bounds each run's time, whatever code is sent).
EXAMPLES_FOR = {"POST /code/execute": 20}

pytestmark = pytest.mark.slow

#: The fuzzed server requires keys, as a shared deployment does: every case is made with one (the
#: 401 answers of a keyless call are not what this test is for; tests/security covers them).
FUZZ_KEY = "fuzz-key-0123456789"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiProcess]:
    from tests.conftest import SHARED_REDIS_HOST, SHARED_REDIS_PORT, _claim_database

    folder: Path = tmp_path_factory.mktemp("fuzz")
    pgvector = PgvectorServer("sy-fuzzpg-")  # the knowledge base needs pgvector
    env = {
        "DATA_DIR": str(folder),
        "REDIS_URL": f"redis://{SHARED_REDIS_HOST}:{SHARED_REDIS_PORT}/{_claim_database()}",
        "DATABASE_URL": pgvector.database(),
        "LLM_PROVIDER": "none",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "MAX_REQUEST_BYTES": "200000",
        "LOG_LEVEL": "WARNING",
        "API_KEYS": FUZZ_KEY,
    }
    try:
        process = ApiProcess(env, log_path=folder / "api.log").start(timeout=240)
        yield process
        process.stop()
    finally:
        pgvector.stop()


# Thousands of requests: its length scales with the machine's speed (minutes on a loaded one),
# so it gets a bound of its own above the suite's 300 s.
@pytest.mark.timeout(1200)
def test_no_server_errors_and_answers_match_the_schema(api: ApiProcess) -> None:
    """Every operation, EXAMPLES generated cases each (schemathesis strategies driven by
    hypothesis here, not by its pytest plugin)."""
    api_schema = schemathesis.openapi.from_url(f"{api.url}/openapi.json")
    operations = [
        operation
        for operation in (result.ok() for result in api_schema.get_all_operations())  # type: ignore[union-attr]
        if f"{operation.method.upper()} {operation.path}" not in ENDLESS
    ]
    failures: dict[str, str] = {}
    cases: Counter[str] = Counter()

    def fuzzer(operation: Any) -> Any:
        name = f"{operation.method.upper()} {operation.path}"

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_FOR.get(name, EXAMPLES),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,  # the same cases every run: a failure is reproducible
            database=None,
        )
        def fuzz(case: Any) -> None:
            cases[name] += 1
            case.call_and_validate(checks=CHECKS, timeout=120, headers={"X-API-Key": FUZZ_KEY})

        return fuzz

    for operation in operations:
        try:
            fuzzer(operation)()
        except Exception as exc:  # keep going: report every operation that fails
            name = f"{operation.method.upper()} {operation.path}"
            failures[name] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    print(
        f"\nschemathesis: {len(operations)} operations, {sum(cases.values())} cases, "
        f"{len(failures)} failing operations"
    )
    assert not failures, "\n\n".join(f"{k}: {v}" for k, v in failures.items())
    assert len(operations) >= 18 and set(cases) == {
        f"{op.method.upper()} {op.path}" for op in operations
    }
