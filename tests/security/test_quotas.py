"""Quotas per owner, played by a hostile tenant against the real app (real Redis, Postgres 16
with pgvector, the bundled MiniLM): each quota refuses with 429 (sizes with 413) naming its
setting, and another API key is unaffected.

- threads per key (``POST /threads``, ``/chat``, ``/analyses``), queued + running runs per key;
- metadata / run input / context sizes per request;
- ``POST /runs/batch`` counts every run toward the rate limit;
- uploads: a 200,000-document ``.jsonl`` is refused before anything is embedded or stored, the
  key's documents are capped, a PDF is capped in pages and extracted text;
- an analysis in an LLM mode is capped in LLM review calls;
- ingestion runs on its own bounded pool of threads.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from langchain_core.embeddings import Embeddings
from pypdf import PdfWriter

from app.security import owner_of
from config import Settings
from main import create_app
from tests.support.servers import free_port
from tests.support.stub_openai import StubOpenAI
from tools.knowledge.store import KnowledgeStore
from tools.providers.embeddings import SentenceTransformerEmbeddings

KEY_A = "quota-key-a-0123456789"
KEY_B = "quota-key-b-0123456789"
A = {"X-API-Key": KEY_A}
B = {"X-API-Key": KEY_B}
#: The server's owner-id secret, set so the test can compute owner ids as the server does.
OWNER_SECRET = "quota-owner-secret-0123456789"
RUN = {"assistant_id": "switchyard", "input": {"messages": [{"type": "human", "content": "hi"}]}}


@pytest.fixture
def settings_for(tmp_path: Path, redis_url: str, pgvector_db: str) -> Callable[..., Settings]:
    """Settings of an app with two API keys on the test's Redis database and a pgvector
    database; background runs stay queued (no worker), so they count as active."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "redis_url": redis_url,
            "database_url": pgvector_db,
            "llm_provider": "none",
            "ollama_base_url": f"http://127.0.0.1:{free_port()}",
            "api_keys": f"{KEY_A},{KEY_B}",
            "owner_id_secret": OWNER_SECRET,
            "rate_limit_per_minute": 100_000,
            "run_worker_enabled": False,
            "chunk_size": 400,
            "chunk_overlap": 80,
            **overrides,
        }
        return Settings(_env_file=None, **values)

    return build


@pytest.fixture
def app_with(settings_for: Callable[..., Settings]) -> Iterator[Callable[..., TestClient]]:
    """Start the real app with these setting overrides (stopped after the test)."""
    started: list[TestClient] = []

    def start(**overrides: Any) -> TestClient:
        client = TestClient(create_app(settings_for(**overrides)))
        client.__enter__()
        started.append(client)
        return client

    yield start
    for client in started:
        client.__exit__(None, None, None)


def refused(response: Any, status: int, setting: str) -> None:
    assert response.status_code == status, response.text
    assert setting in response.json()["error"]["message"], response.text


# --- threads and runs ------------------------------------------------------------------------
def test_threads_per_key_are_capped_for_threads_chat_and_analyses(
    app_with: Callable[..., TestClient],
) -> None:
    client = app_with(max_threads_per_owner=3)
    ids = [client.post("/threads", json={}, headers=A).json()["thread_id"] for _ in range(3)]
    assert len(set(ids)) == 3

    refused(client.post("/threads", json={}, headers=A), 429, "MAX_THREADS_PER_OWNER")
    refused(
        client.post("/chat", json={"message": "hello"}, headers=A), 429, "MAX_THREADS_PER_OWNER"
    )
    analysis = {"files": [{"path": "tests/test_a.py", "content": "def test_a():\n    assert 1\n"}]}
    refused(client.post("/analyses", json=analysis, headers=A), 429, "MAX_THREADS_PER_OWNER")
    refused(client.post("/runs", json=RUN, headers=A), 429, "MAX_THREADS_PER_OWNER")
    refused(client.post(f"/threads/{ids[0]}/copy", headers=A), 429, "MAX_THREADS_PER_OWNER")
    count = client.post("/threads/count", json={}, headers=A).json()
    assert count == 3
    # an existing thread is not a new one: asking for it again still answers
    again = client.post(
        "/threads", json={"thread_id": ids[0], "if_exists": "do_nothing"}, headers=A
    )
    assert again.status_code == 200, again.text

    # another key is unaffected
    assert client.post("/threads", json={}, headers=B).status_code == 200

    # deleting a thread frees room
    assert client.delete(f"/threads/{ids[0]}", headers=A).status_code == 204
    assert client.post("/threads", json={}, headers=A).status_code == 200


