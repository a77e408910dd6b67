"""Every process on one DATA_DIR shares one knowledge base, on embedded defaults (no URL set).

Real processes: two `main.py serve` APIs, a `main.py ingest` CLI and a searching process (what
Studio or a script runs), all on the embedded Redis and the embedded Postgres 16 of the same
DATA_DIR. A document ingested by any of them is found by every other one's next search in both
legs; a deletion is seen everywhere; a CLI ingest killed (SIGKILL) mid-way leaves the knowledge
base consistent, and running it again completes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.knowledge.conftest import CORPUS
from tests.support.processes import REPO, ApiProcess
from tools.embedded import EmbeddedPostgres
from tools.knowledge.connect import embedded_postgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

#: Run by the searching process: one lexical-only and one dense-only search, as JSON titles.
SEARCH = """
import asyncio, json, sys
from tools.knowledge.scope import Scope
from tools.knowledge.store import KnowledgeStore
from config import load_settings

async def main() -> None:
    store = await KnowledgeStore.open(load_settings())
    out = {}
    for name, lam in (("lexical", 0.0), ("dense", 1.0)):
        # as the APIs' one anonymous owner: its private uploads and the shared collection
        result = await store.search(
            sys.argv[1], lambda_mult=lam, top_k=3, fetch_k=3, scope=Scope("anonymous")
        )
        out[name] = [h.title for h in result.hits]
    await store.close()
    print(json.dumps(out))

asyncio.run(main())
"""


def embedded_env(data_dir: Path) -> dict[str, str]:
    """Embedded defaults: no server URL, one DATA_DIR, no model."""
    return {
        "DATA_DIR": str(data_dir),
        "REDIS_URL": "",
        "DATABASE_URL": "",
        "LLM_PROVIDER": "none",
        "CHUNK_SIZE": "400",
        "CHUNK_OVERLAP": "80",
        "LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def run_main(
    env: dict[str, str], *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def search(env: dict[str, str], query: str) -> dict[str, list[str]]:
    """Search from a process of its own (both legs separately)."""
    done = run_main(env, "-c", SEARCH, query)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def stop_postgres(data_dir: Path) -> None:
    """Stop the embedded Postgres if a failed test left it running (a passing one does not:
    the last process using it stops it, see tools/embedded.py)."""
    pid_file = data_dir / "postgres" / "postmaster.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().splitlines()[0])
    try:
        os.kill(pid, signal.SIGINT)  # fast shutdown
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


@pytest.fixture
def data_dir(embedded_data_dir: Path) -> Iterator[Path]:
    yield embedded_data_dir
    stop_postgres(embedded_data_dir)


@pytest.fixture
def apis(data_dir: Path, tmp_path: Path) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    env = embedded_env(data_dir)
    first = ApiProcess(env, log_path=tmp_path / "api-a.log").start(timeout=180)
    try:
        second = ApiProcess(env, log_path=tmp_path / "api-b.log").start(timeout=180)
    except BaseException:
        first.stop()
        raise
    yield first, second
    second.stop()
    first.stop()


def titles(api: ApiProcess) -> set[str]:
    body = httpx.get(f"{api.url}/documents", timeout=30).json()
    return {d["title"] for d in body["documents"]}


def ask(api: ApiProcess, question: str) -> list[str]:
    response = httpx.post(f"{api.url}/chat", json={"message": question}, timeout=120)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["agent"] == "knowledge", body
    return [c["title"] for c in (body.get("data", {}).get("knowledge", {}).get("citations", []))]


def test_two_apis_a_cli_ingest_and_a_searcher_share_one_knowledge_base(
    apis: tuple[ApiProcess, ApiProcess], data_dir: Path, corpus_dir: Path
) -> None:
    first, second = apis
    env = embedded_env(data_dir)
    # the CLI ingests while both APIs run (the old local Qdrant refused this)
    cli = run_main(env, "main.py", "ingest", "--quiet", str(corpus_dir))
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert f"{len(CORPUS)} document(s) added" in cli.stdout
    assert titles(first) == titles(second) == {"Backups", "Cats", "Rotating API keys", "errors"}

    # ingest through one API, find it through the other (chat) and a third process (both legs)
    garden = b"# Gardening\n\nTomatoes need six hours of direct sun a day and deep watering.\n"
    upload = httpx.post(
        f"{first.url}/documents",
        files=[("files", ("garden.md", garden, "text/markdown"))],
        timeout=60,
    )
    assert upload.status_code == 200 and upload.json()["added"] == 1, upload.text
    assert "Gardening" in titles(second)
    assert ask(second, "What do my documents say about watering tomatoes?")[0] == "Gardening"
    found = search(env, "tomatoes sun watering")
    assert found["lexical"][0] == "Gardening" and found["dense"][0] == "Gardening", found
    cli_doc = search(env, "keyctl rotate keys")
    assert cli_doc["lexical"][0] == cli_doc["dense"][0] == "Rotating API keys", cli_doc

    # delete through the second API: gone for the first one and for every search
    (doc_id,) = [
        d["id"]
        for d in httpx.get(f"{second.url}/documents", timeout=60).json()["documents"]
        if d["title"] == "Gardening"
    ]
    assert httpx.delete(f"{second.url}/documents/{doc_id}", timeout=60).status_code == 204
    assert "Gardening" not in titles(first)
    assert httpx.get(f"{first.url}/documents/{doc_id}", timeout=60).status_code == 404
    gone = search(env, "tomatoes sun watering")
    assert "Gardening" not in gone["lexical"] + gone["dense"], gone
    assert "Gardening" not in ask(first, "What do my documents say about watering tomatoes?")


def consistency(url: str) -> dict[str, int]:
    """The knowledge base's invariants, checked in SQL; returns the counts."""
    with psycopg.connect(url) as conn:
        docs, chunks = conn.execute(
            "SELECT count(*), coalesce(sum(chunk_count), 0) FROM knowledge.documents"
        ).fetchone()  # type: ignore[misc]
        (stored,) = conn.execute("SELECT count(*) FROM knowledge.chunks").fetchone()  # type: ignore[misc]
        (mismatched,) = conn.execute(
            "SELECT count(*) FROM knowledge.documents d WHERE chunk_count <> (SELECT count(*)"
            " FROM knowledge.chunks c WHERE c.kb = d.kb AND c.collection = d.collection"
            " AND c.document_id = d.document_id)"
        ).fetchone()  # type: ignore[misc]
        (orphans,) = conn.execute(
            "SELECT count(*) FROM knowledge.chunks c WHERE NOT EXISTS (SELECT 1 FROM"
            " knowledge.documents d WHERE d.kb = c.kb AND d.collection = c.collection"
            " AND d.document_id = c.document_id)"
        ).fetchone()  # type: ignore[misc]
        (loose_postings,) = conn.execute(
            "SELECT count(*) FROM knowledge.postings p WHERE NOT EXISTS"
            " (SELECT 1 FROM knowledge.chunks c WHERE c.id = p.chunk)"
        ).fetchone()  # type: ignore[misc]
        corpus = conn.execute(
            "SELECT coalesce(sum(chunks), 0), coalesce(sum(total_length), 0) FROM knowledge.corpus"
        ).fetchone()
        actual = conn.execute(
            "SELECT count(*), coalesce(sum(length), 0) FROM knowledge.chunks"
        ).fetchone()
    assert (mismatched, orphans, loose_postings) == (0, 0, 0)
    assert stored == chunks and tuple(corpus or ()) == tuple(actual or ())
    return {"documents": int(docs), "chunks": int(stored)}


