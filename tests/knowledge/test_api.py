"""The documents REST API and a chat turn over them, on the real app (Redis, Postgres 16 with
pgvector holding the knowledge base, MiniLM): upload, list, delete, per-file errors, size
limits, auth, and a question asked over POST /chat that is routed to the knowledge agent and
answered with citations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.routers.knowledge import upload_failure
from app.security import owner_of
from config import Settings
from main import create_app
from tests.knowledge.conftest import CORPUS
from tests.support.servers import free_port
from tests.support.sse import sse_events
from tests.support.stub_openai import StubOpenAI, last_user_text

KEY = "test-key-1"
OTHER_KEY = "test-key-2"
#: The apps' owner-id secret, so the tests can compute each key's owner id.
OWNER_SECRET = "knowledge-tests-owner-secret"
REPO = Path(__file__).resolve().parents[2]
#: Where KEY's uploads live in the shared collection.
SOURCE = f"upload:{owner_of(KEY, OWNER_SECRET.encode())}/"
Files = list[tuple[str, tuple[str, bytes, str]]]


def files(named: dict[str, bytes]) -> Files:
    return [("files", (name, data, "application/octet-stream")) for name, data in named.items()]


CORPUS_FILES = {name: text.encode() for name, text in CORPUS.items()}


@pytest.fixture
def app_settings(tmp_path: Path, redis_url: str, knowledge_db: str) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "redis_url": redis_url,
            "database_url": knowledge_db,
            "llm_provider": "none",
            "ollama_base_url": f"http://127.0.0.1:{free_port()}",
            "chunk_size": 400,
            "chunk_overlap": 80,
            "reflection_min_relevant_docs": 1,
            "api_keys": [KEY],
            "owner_id_secret": OWNER_SECRET,
            **overrides,
        }
        return Settings(_env_file=None, **values)

    return build


@pytest.fixture
def client(app_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    app = create_app(app_settings(max_document_bytes=4000, max_request_bytes=64 * 1024))
    with TestClient(app, headers={"X-API-Key": KEY}) as test_client:
        yield test_client


def titles(client: TestClient) -> list[str]:
    body = client.get("/documents").json()
    return sorted(d["title"] for d in body["documents"])


def test_upload_list_show_and_delete(client: TestClient) -> None:
    response = client.post("/documents", files=files(CORPUS_FILES))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] and body["added"] == 4 and body["failed_files"] == 0
    assert [f["path"] for f in body["files"]] == list(CORPUS)
    assert titles(client) == ["Backups", "Cats", "Rotating API keys", "errors"]

    page = client.get("/documents", params={"limit": 3}).json()
    assert (page["total"], len(page["documents"]), page["next_offset"]) == (4, 3, 3)
    rest = client.get("/documents", params={"limit": 3, "offset": 3}).json()
    assert len(rest["documents"]) == 1 and rest["next_offset"] is None
    assert client.get("/documents", params={"limit": 0}).status_code == 422

    cats = next(d for d in page["documents"] + rest["documents"] if d["title"] == "Cats")
    assert cats["source"] == f"{SOURCE}cats.rst" and cats["chunk_count"] >= 1
    assert client.get(f"/documents/{cats['id']}").json()["title"] == "Cats"

    again = client.post("/documents", files=files({"cats.rst": CORPUS_FILES["cats.rst"]}))
    assert again.json()["unchanged"] == 1
    changed = client.post("/documents", files=files({"cats.rst": b"Cats\n====\n\nCats purr."}))
    assert changed.json()["replaced"] == 1
    assert client.get(f"/documents/{cats['id']}").json()["chunk_count"] == 1

    assert client.delete(f"/documents/{cats['id']}").status_code == 204
    gone = client.delete(f"/documents/{cats['id']}")
    assert gone.status_code == 404 and "GET /documents" in gone.json()["error"]["message"]
    assert client.get(f"/documents/{uuid.uuid4()}").status_code == 404
    assert client.delete("/documents/not-a-uuid").status_code == 422
    assert "Cats" not in titles(client)


def test_documents_need_an_api_key(client: TestClient) -> None:
    for method, path in [("get", "/documents"), ("delete", f"/documents/{uuid.uuid4()}")]:
        response = getattr(client, method)(path, headers={"X-API-Key": "wrong"})
        assert response.status_code == 401 and "API key" in response.json()["error"]["message"]
    denied = client.post("/documents", files=files(CORPUS_FILES), headers={"X-API-Key": ""})
    assert denied.status_code == 401


def _ask(client: TestClient, message: str, key: str, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message}
    if options:
        body["options"] = options
    response = client.post("/chat", json=body, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()


def _search(client: TestClient, key: str, **body: Any) -> Any:
    return client.post("/documents/search", json=body, headers={"X-API-Key": key})


def test_each_key_reads_its_private_collection_and_the_shared_ones(
    app_settings: Callable[..., Settings], knowledge_db: str, tmp_path: Path
) -> None:
    """Two keys: an upload is private to its key (listing, search, chat answers, show, delete);
    `main.py ingest` writes the shared collection both read; only a shared writer changes it;
    metadata and filters work through the API and the chat options."""
    handbook = tmp_path / "handbook.md"
    handbook.write_text("# Office\n\nThe office day is Wednesday for every team.\n")
    ingest = subprocess.run(
        [sys.executable, "main.py", "ingest", "--quiet", str(handbook)],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HF_HUB_OFFLINE": "1",
            "DATABASE_URL": knowledge_db,
            "DATA_DIR": str(tmp_path / "data"),
            "CHUNK_SIZE": "400",
            "CHUNK_OVERLAP": "80",
        },  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    writer = owner_of(KEY, OWNER_SECRET.encode())
    settings = app_settings(api_keys=[KEY, OTHER_KEY], knowledge_shared_writers=writer)
    with TestClient(create_app(settings)) as client:
        mine, other = {"X-API-Key": KEY}, {"X-API-Key": OTHER_KEY}
        cats = {"cats.rst": CORPUS_FILES["cats.rst"]}
        meta = json.dumps({"team": "pets", "year": 2024, "reviewed": True})
        up = client.post("/documents", files=files(cats), data={"metadata": meta}, headers=mine)
        assert up.status_code == 200 and up.json()["added"] == 1, up.text
        backups = {"backups.md": CORPUS_FILES["backups.md"]}
        assert client.post("/documents", files=files(backups), headers=other).json()["added"] == 1

        # listing: each key's private documents and the shared ones, with the collection
        def listed(headers: dict[str, str]) -> dict[str, dict[str, Any]]:
            body = client.get("/documents", headers=headers).json()
            return {d["title"]: d for d in body["documents"]}

        assert {t: d["collection"] for t, d in listed(mine).items()} == {
            "Cats": "private", "Office": "shared"}  # fmt: skip
        assert {t: d["collection"] for t, d in listed(other).items()} == {
            "Backups": "private", "Office": "shared"}  # fmt: skip
        cats_doc = listed(mine)["Cats"]
        assert cats_doc["metadata"] == {"team": "pets", "year": 2024, "reviewed": True}
        only = client.get("/documents", params={"collection": "shared"}, headers=mine).json()
        assert [d["title"] for d in only["documents"]] == ["Office"]
        bad_listing = client.get("/documents", params={"collection": "Not A Name"}, headers=mine)
        assert bad_listing.status_code == 422, bad_listing.text

        # search: private isolation, shared for both, the hit's fields
        hits = _search(client, KEY, query="how long do cats sleep?", top_k=3).json()["hits"]
        assert hits[0]["title"] == "Cats" and hits[0]["collection"] == "private"
        assert set(hits[0]) == {"document_id", "chunk_id", "title", "source", "collection",
                                "page", "chunk", "score", "text"}  # fmt: skip
        assert hits[0]["page"] is None and hits[0]["chunk"] == 0
        theirs = _search(client, OTHER_KEY, query="how long do cats sleep?", top_k=10).json()
        assert "Cats" not in {h["title"] for h in theirs["hits"]}
        for key in (KEY, OTHER_KEY):
            office = _search(client, key, query="which day is the office day?", top_k=1)
            assert office.json()["hits"][0]["title"] == "Office"
        lexical = _search(client, KEY, query="cats sleep", mode="lexical").json()
        assert lexical["mode"] == "lexical" and lexical["lambda_mult"] == 0.0

        # filters through the API: metadata, collection; bad ones are 422 with a message
        found = _search(client, KEY, query="sleep office day", top_k=5,
                        filters={"metadata": {"team": "pets", "year": {"gte": 2020}}})  # fmt: skip
        assert {h["title"] for h in found.json()["hits"]} == {"Cats"}
        found = _search(client, KEY, query="cats sleep", filters={"collection": "shared"})
        assert {h["title"] for h in found.json()["hits"]} <= {"Office"}
        bad_filters: list[dict[str, Any]] = [
            {"colour": "red"}, {"metadata": {"year": {"between": [1, 2]}}},
            {"collection": "Not a name"}, {"metadata": {"tag": {"in": []}}},
            {"source": "a\x00b"}, {"metadata": {"k\x00": 1}}, {"metadata": {"k": "\x00"}},
        ]  # fmt: skip
        for bad_filter in bad_filters:
            refused = _search(client, KEY, query="cats", filters=bad_filter)
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["message"]

        # chat answers: the other key's question never reaches this key's private document
        question = "According to my documents, how long do cats sleep?"
        answer = _ask(client, question, KEY)
        assert answer["agent"] == "knowledge" and "twelve and sixteen hours" in answer["answer"]
        answer = _ask(client, question, OTHER_KEY)
        assert "twelve and sixteen hours" not in answer["answer"]
        cited = answer["data"].get("knowledge", {}).get("citations", [])
        assert "Cats" not in {c["title"] for c in cited}
        for key in (KEY, OTHER_KEY):
            shared = _ask(client, "According to my documents, which day is the office day?", key)
            assert "Wednesday" in shared["answer"]
        # chat options carry filters too: only the shared collection, no cats
        filtered = _ask(client, question, KEY, filters={"collection": "shared"})
        assert "twelve and sixteen hours" not in filtered["answer"]
        bad = client.post("/chat", json={"message": question, "options": {"filters": {"x": 1}}},
                          headers=mine)  # fmt: skip
        assert bad.status_code == 422

        # show and delete: another key's private document does not exist for it
        assert client.get(f"/documents/{cats_doc['id']}", headers=other).status_code == 404
        assert client.delete(f"/documents/{cats_doc['id']}", headers=other).status_code == 404
        office_id = listed(other)["Office"]["id"]
        refused = client.delete(f"/documents/{office_id}", headers=other)
        assert refused.status_code == 403, refused.text
        assert "KNOWLEDGE_SHARED_WRITERS" in refused.json()["error"]["message"]
        # the same name uploaded by the other key is its own document, never a replacement
        own = client.post(
            "/documents", files=files({"cats.rst": b"Cats\n====\n\nCats purr."}), headers=other
        ).json()
        assert own["added"] == 1 and own["replaced"] == 0
        kept = client.get(f"/documents/{cats_doc['id']}", headers=mine).json()
        assert kept["version"] == cats_doc["version"]

        # writing shared collections: the writer may, the other key may not
        team = {"team.md": b"# Team\n\nThe team lunch is on Friday.\n"}
        denied = client.post("/documents", files=files(team), data={"collection": "shared"},
                             headers=other)  # fmt: skip
        assert denied.status_code == 403 and "KNOWLEDGE_SHARED_WRITERS" in denied.text
        wrote = client.post("/documents", files=files(team), data={"collection": "teams"},
                            headers=mine)  # fmt: skip
        assert wrote.status_code == 200, wrote.text
        assert listed(other)["Team"]["collection"] == "teams"
        assert client.delete(f"/documents/{office_id}", headers=mine).status_code == 204
        assert set(listed(other)) == {"Backups", "Cats", "Team"}
        bad_name = client.post("/documents", files=files(team), data={"collection": "A B"},
                               headers=mine)  # fmt: skip
        assert bad_name.status_code == 422


def test_upload_metadata_is_checked(app_settings: Callable[..., Settings]) -> None:
    app = create_app(app_settings(max_document_metadata_keys=2, max_document_metadata_bytes=100))
    with TestClient(app, headers={"X-API-Key": KEY}) as client:
        cats = files({"cats.rst": CORPUS_FILES["cats.rst"]})
        for bad, fragment in (
            ("{not json", "not valid JSON"),
            ("[1, 2]", "JSON object"),
            ('{"a": [1]}', "strings, numbers or booleans"),
            ('{"a": null}', "strings, numbers or booleans"),
            ('{"a": NaN}', "not a finite number"),
            ('{"a": "x\\u0000y"}', "NUL"),
            ('{"a": 1, "b": 2, "c": 3}', "MAX_DOCUMENT_METADATA_KEYS"),
            (json.dumps({"a": "x" * 200}), "MAX_DOCUMENT_METADATA_BYTES"),
        ):
            refused = client.post("/documents", files=cats, data={"metadata": bad})
            assert refused.status_code == 422, (bad, refused.text)
            assert fragment in refused.json()["error"]["message"]
        assert client.get("/documents").json()["total"] == 0  # nothing went in
        ok = client.post("/documents", files=cats, data={"metadata": '{"a": 1.5, "b": "x"}'})
        assert ok.status_code == 200 and ok.json()["added"] == 1


def test_bad_files_get_their_own_errors_and_lose_nothing(
    client: TestClient, tmp_path: Path
) -> None:
    assert client.post("/documents", files=files(CORPUS_FILES)).status_code == 200
    before = client.get("/documents").json()["documents"]
    bad = {
        "binary.md": b"\x00\x01\x02PK\x03\x04" * 50,
        "empty.txt": b"",
        "latin1.txt": "caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"),
        "big.md": b"# Big\n\n" + b"word " * 1000,  # above MAX_DOCUMENT_BYTES (4000)
        "tool.exe": b"MZ",
        "new.md": b"# Gardening\n\nTomatoes need six hours of sun a day.\n",
        "keys.md": CORPUS_FILES["keys.md"],  # unchanged: skipped
    }
    response = client.post("/documents", files=files(bad))
    assert response.status_code == 200, response.text
    body = response.json()
    by_name = {f["path"]: f for f in body["files"]}
    assert by_name["new.md"]["status"] == "ok" and by_name["keys.md"]["status"] == "ok"
    expected = {"binary.md": "binary", "empty.txt": "empty", "latin1.txt": "UTF-8",
                "big.md": "MAX_DOCUMENT_BYTES", "tool.exe": "unsupported"}  # fmt: skip
    for name, needle in expected.items():
        assert by_name[name]["status"] == "error" and needle in by_name[name]["error"], name
    assert (body["added"], body["unchanged"], body["failed_files"]) == (1, 1, 5)
    assert not body["ok"]

    after = client.get("/documents").json()["documents"]
    kept = {d["id"]: d["version"] for d in after}
    assert all(kept.get(d["id"]) == d["version"] for d in before)  # nothing lost or changed
    assert "Gardening" in {d["title"] for d in after}

    # nothing could go in: 422 with the per-file errors (413 when all were too large)
    nothing = client.post("/documents", files=files({"a.txt": b"", "b.bin": b"\x00"}))
    assert nothing.status_code == 422
    error = nothing.json()["error"]
    assert "No file could be ingested" in error["message"] and len(error["files"]) == 2
    too_big = client.post("/documents", files=files({"big.md": b"x" * 5000}))
    assert too_big.status_code == 413 and "MAX_DOCUMENT_BYTES" in too_big.json()["error"]["message"]

    # a 200 MB (sparse) file is refused before its body is read, whatever comes with it
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    with huge.open("rb") as handle:
        refused = client.post(
            "/documents",
            files=[("files", ("huge.txt", handle, "text/plain")),
                   *files({"more.md": b"# More\n\nText.\n"})],
        )  # fmt: skip
    assert refused.status_code == 413
    assert "MAX_REQUEST_BYTES" in refused.json()["error"]["message"]
    assert {d["id"]: d["version"] for d in client.get("/documents").json()["documents"]} == kept


def test_a_streamed_upload_sends_progress_then_the_upload_answer(
    app_settings: Callable[..., Settings],
) -> None:
    """POST /documents/stream: progress after each file read and each indexed batch, counters
    that only grow, then `done` with what POST /documents answers; nothing ingestible is 413
    as JSON before any work, and files that all fail end with an `error` event (422)."""
    lines = [
        json.dumps({"_id": f"d{i}", "title": f"Topic {i}", "text": f"Fact number {i} is true."})
        for i in range(10)
    ]
    corpus = ("\n".join(lines) + "\n").encode()
    app = create_app(app_settings(max_document_bytes=4000, ingest_batch_documents=3))
    with TestClient(app, headers={"X-API-Key": KEY}) as client:
        upload = {"corpus.jsonl": corpus, "keys.md": CORPUS_FILES["keys.md"], "x.exe": b"MZ"}
        response = client.post("/documents/stream", files=files(upload))
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.text)
        kinds = [kind for kind, _ in events]
        assert kinds[-1] == "done" and set(kinds[:-1]) == {"progress"}, kinds
        progress = [data for kind, data in events if kind == "progress"]
        for field in ("files_done", "documents_done", "chunks_indexed"):
            values = [p[field] for p in progress]
            assert values == sorted(values), (field, values)
        assert {p["files_total"] for p in progress} == {3}
        assert progress[-1]["files_done"] == 3 and progress[-1]["documents_done"] == 11
        # batches of 3 documents: progress came between batches, not only at the end
        assert len({p["documents_done"] for p in progress}) >= 4
        assert {p["current"] for p in progress} <= set(upload)
        done = events[-1][1]
        assert (done["added"], done["failed_files"]) == (11, 1)
        assert [f["path"] for f in done["files"]] == list(upload)
        assert client.get("/documents").json()["total"] == 11

        # a client that leaves after the first event: the upload is still ingested
        more = [line.replace('"d', '"m').replace("Fact", "Claim") for line in lines]
        leaving = {"more.jsonl": ("\n".join(more) + "\n").encode()}
        with client.stream("POST", "/documents/stream", files=files(leaving)) as stream:
            assert next(stream.iter_lines()).startswith("event: progress")
        deadline = time.monotonic() + 120
        while client.get("/documents").json()["total"] < 21 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.get("/documents").json()["total"] == 21

        # the same files again: unchanged, and the answer matches POST /documents
        again = sse_events(client.post("/documents/stream", files=files(upload)).text)[-1][1]
        plain = client.post("/documents", files=files(upload)).json()
        assert again["unchanged"] == plain["unchanged"] == 11
        assert set(again) == set(plain)

        too_big = client.post("/documents/stream", files=files({"big.md": b"x" * 5000}))
        assert too_big.status_code == 413, too_big.text
        assert "MAX_DOCUMENT_BYTES" in too_big.json()["error"]["message"]
        failed = client.post("/documents/stream", files=files({"a.txt": b"", "b.bin": b"\x00"}))
        assert failed.status_code == 200
        kind, error = sse_events(failed.text)[-1]
        assert kind == "error" and error["error"]["status"] == 422
        assert "No file could be ingested" in error["error"]["message"]
        assert client.post("/documents/stream").status_code == 422  # no files at all
        denied = client.post("/documents/stream", files=files(upload), headers={"X-API-Key": ""})
        assert denied.status_code == 401
        assert client.get("/documents").json()["total"] == 21


def test_an_outage_during_a_streamed_upload_is_an_error_event_naming_it() -> None:
    failure = upload_failure(psycopg.OperationalError("connection refused"))["error"]
    assert failure["status"] == 503 and failure["dependency"] == "postgres"
    assert "kept" in failure["message"] and "upload the files again" in failure["message"]
    assert upload_failure(RuntimeError("bug"))["error"]["status"] == 500


def test_a_chat_question_about_uploaded_documents_is_answered_with_citations(
    client: TestClient,
) -> None:
    assert client.post("/documents", files=files(CORPUS_FILES)).status_code == 200

    response = client.post(
        "/chat", json={"message": "According to my documents, how long do cats sleep?"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["agent"] == "knowledge" and body["route"]["method"] == "keyword"
    assert body["methods"] == {"knowledge": "extractive"}
    assert "twelve and sixteen hours a day [1]" in body["answer"]
    assert f"Sources:\n[1] Cats ({SOURCE}cats.rst)" in body["answer"]
    data = body["data"]["knowledge"]
    assert [c["title"] for c in data["citations"]] == ["Cats"]
    assert data["citations"][0]["source"] == f"{SOURCE}cats.rst"
    assert data["document_grades"]["passed"] and data["response_grade"]["passed"]
    assert data["low_confidence"] is False
    assert {"evaluate_query", "retrieve", "generate_answer"} <= set(body["stage_ms"])

    # the same session, a question the router matches by the documents' content (the data
    # tier: one keyword is not enough); a per-request switch
    follow = client.post(
        "/chat",
        json={
            "message": "Which document explains restoring the database from a backup?",
            "session_id": body["session_id"],
            "options": {"enable_reflection": False},
        },
    ).json()
    assert follow["agent"] == "knowledge" and follow["route"]["method"] == "data"
    assert follow["data"]["knowledge"]["citations"][0]["title"] == "Backups"
    assert "kept for 30 days [1]" in follow["answer"]
    assert "grade_documents" not in follow["stage_ms"]
    assert "ENABLE_REFLECTION" in follow["data"]["knowledge"]["skipped"][0]


def _stub_model(request: dict[str, Any]) -> str | dict[str, Any]:
    """The stub LLM's judgement, by the tool (schema) the client asks for."""
    tools = request.get("tools") or []
    name = tools[0]["function"]["name"] if tools else None
    if name == "QueryClassification":
        return {"query_type": "semantic", "lambda_mult": 0.7,
                "search_query": "how long do cats sleep", "reason": "prose"}  # fmt: skip
    if name == "DocumentRelevance":
        cats = 'Document "Cats"' in last_user_text(request)
        return {"relevant": cats, "score": 0.9 if cats else 0.1, "reason": "stub"}
    if name == "AnswerGrade":
        return {"grounded": True, "answers_question": True, "score": 0.9, "problems": []}
    if name == "RoutingDecision":  # not expected: these questions route by keywords
        return {"agent": "chat", "confidence": 0.1, "reason": "stub"}
    return "Cats sleep twelve to sixteen hours a day [1]."