def test_queued_and_running_runs_per_key_are_capped(app_with: Callable[..., TestClient]) -> None:
    client = app_with(max_active_runs_per_owner=2)
    thread = client.post("/threads", json={}, headers=A).json()["thread_id"]
    for _ in range(2):
        created = client.post(f"/threads/{thread}/runs", json=RUN, headers=A)
        assert created.status_code == 200, created.text
        assert created.json()["status"] == "pending"

    refused(
        client.post(f"/threads/{thread}/runs", json=RUN, headers=A),
        429,
        "MAX_ACTIVE_RUNS_PER_OWNER",
    )
    refused(client.post("/runs", json=RUN, headers=A), 429, "MAX_ACTIVE_RUNS_PER_OWNER")
    analysis = {"files": [{"path": "tests/test_a.py", "content": "def test_a():\n    assert 1\n"}]}
    refused(client.post("/analyses", json=analysis, headers=A), 429, "MAX_ACTIVE_RUNS_PER_OWNER")
    runs = client.get(f"/threads/{thread}/runs", headers=A).json()
    assert len(runs) == 2  # the refused runs were never queued

    # another key is unaffected
    assert client.post("/runs", json=RUN, headers=B).status_code == 200

    # a cancelled run no longer counts
    cancel = client.post(
        "/runs/cancel", json={"thread_id": thread, "run_ids": [runs[0]["run_id"]]}, headers=A
    )
    assert cancel.status_code == 204, cancel.text
    assert client.post(f"/threads/{thread}/runs", json=RUN, headers=A).status_code == 200


def test_metadata_input_and_context_are_bounded_per_request(
    app_with: Callable[..., TestClient],
) -> None:
    client = app_with(max_metadata_bytes=1024, max_run_input_bytes=4096, max_run_config_bytes=1024)
    big = {"blob": "x" * 9 * 1024 * 1024}  # the 9 MB value that used to be kept
    refused(client.post("/threads", json={"metadata": big}, headers=A), 413, "MAX_METADATA_BYTES")
    assert client.post("/threads/count", json={}, headers=A).json() == 0

    thread = client.post("/threads", json={"metadata": {"a": "y" * 600}}, headers=A).json()
    patch = client.patch(
        f"/threads/{thread['thread_id']}", json={"metadata": {"b": "z" * 600}}, headers=A
    )
    refused(patch, 413, "MAX_METADATA_BYTES")  # the merged metadata is what would be kept

    long_input = {**RUN, "input": {"messages": [{"type": "human", "content": "hi"}],
                                   "agent_input": {"blob": "x" * 5000}}}  # fmt: skip
    refused(client.post("/runs", json=long_input, headers=A), 413, "MAX_RUN_INPUT_BYTES")
    refused(
        client.post("/runs", json={**RUN, "metadata": {"m": "x" * 2000}}, headers=A),
        413,
        "MAX_METADATA_BYTES",
    )
    refused(
        client.post("/runs", json={**RUN, "context": {"c": "x" * 2000}}, headers=A),
        413,
        "MAX_RUN_CONFIG_BYTES",
    )
    refused(
        client.post(
            "/runs", json={**RUN, "config": {"configurable": {"c": "x" * 2000}}}, headers=A
        ),
        413,
        "MAX_RUN_CONFIG_BYTES",
    )
    # nothing was queued, and a request within the bounds goes through
    assert client.post("/threads/count", json={}, headers=A).json() == 1
    assert client.post("/runs", json=RUN, headers=A).status_code == 200


def test_a_batch_of_runs_counts_each_run_toward_the_rate_limit(
    app_with: Callable[..., TestClient],
) -> None:
    client = app_with(rate_limit_per_minute=5)
    refused(client.post("/runs/batch", json=[RUN] * 6, headers=A), 429, "RATE_LIMIT_PER_MINUTE")
    first = client.post("/runs/batch", json=[RUN] * 3, headers=A)  # the refused one counted 1
    assert first.status_code == 200, first.text
    # 1 + 3 used: a batch of 2 more does not fit in the window of 5
    refused(client.post("/runs/batch", json=[RUN] * 2, headers=A), 429, "RATE_LIMIT_PER_MINUTE")
    assert client.post("/threads/count", json={}, headers=B).status_code == 200  # B: 1 of 5
    assert client.post("/runs/batch", json=[RUN] * 3, headers=B).status_code == 200