@pytest.fixture
def attached() -> Iterator[list[EmbeddedPostgres]]:
    """This process's uses of an embedded Postgres, released after the test."""
    uses: list[EmbeddedPostgres] = []
    yield uses
    for use in uses:
        use.release()


def test_a_cli_ingest_killed_mid_way_leaves_a_consistent_knowledge_base(
    data_dir: Path, tmp_path: Path, attached: list[EmbeddedPostgres]
) -> None:
    corpus = tmp_path / "many.jsonl"
    rows = [
        {"_id": str(i), "title": f"Note {i}", "text": f"Note {i} is about topic {i % 17}. " * 3}
        for i in range(400)
    ]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    env = {**embedded_env(data_dir), "INGEST_BATCH_DOCUMENTS": "16"}
    process = subprocess.Popen(
        [sys.executable, "main.py", "ingest", "--quiet", str(corpus)],
        cwd=REPO,
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = ""
    try:
        deadline = time.monotonic() + 240
        committed = 0
        while committed < 32:  # wait for some batches to commit, then kill it mid-ingest
            assert time.monotonic() < deadline, "the ingest committed nothing in time"
            assert process.poll() is None, "the ingest ended before it could be killed"
            if (data_dir / "postgres" / "postmaster.pid").exists():
                if not url:  # this process uses the server too: it outlives the killed CLI
                    attached.append(embedded_postgres(data_dir))
                    url = attached[0].url
                committed = _committed(url)
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    counts = consistency(url)
    assert 32 <= counts["documents"] < len(rows)

    again = run_main(env, "main.py", "ingest", "--quiet", str(corpus), timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{len(rows) - counts['documents']} document(s) added" in again.stdout
    assert f"{counts['documents']} unchanged" in again.stdout
    assert consistency(url)["documents"] == len(rows)


def _committed(url: str) -> int:
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT count(*) FROM knowledge.documents").fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:  # the schema is not there yet
        return 0
