"""Office/data formats and page citations through the real app (Redis, Postgres 16 with pgvector,
MiniLM, no language model): one upload of every new format, built by the test, next to
encrypted, damaged, hostile and unknown files that get their own errors; the hits of the
search operation and the model-free chat answer cite the page a fact is on; an existing
database gains the page column in place."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.security import owner_of
from config import Settings
from main import create_app
from tests.knowledge.formats import (
    encrypted_office,
    make_csv,
    make_docx,
    make_json,
    make_pdf,
    make_pptx,
    make_xlsx,
    zip_bomb,
    zip_without_parts,
)
from tests.support.servers import free_port
from tools.knowledge.ingest import content_hash
from tools.knowledge.loaders import load_bytes
from tools.knowledge.schema import ensure_schema
from tools.knowledge.store import KnowledgeStore
from tools.operations import OperationContext

KEY = "formats-key"
SECRET = "formats-owner-secret"
SOURCE = f"upload:{owner_of(KEY, SECRET.encode())}/"

GUIDE_PAGES = [
    ["Harbour operations guide.", "The harbour office opens at seven in the morning."],
    ["The lighthouse lamp is replaced every 400 days by the harbour crew."],
    ["Visitors may climb the tower on Sundays only."],
]
TICKETS = [[f"T-{i:04d}", f"svc-{i % 7}", ("high", "low")[i % 2]] for i in range(300)]


def _upload() -> dict[str, bytes]:
    return {
        "guide.pdf": make_pdf(GUIDE_PAGES, title="Harbour guide"),
        "policy.docx": make_docx(
            "Escalation policy",
            ["Page the duty manager after 20 minutes without a fix."],
            [["Team", "Lead"], ["SRE", "Ada Lovelace"]],
        ),
        "deck.pptx": make_pptx(
            [
                ("Roadmap", "The mobile app ships in spring."),
                ("Pricing", "The team plan costs 14 euros per seat each month."),
            ]
        ),  # fmt: skip
        "plan.xlsx": make_xlsx(
            {
                "Budget": [["Item", "Cost"], ["GPU server", 1200], ["Desk", 300]],
                "Staff": [["Name", "Role"], ["Grace Hopper", "release captain"]],
            }
        ),  # fmt: skip
        "tickets.csv": make_csv(["ticket", "service", "severity"], TICKETS),
        "billing.json": make_json(
            {"title": "Billing service", "sla": {"uptime": "99.95% monthly uptime"}}
        ),
        # each of these fails alone, with its own message
        "locked.xlsx": encrypted_office(),
        "broken.docx": b"this is not a zip archive at all",
        "bomb.docx": zip_bomb(32 << 20),
        "other.pptx": zip_without_parts(),
        "bad.json": b'{"unfinished": ',
        "data.bin": b"\x01\x02\x03",
    }


@pytest.fixture
def client(tmp_path: Path, redis_url: str, knowledge_db: str) -> Iterator[TestClient]:
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
        "owner_id_secret": SECRET,
        "max_uncompressed_bytes": 4 << 20,
        "max_request_bytes": 8 << 20,
    }
    app = create_app(Settings(_env_file=None, **values))
    with TestClient(app, headers={"X-API-Key": KEY}) as test_client:
        yield test_client


def _files(named: dict[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, data, "application/octet-stream")) for name, data in named.items()]


def _searcher(client: TestClient) -> Callable[[str], list[Any]]:
    """The search operation (what the agent retrieves with, and MCP exposes) on the app's
    store, run on the app's event loop."""
    services: Any = client.app.state.services  # type: ignore[attr-defined]
    search = services.operations.get("search_documents")
    ctx = OperationContext(owner=owner_of(KEY, SECRET.encode()), engines=services.agents)
    portal: Any = client.portal

    def run(query: str) -> list[Any]:
        return list(portal.call(search, ctx, {"query": query, "top_k": 3}).hits)

    return run