def test_with_a_model_over_the_real_openai_client(
    app_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = _stub_model
    settings = app_settings(
        llm_provider="openai",
        openai_api_key="sk-test",
        openai_base_url=stub_openai.base_url,
        llm_cache_ttl_seconds=0,
        llm_rate_limit_per_minute=60_000,
    )
    with TestClient(create_app(settings), headers={"X-API-Key": KEY}) as client:
        assert client.post("/documents", files=files(CORPUS_FILES)).status_code == 200
        body = client.post("/chat", json={"message": "What do my documents say about cats?"})
        assert body.status_code == 200, body.text
        result = body.json()
        stream = client.post(
            "/chat/stream", json={"message": "According to the docs, how long do cats sleep?"}
        )
    assert result["agent"] == "knowledge" and result["route"]["method"] == "keyword"
    assert result["methods"] == {"knowledge": "llm"}
    assert result["answer"].startswith("Cats sleep twelve to sixteen hours a day [1].")
    assert f"Sources:\n[1] Cats ({SOURCE}cats.rst)" in result["answer"]
    data = result["data"]["knowledge"]
    assert data["methods"] == {"evaluate_query": "llm", "retrieve": "relevance",
                               "grade_documents": "llm", "generate_answer": "llm",
                               "grade_response": "llm"}  # fmt: skip
    assert data["queries"] == ["how long do cats sleep"]
    assert [g["title"] for g in data["document_grades"]["grades"] if g["relevant"]] == ["Cats"]
    assert [c["title"] for c in data["citations"]] == ["Cats"]
    tokens = [line for line in stream.text.splitlines() if '"node": "generate_answer"' in line]
    assert tokens, "the answer's tokens were not streamed"
