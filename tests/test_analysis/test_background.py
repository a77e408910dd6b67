"""Background analyses (in-process API and worker): status, events, ownership, cancel, resume."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from config import Settings
from main import create_app
from tests.support.sse import sse_events
from tests.support.stub_openai import StubOpenAI
from tests.test_analysis.conftest import FAST_QUEUE, stub_settings
from tests.test_analysis.graphkit import BatchRecorder, saved_batches, synthetic_suite

GOOD = "import time\n\ndef test_waits():\n    time.sleep(1)\n    assert run() == 3\n"


def wait_for(
    client: TestClient,
    thread_id: str,
    until: Callable[[dict[str, Any]], bool],
    timeout: float = 30.0,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(f"/analyses/{thread_id}", headers=headers).json()
        if until(body):
            return body
        assert time.monotonic() < deadline, f"gave up waiting; last status {body}"
        time.sleep(0.05)


def finished(body: dict[str, Any]) -> bool:
    return body["status"] in ("done", "failed", "cancelled")


def test_a_background_analysis_runs_to_done(client: TestClient) -> None:
    submitted = client.post(
        "/analyses",
        json={"files": [{"path": "tests/test_a.py", "content": GOOD}], "mode": "rules-only"},
    )
    assert submitted.status_code == 202
    thread_id = submitted.json()["thread_id"]
    body = wait_for(client, thread_id, finished)
    assert body["status"] == "done", body
    assert body["stages_done"][0] == "plan_analysis"
    assert body["stages_done"][-1] == "assure_quality" and len(body["stages_done"]) == 6
    assert body["result"]["issues"][0]["smell"] == "sleepy-test"
    assert body["attempts"] == 1 and body["finished_at"] >= body["started_at"]

    events = sse_events(client.get(f"/analyses/{thread_id}/events").text)
    names = [name for name, _ in events]
    assert names[0] == "queued" and names[1] == "started" and names[-1] == "done"
    assert "stage" in names and events[-1][1]["summary"]["total"] == 1

    assert client.post(f"/analyses/{thread_id}/cancel").status_code == 409
    again = client.post(f"/analyses/{thread_id}/resume")
    assert again.status_code == 409 and "done" in again.json()["error"]["message"]


def test_bad_input_is_refused_before_queueing(client: TestClient) -> None:
    traversal = client.post("/analyses", json={"files": [{"path": "../x.py", "content": ""}]})
    assert traversal.status_code == 400
    assert client.get("/analyses/not an id").status_code in (404, 422)
    assert client.get("/analyses/short").status_code == 422
    unknown = client.get("/analyses/0123456789abcdef0123456789abcdef")
    assert unknown.status_code == 404 and "not found" in unknown.json()["error"]["message"]


@pytest.fixture
def keyed_client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(api_keys="key-one,key-two", **FAST_QUEUE))) as c:
        yield c


def test_analyses_belong_to_the_key_that_submitted_them(keyed_client: TestClient) -> None:
    one, two = {"X-API-Key": "key-one"}, {"X-API-Key": "key-two"}
    thread_id = keyed_client.post(
        "/analyses",
        headers=one,
        json={
            "files": [{"path": "tests/test_a.py", "content": GOOD}],
            "mode": "rules-only",
        },
    ).json()["thread_id"]
    wait_for(keyed_client, thread_id, finished, headers=one)
    for path in ("", "/events"):
        assert keyed_client.get(f"/analyses/{thread_id}{path}", headers=two).status_code == 404
    for action in ("cancel", "resume"):
        assert keyed_client.post(f"/analyses/{thread_id}/{action}", headers=two).status_code == 404
    assert keyed_client.get(f"/analyses/{thread_id}").status_code == 401


def test_cancel_stops_a_running_analysis_and_resume_finishes_it(
    make_settings: Callable[..., Settings], stub_openai: StubOpenAI, redis_url: str
) -> None:
    recorder = BatchRecorder()
    stub_openai.responder = recorder
    settings = make_settings(**stub_settings(stub_openai, llm_max_concurrency=2))
    # Two reviews are answered; later calls are held until the cancel has taken effect, so the
    # analysis cannot finish first however busy the machine is.
    recorder.hold_after(2)
    with TestClient(create_app(settings)) as client:
        try:
            thread_id = client.post(
                "/analyses",
                json={
                    "files": synthetic_suite(50, per_file=25),
                    "mode": "hybrid",
                },
            ).json()["thread_id"]
            running = wait_for(client, thread_id, lambda b: b["batches"]["done"] >= 2)
            assert running["status"] == "running" and running["batches"]["total"] == 10
            busy = client.post(f"/analyses/{thread_id}/resume")
            assert busy.status_code == 409 and "running" in busy.json()["error"]["message"]

            cancel = client.post(f"/analyses/{thread_id}/cancel")
            assert cancel.status_code == 202 and cancel.json()["cancel_requested"] is True
            stopped = wait_for(client, thread_id, finished)
            assert stopped["status"] == "cancelled"
            calls_at_cancel = dict(recorder.calls)
        finally:
            recorder.release()
        before = saved_batches(redis_url, thread_id)
        assert len(before) == 2 and stopped["batches"]["done"] == len(before)

        assert client.post(f"/analyses/{thread_id}/resume").status_code == 202
        done = wait_for(client, thread_id, finished)
    assert done["status"] == "done", done
    result = done["result"]
    assert result["quality"]["passed"] and result["metrics"]["llm_batches"] == 10
    assert len(recorder.calls) == 10  # every batch was reviewed
    assert all(recorder.calls[b] == 1 for b in before), "a saved batch was reviewed again"
    # nothing ran between the cancel and the resume: the batches held at the cancel (at most
    # one per connection) are the only ones asked twice
    assert len(calls_at_cancel) <= 2 + 2
    assert [b for b, n in recorder.calls.items() if n > 1] == [
        b for b in calls_at_cancel if b not in before
    ]
    events = [name for name, _ in sse_events(client_events_text(settings, thread_id))]
    assert events.count("started") == 2 and "cancelled" in events and events[-1] == "done"


def client_events_text(settings: Settings, thread_id: str) -> str:
    """The events of an analysis, read by another API instance (any process can serve them)."""
    with TestClient(create_app(settings)) as other:
        return other.get(f"/analyses/{thread_id}/events").text


def test_a_failed_analysis_says_why_and_resume_completes_it(
    make_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    recorder = BatchRecorder()
    stub_openai.responder = recorder
    stub_openai.fail_next(500, 500)  # the provider is down for the first two calls
    settings = make_settings(**stub_settings(stub_openai, llm_max_retries=0))
    with TestClient(create_app(settings)) as client:
        thread_id = client.post(
            "/analyses",
            json={
                "files": synthetic_suite(10, per_file=10),
                "mode": "hybrid",
            },
        ).json()["thread_id"]
        failed = wait_for(client, thread_id, finished)
        assert failed["status"] == "failed"
        assert "language model provider failed" in failed["error"]
        assert client.post(f"/analyses/{thread_id}/resume").status_code == 202
        done = wait_for(client, thread_id, finished)
    assert done["status"] == "done" and done["error"] is None and done["attempts"] == 2
    assert done["result"]["metrics"]["llm_batches"] == 2 and len(recorder.calls) == 2
