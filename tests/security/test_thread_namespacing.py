"""Thread ids are per API key (issue 22, item 6): two keys each own a thread ``t-1-shared``.

A real API process (the machine's Redis and Postgres, an OpenAI-compatible stub as the chat
model, two API keys, a webhook receiver on loopback). Key A drives the Agent Server API with
the official langgraph-sdk client, key B with raw HTTP, so every answer B gets is checked as
the JSON on the wire: it shows the id B chose, and the stored form (``<owner>:<id>``) never
appears in it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import NotFoundError

from app.security import owner_of
from tests.support.processes import ApiProcess
from tests.support.servers import free_port
from tests.support.sse import sse_events
from tests.support.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

KEY_A = "key-a-namespacing-0123"
KEY_B = "key-b-namespacing-0123"
OWNER_SECRET = "namespacing-owner-secret-0123"
OWNER_A = owner_of(KEY_A, OWNER_SECRET.encode())
OWNER_B = owner_of(KEY_B, OWNER_SECRET.encode())
#: The id both keys choose ("t-1" itself is shorter than a thread id may be: 8-64 characters).
T = "t-1-shared"
#: Every mode a run can stream: the checkpoint and debug events carry LangGraph's configs.
MODES = ["values", "updates", "messages-tuple", "custom", "debug", "tasks", "checkpoints"]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    from tests.conftest import SHARED_REDIS_HOST, SHARED_REDIS_PORT, _claim_database

    url = f"redis://{SHARED_REDIS_HOST}:{SHARED_REDIS_PORT}/{_claim_database()}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


class Receiver:
    """A loopback webhook receiver that keeps every body it gets."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.arrived = threading.Condition()
        bodies, arrived = self.bodies, self.arrived

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with arrived:
                    bodies.append(body.decode())
                    arrived.notify_all()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 90.0) -> list[str]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.bodies) >= count, timeout), (
                f"{len(self.bodies)} webhook(s) arrived, not {count}"
            )
            return list(self.bodies)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    yield hook
    hook.stop()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, postgres_url: str
) -> Iterator[ApiProcess]:
    folder: Path = tmp_path_factory.mktemp("sec-namespacing")
    stub = StubOpenAI().start()
    stub.responder = lambda request: "an answer"
    env = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder),
        "API_KEYS": f"{KEY_A},{KEY_B}",
        "OWNER_ID_SECRET": OWNER_SECRET,
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": stub.base_url,
        "LLM_CACHE_TTL_SECONDS": "0",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "RUN_HEARTBEAT_SECONDS": "0.3",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",  # the receiver is on loopback
        "HF_HUB_OFFLINE": "1",
    }
    process = ApiProcess(env, log_path=folder / "api.log").start(timeout=180)
    try:
        yield process
    finally:
        process.stop()
        stub.stop()


def chat_input(text: str) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}], "target_agent": "chat"}


def no_stored_form(text: str) -> None:
    """The wire never shows a stored thread key: neither owner's, in any form."""
    for owner in (OWNER_A, OWNER_B):
        assert f"{owner}:" not in text, f"a stored thread key leaked: {text[:2000]}"