# --- uploads ----------------------------------------------------------------------------------
def _stored(database_url: str, owner_key: str) -> tuple[int, int]:
    """(documents, chunks) stored from ``owner_key``'s uploads, read from Postgres itself."""
    prefix = f"upload:{owner_of(owner_key, OWNER_SECRET.encode())}/%"
    with psycopg.connect(database_url) as conn:
        docs = conn.execute(
            "SELECT count(*) FROM knowledge.documents WHERE source LIKE %s", (prefix,)
        ).fetchone()
        chunks = conn.execute(
            "SELECT count(*) FROM knowledge.chunks c JOIN knowledge.documents d"
            " USING (kb, collection, document_id) WHERE d.source LIKE %s",
            (prefix,),
        ).fetchone()
    assert docs is not None and chunks is not None
    return int(docs[0]), int(chunks[0])


def _files(named: dict[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, data, "application/octet-stream")) for name, data in named.items()]


def test_a_200000_document_upload_is_refused_before_anything_is_embedded(
    app_with: Callable[..., TestClient], pgvector_db: str
) -> None:
    client = app_with()  # the defaults: MAX_DOCUMENTS_PER_UPLOAD 10,000
    lines = (json.dumps({"_id": f"d{i}", "text": "word"}) for i in range(200_000))
    corpus = ("\n".join(lines) + "\n").encode()
    assert len(corpus) > 6_000_000

    started = time.monotonic()
    response = client.post("/documents", files=_files({"corpus.jsonl": corpus}), headers=A)
    elapsed = time.monotonic() - started
    refused(response, 413, "MAX_DOCUMENTS_PER_UPLOAD")
    assert _stored(pgvector_db, KEY_A) == (0, 0)  # nothing embedded, nothing stored
    assert elapsed < 30, elapsed  # a sanity bound only: embedding 200,000 would take hours

    # the same through the streamed upload: its error event, and still nothing stored
    with client.stream(
        "POST", "/documents/stream", files=_files({"corpus.jsonl": corpus}), headers=A
    ) as stream:
        text = "".join(stream.iter_text())
    assert "event: error" in text and "MAX_DOCUMENTS_PER_UPLOAD" in text, text[-500:]
    assert _stored(pgvector_db, KEY_A) == (0, 0)

    # another key uploads as before
    small = "\n".join(json.dumps({"_id": f"d{i}", "text": f"word {i}"}) for i in range(3))
    ok = client.post("/documents", files=_files({"small.jsonl": small.encode()}), headers=B)
    assert ok.status_code == 200, ok.text
    assert _stored(pgvector_db, KEY_B)[0] == 3


def test_documents_and_chunks_per_key_and_chunks_per_upload_are_capped(
    app_with: Callable[..., TestClient], pgvector_db: str
) -> None:
    client = app_with(max_documents_per_owner=2, max_chunks_per_upload=5)
    first = client.post(
        "/documents", files=_files({"a.md": b"# A\n\nalpha", "b.md": b"# B\n\nbeta"}), headers=A
    )
    assert first.status_code == 200, first.text
    refused(
        client.post("/documents", files=_files({"c.md": b"# C\n\ngamma"}), headers=A),
        429,
        "MAX_DOCUMENTS_PER_OWNER",
    )
    # replacing one of the key's own documents adds none: allowed at the quota
    replaced = client.post("/documents", files=_files({"a.md": b"# A\n\nalpha two"}), headers=A)
    assert replaced.status_code == 200, replaced.text
    assert _stored(pgvector_db, KEY_A)[0] == 2

    # another key is unaffected
    assert (
        client.post("/documents", files=_files({"c.md": b"# C\n\ngamma"}), headers=B).status_code
        == 200
    )

    # one upload of many chunks is refused whole, before embedding
    long = ("A sentence of some length that fills the chunks. " * 200).encode()
    refused(
        client.post("/documents", files=_files({"long.txt": long}), headers=B),
        413,
        "MAX_CHUNKS_PER_UPLOAD",
    )
    assert _stored(pgvector_db, KEY_B)[0] == 1


def test_chunks_per_key_are_capped(app_with: Callable[..., TestClient], pgvector_db: str) -> None:
    client = app_with(max_chunks_per_owner=3)
    one = client.post("/documents", files=_files({"a.md": b"# A\n\nalpha"}), headers=A)
    assert one.status_code == 200, one.text
    long = ("A sentence of some length that fills the chunks. " * 60).encode()
    refused(
        client.post("/documents", files=_files({"long.txt": long}), headers=A),
        429,
        "MAX_CHUNKS_PER_OWNER",
    )
    assert _stored(pgvector_db, KEY_A) == (1, 1)
    assert (
        client.post("/documents", files=_files({"b.md": b"# B\n\nbeta"}), headers=B).status_code
        == 200
    )