def test_every_format_is_ingested_and_bad_files_fail_alone(
    client: TestClient, knowledge_db: str
) -> None:
    response = client.post("/documents", files=_files(_upload()))
    assert response.status_code == 200, response.text
    body = response.json()
    by_name = {f["path"]: f for f in body["files"]}
    for name in ("guide.pdf", "policy.docx", "deck.pptx", "plan.xlsx", "tickets.csv",
                 "billing.json"):  # fmt: skip
        assert by_name[name]["status"] == "ok", by_name[name]
    expected = {
        "locked.xlsx": "password-protected",
        "broken.docx": "not a .docx file",
        "bomb.docx": "MAX_UNCOMPRESSED_BYTES",
        "other.pptx": "not a readable .pptx",
        "bad.json": "invalid JSON",
        "data.bin": "unsupported file type",
    }
    for name, needle in expected.items():
        assert by_name[name]["status"] == "error" and needle in by_name[name]["error"], name
    assert (body["added"], body["failed_files"], body["ok"]) == (6, 6, False)
    titles = {d["title"] for d in client.get("/documents").json()["documents"]}
    assert titles == {"Harbour guide", "Escalation policy", "Roadmap", "plan", "tickets",
                      "Billing service"}  # fmt: skip

    search = _searcher(client)
    expectations = [
        ("How often is the lighthouse lamp replaced?", "guide.pdf", "2", "400 days"),
        ("Who do I page after 20 minutes without a fix?", "policy.docx", None, "duty manager"),
        ("What does the team plan cost per seat?", "deck.pptx", "2", "14 euros"),
        ("Who is the release captain?", "plan.xlsx", "Staff", "Grace Hopper"),
        ("What is the monthly uptime of the billing service?", "billing.json", None, "99.95%"),
    ]
    for query, name, page, needle in expectations:
        top = search(query)[0]
        assert (top.source, top.page) == (SOURCE + name, page), (query, top)
        assert needle in top.text, (query, top.text)
    csv_hit = search("ticket T-0123 severity")[0]
    assert csv_hit.source == SOURCE + "tickets.csv" and csv_hit.page is None

    # the large CSV: chunked by whole rows, each row carrying the header's column names
    with psycopg.connect(knowledge_db) as conn:
        rows = conn.execute(
            "SELECT c.text, c.page FROM knowledge.chunks c JOIN knowledge.documents d"
            " USING (kb, collection, document_id) WHERE d.source = %s ORDER BY c.chunk_index",
            (SOURCE + "tickets.csv",),
        ).fetchall()
    assert len(rows) > 10 and all(page is None for _, page in rows)
    lines = [line for text, _ in rows for line in text.split("\n\n")]
    assert lines == [f"ticket: {t}; service: {s}; severity: {v}" for t, s, v in TICKETS]


def test_the_model_free_answer_cites_the_pdf_page_of_the_fact(client: TestClient) -> None:
    upload = {"guide.pdf": _upload()["guide.pdf"]}
    assert client.post("/documents", files=_files(upload)).json()["added"] == 1
    (top, *_) = _searcher(client)("How often is the lighthouse lamp replaced?")
    assert top.page == "2" and "400 days" in top.text

    response = client.post(
        "/chat",
        json={"message": "According to my documents, how often is the lighthouse lamp replaced?"},
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["agent"] == "knowledge" and answer["methods"] == {"knowledge": "extractive"}
    citations = answer["data"]["knowledge"]["citations"]
    assert [(c["number"], c["page"], c["source"]) for c in citations] == [
        (1, "2", SOURCE + "guide.pdf")
    ]
    assert "400 days" in citations[0]["snippet"]
    assert "replaced every 400 days by the harbour crew [1]." in answer["answer"]
    assert f"Sources:\n[1] Harbour guide ({SOURCE}guide.pdf, p. 2)" in answer["answer"]


async def test_a_database_made_before_pages_gains_the_column_and_its_pdfs_their_pages(
    store: KnowledgeStore, knowledge_db: str, tmp_path: Path
) -> None:
    guide, notes = tmp_path / "guide.pdf", tmp_path / "notes.md"
    guide.write_bytes(make_pdf(GUIDE_PAGES))
    notes.write_text("# Notes\n\nThe ferry leaves at noon.\n", encoding="utf-8")
    assert (await store.ingest_paths([guide, notes])).added == 2

    def old_version(title: str, text: str) -> str:  # the version before pages existed
        raw = f"{content_hash(title, text)}:{store.indexer.signature}"
        return hashlib.sha256(raw.encode()).hexdigest()[:32]

    (pdf,) = load_bytes("guide.pdf", guide.read_bytes()).documents
    (md,) = load_bytes("notes.md", notes.read_bytes()).documents
    with psycopg.connect(knowledge_db, autocommit=True) as conn:
        # as the knowledge base was: no page column, the PDF's version without its pages
        conn.execute("ALTER TABLE knowledge.chunks DROP COLUMN page")
        conn.execute(
            "UPDATE knowledge.documents SET version = %s WHERE source = %s",
            (old_version(pdf.title, pdf.text), str(guide.resolve())),
        )
        ensure_schema(conn, "kb", store.engine.model, store.engine.dimension)  # a restart
        found = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_schema = 'knowledge'"
            " AND table_name = 'chunks' AND column_name = 'page'"
        ).fetchone()
        rows = conn.execute("SELECT source, version FROM knowledge.documents").fetchall()
        versions: dict[str, str] = {str(r[0]): str(r[1]) for r in rows}
    assert found == ("text",)
    assert versions[str(notes.resolve())] == old_version(md.title, md.text)  # plain: unchanged
    query = "lighthouse lamp replaced"
    assert (await store.search(query, lambda_mult=0.5, top_k=1)).hits[0].page is None

    again = await store.ingest_paths([guide, notes])
    assert [d.status for f in again.files for d in f.documents] == ["replaced", "unchanged"]
    assert (await store.search(query, lambda_mult=0.5, top_k=1)).hits[0].page == "2"