class Raw:
    """Raw HTTP as one key: every answer's text is checked before it is parsed."""

    def __init__(self, server: ApiProcess, key: str) -> None:
        self.http = httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=120)

    def call(self, method: str, path: str, status: int = 200, **kwargs: Any) -> Any:
        answer = self.http.request(method, path, **kwargs)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text)
        no_stored_form(answer.text)
        for name in ("Location", "Content-Location"):
            no_stored_form(answer.headers.get(name, ""))
        return answer.json() if answer.content and status != 204 else None

    def stream(self, path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
        with self.http.stream("POST", path, json=body) as answer:
            assert answer.status_code == 200, answer.read()
            text = answer.read().decode()
        no_stored_form(text)
        return sse_events(text)


def thread_ids_in(value: Any) -> list[str]:
    """Every value of a ``thread_id`` key, at any depth."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "thread_id" and isinstance(item, str):
                found.append(item)
            found += thread_ids_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += thread_ids_in(item)
    return found


def test_two_keys_each_own_a_thread_of_the_same_id(server: ApiProcess, receiver: Receiver) -> None:
    a: Any = get_sync_client(url=server.url, api_key=KEY_A)
    b = Raw(server, KEY_B)

    # both create t-1-shared: both succeed, each with its own metadata
    made_a = a.threads.create(thread_id=T, metadata={"who": "a"})
    made_b = b.call("POST", "/threads", json={"thread_id": T, "metadata": {"who": "b"}})
    assert made_a["thread_id"] == made_b["thread_id"] == T
    assert made_a["metadata"]["who"] == "a" and made_b["metadata"]["who"] == "b"

    # a run on each, B's streamed in every mode and reported to a webhook
    a.runs.wait(T, "chat", input=chat_input("words of a"), webhook=receiver.url)
    events = b.stream(
        f"/threads/{T}/runs/stream",
        {
            "assistant_id": "chat",
            "input": chat_input("words of b"),
            "stream_mode": MODES,
            "stream_subgraphs": True,
            "webhook": receiver.url,
        },
    )
    assert events[-1][0] == "end", events[-1]
    configs = [data for event, data in events if event.split("|")[0] in ("checkpoints", "debug")]
    assert configs, [event for event, _ in events]
    seen = thread_ids_in([data for _, data in events])
    assert seen and set(seen) == {T}, set(seen)

    # each sees only its own conversation, with t-1-shared everywhere
    state_b = b.call("GET", f"/threads/{T}/state")
    texts_b = [m["content"] for m in state_b["values"]["messages"]]
    assert "words of b" in texts_b and "words of a" not in texts_b
    assert state_b["checkpoint"]["thread_id"] == T
    assert state_b["parent_checkpoint"]["thread_id"] == T
    assert state_b["metadata"].get("thread_id", T) == T  # LangGraph may leave it out
    state_a = a.threads.get_state(T)
    texts_a = [m["content"] for m in state_a["values"]["messages"]]
    assert "words of a" in texts_a and "words of b" not in texts_a
    assert state_a["checkpoint"]["thread_id"] == T
    no_stored_form(json.dumps(state_a))
    for history in (
        b.call("GET", f"/threads/{T}/history?limit=100"),
        b.call("POST", f"/threads/{T}/history", json={"limit": 100}),
    ):
        assert len(history) > 1 and set(thread_ids_in(history)) == {T}
    no_stored_form(json.dumps(a.threads.get_history(T, limit=100)))
    at = b.call("GET", f"/threads/{T}/state/{state_b['parent_checkpoint']['checkpoint_id']}")
    assert at["checkpoint"]["thread_id"] == T
    assert set(thread_ids_in(b.call("GET", f"/threads/{T}/state?subgraphs=true"))) <= {T}

    # runs: each key sees its own run of t-1-shared
    runs_b = b.call("GET", f"/threads/{T}/runs")
    runs_a = a.runs.list(T)
    assert len(runs_b) == len(runs_a) == 1
    assert runs_b[0]["run_id"] != runs_a[0]["run_id"]
    assert runs_b[0]["thread_id"] == runs_a[0]["thread_id"] == T
    run_b = b.call("GET", f"/threads/{T}/runs/{runs_b[0]['run_id']}")
    assert run_b["thread_id"] == T
    b.call("GET", f"/threads/{T}/runs/{runs_a[0]['run_id']}", status=404)  # A's run: not B's
    joined = b.call("GET", f"/threads/{T}/runs/{runs_b[0]['run_id']}/join")
    assert "words of b" in json.dumps(joined)
    waited = b.call(
        "POST", f"/threads/{T}/runs/wait", json={"assistant_id": "chat", "input": chat_input("2")}
    )
    assert waited["session_id"] == T

    # thread views and search: only the caller's own
    assert b.call("GET", f"/threads/{T}")["metadata"]["who"] == "b"
    assert a.threads.get(T)["metadata"]["who"] == "a"
    found_b = b.call("POST", "/threads/search", json={"limit": 100})
    assert [(t["thread_id"], t["metadata"]["who"]) for t in found_b] == [(T, "b")]
    found_a = a.threads.search(limit=100)
    assert [(t["thread_id"], t["metadata"]["who"]) for t in found_a] == [(T, "a")]
    assert b.call("POST", "/threads/search", json={"ids": [T]})[0]["thread_id"] == T

    # the webhooks: each run's, with the id its caller chose
    for body in receiver.wait_for(2):
        no_stored_form(body)
        assert json.loads(body)["thread_id"] == T

    # /chat on the same id continues each key's own thread
    chat_b = b.call("POST", "/chat", json={"message": "chat of b", "session_id": T})
    assert chat_b["session_id"] == T
    streamed = b.stream("/chat/stream", {"message": "streamed b", "session_id": T})
    assert streamed[0] == ("session", {"session_id": T})
    session_b = b.call("GET", f"/session/{T}")
    shown = [m["content"] for m in session_b["last_messages"]]
    assert session_b["session_id"] == T and "chat of b" in shown and "words of a" not in shown
    assert b.call("GET", f"/session/{T}/history")["session_id"] == T
    a_texts = [m["content"] for m in a.threads.get_state(T)["values"]["messages"]]
    assert "chat of b" not in a_texts and "streamed b" not in a_texts

    # a copy of B's thread is B's, with a new id
    copy = b.call("POST", f"/threads/{T}/copy")
    assert copy["thread_id"] != T and copy["metadata"]["who"] == "b"
    b.call("DELETE", f"/threads/{copy['thread_id']}", status=204)

    # B deletes its t-1-shared: A's is untouched
    b.call("DELETE", f"/threads/{T}", status=204)
    b.call("GET", f"/threads/{T}", status=404)
    assert b.call("POST", "/threads/search", json={"limit": 100}) == []
    assert a.threads.get(T)["metadata"]["who"] == "a"
    assert "words of a" in str(a.threads.get_state(T)["values"])
    assert len(a.runs.list(T)) == 1
    a.threads.delete(T)
    with pytest.raises(NotFoundError):
        a.threads.get(T)


def test_another_keys_id_behaves_exactly_like_a_fresh_id(server: ApiProcess) -> None:
    a: Any = get_sync_client(url=server.url, api_key=KEY_A)
    b = Raw(server, KEY_B)
    taken, fresh = "a-owns-this-1", "nobody-has-this-1"
    a.threads.create(thread_id=taken, metadata={"secret": "of a"})
    a.runs.wait(taken, "chat", input=chat_input("private"))

    def shape(thread: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in thread.items() if k not in ("thread_id", "created_at")} | {
            "updated_at": None,
            "state_updated_at": None,
        }

    # the same answers, with any if_exists, for the id A owns and for an id nobody used
    for if_exists in ("raise", "do_nothing"):
        on_taken = b.call("POST", "/threads", json={"thread_id": taken, "if_exists": if_exists})
        on_fresh = b.call("POST", "/threads", json={"thread_id": fresh, "if_exists": if_exists})
        assert shape(on_taken) == shape(on_fresh) and on_taken["thread_id"] == taken
        if if_exists == "raise":  # and now both are B's: the same 409 for both
            for thread_id in (taken, fresh):
                b.call("POST", "/threads", status=409, json={"thread_id": thread_id})
        for thread_id in (taken, fresh):
            b.call("DELETE", f"/threads/{thread_id}", status=204)
    # unknown to B, both: the same 404s
    for thread_id in (taken, fresh):
        b.call("GET", f"/threads/{thread_id}", status=404)
        b.call("GET", f"/threads/{thread_id}/state", status=404)
        b.call("POST", "/chat", status=404, json={"message": "hi", "session_id": thread_id})
    # a run that creates its thread: fine on both, and B's runs never see A's conversation
    for thread_id in (taken, fresh):
        out = b.call(
            "POST",
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": "chat", "input": chat_input("b"), "if_not_exists": "create"},
        )
        assert "private" not in json.dumps(out)
        b.call("DELETE", f"/threads/{thread_id}", status=204)
    # A's thread is as it was
    thread = a.threads.get(taken)
    assert thread["metadata"]["secret"] == "of a" and "private" in str(thread["values"])
    a.threads.delete(taken)