def _pdf(pages: int, text_per_page: str = "") -> bytes:
    """A PDF of ``pages`` pages; with text, each page shows it in Helvetica (a text layer)."""
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    for _ in range(pages):
        page = writer.add_blank_page(width=612, height=792)
        if text_per_page:
            font = DictionaryObject({
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            })  # fmt: skip
            page[NameObject("/Resources")] = DictionaryObject({
                NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})
            })  # fmt: skip
            stream = DecodedStreamObject()
            stream.set_data(f"BT /F1 8 Tf 20 700 Td ({text_per_page}) Tj ET".encode())
            page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pdfs_are_capped_in_pages_and_in_extracted_text(
    app_with: Callable[..., TestClient], pgvector_db: str
) -> None:
    client = app_with(max_pdf_pages=2, max_extracted_chars=1000)
    fits = client.post("/documents", files=_files({"ok.pdf": _pdf(2, "short text")}), headers=A)
    assert fits.status_code == 200, fits.text

    pages = client.post("/documents", files=_files({"long.pdf": _pdf(3, "short text")}), headers=A)
    refused(pages, 422, "MAX_PDF_PAGES")
    words = "many words of text " * 40  # 760 characters per page, 1,520 in two pages
    chars = client.post("/documents", files=_files({"dense.pdf": _pdf(2, words)}), headers=A)
    refused(chars, 422, "MAX_EXTRACTED_CHARS")
    assert _stored(pgvector_db, KEY_A)[0] == 1


UPLOADED = "uploaded text"


class _Gate(Embeddings):
    """The real MiniLM behind a gate: every embedding call of the uploads' texts records its
    thread and how many such calls run at once, then waits until the test opens the gate
    (anything else, a search's query, passes straight through)."""

    def __init__(self, inner: SentenceTransformerEmbeddings) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.open = threading.Event()
        self.entered = threading.Semaphore(0)
        self.threads: list[str] = []
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not any(UPLOADED in text for text in texts):
            return self.inner.embed_documents(texts)
        with self._lock:
            self.threads.append(threading.current_thread().name)
            self.running += 1
            self.most = max(self.most, self.running)
        self.entered.release()
        self.open.wait(timeout=60)
        try:
            return self.inner.embed_documents(texts)
        finally:
            with self._lock:
                self.running -= 1

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


async def test_ingestion_runs_on_its_own_bounded_pool(
    settings_for: Callable[..., Settings],
) -> None:
    gate = _Gate(SentenceTransformerEmbeddings("all-MiniLM-L6-v2", batch_size=16))
    store = await KnowledgeStore.open(settings_for(ingest_workers=1), embeddings=gate, name="kb")
    try:
        uploads = [
            asyncio.create_task(
                store.ingest_uploads([(f"{i}.md", f"# T{i}\n\n{UPLOADED} {i}".encode())])
            )
            for i in range(3)
        ]
        assert await asyncio.to_thread(gate.entered.acquire, True, 60)  # one upload embeds
        # while it holds the ingestion pool, the default pool (chat turns, searches) is free
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 10) == "free"
        hits = await store.search("anything")
        assert hits is not None
        gate.open.set()
        reports = await asyncio.gather(*uploads)
    finally:
        gate.open.set()
        await store.close()
    assert [r.added for r in reports] == [1, 1, 1]
    assert gate.most == 1  # INGEST_WORKERS=1: the other uploads waited their turn
    assert gate.threads and all(name.startswith("ingest") for name in gate.threads)


# --- analyses ---------------------------------------------------------------------------------
def test_an_llm_analysis_is_capped_in_llm_batches(
    app_with: Callable[..., TestClient], stub_openai: StubOpenAI
) -> None:
    client = app_with(
        llm_provider="openai",
        openai_api_key="sk-test",
        openai_base_url=stub_openai.base_url,
        llm_cache_ttl_seconds=0,
        analysis_llm_batch_size=1,
        max_llm_batches_per_analysis=2,
    )
    tests = "".join(f"def test_{i}():\n    assert {i} == {i}\n\n" for i in range(3))
    body = {"files": [{"path": "tests/test_x.py", "content": tests}], "mode": "llm-only"}
    calls = len(stub_openai.requests)
    response = client.post("/api/v1/analyze", json=body, headers=A)
    refused(response, 413, "MAX_LLM_BATCHES_PER_ANALYSIS")
    assert len(stub_openai.requests) == calls  # refused at planning: no review call was made
