"""``python main.py ingest PATH...``: progress bar, per-file summary, exit status, bad input
(nothing already indexed is lost), and the clear error when the Postgres has no pgvector."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from config import load_settings
from main import main
from tests.knowledge.conftest import CORPUS
from tools.knowledge.store import KnowledgeStore


@pytest.fixture
def data_dir(tmp_path: Path, knowledge_db: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings for `main()` from the environment: DATA_DIR in tmp_path, a fresh database."""
    monkeypatch.chdir(tmp_path)  # no developer .env
    for name, value in {
        "DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": knowledge_db,
        "LLM_PROVIDER": "none",
        "CHUNK_SIZE": "400",
        "CHUNK_OVERLAP": "80",
        "LOG_LEVEL": "WARNING",
    }.items():
        monkeypatch.setenv(name, value)
    return tmp_path / "data"


def registry() -> dict[str, str]:
    """Title -> version of every registered document (opens and closes the store)."""

    async def read() -> dict[str, str]:
        store = await KnowledgeStore.open(load_settings())
        try:
            stats = await store.stats()
            assert stats["chunks"] == stats["lexical_chunks"], stats  # both legs agree
            return {d.title: d.version for d in await store.list_documents()}
        finally:
            await store.close()

    return asyncio.run(read())


def test_ingest_folders_with_bad_files(
    data_dir: Path, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(corpus_dir)]) == 0
    out, err = capsys.readouterr()
    assert "ingest: 100%" in err and "4/4" in err  # the progress bar
    for name in CORPUS:
        assert f"ok        {corpus_dir / name}  (1 added;" in out
    assert "4 file(s): 4 document(s) added, 0 replaced, 0 unchanged, 0 failed" in out
    before = registry()
    assert len(before) == 4

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "binary.md").write_bytes(b"\x00\x01\x02\x03PK" * 100)
    (bad / "empty.txt").write_bytes(b"")
    (bad / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    with (bad / "huge.txt").open("wb") as handle:  # 200 MB, sparse: refused by its size
        handle.truncate(200 * 1024 * 1024)
    (bad / "garden.md").write_text("# Gardening\n\nTomatoes need six hours of sun a day.\n")
    missing = tmp_path / "no-such-dir" / "notes.md"

    code = main(["ingest", str(corpus_dir), str(bad), str(missing)])
    out, err = capsys.readouterr()
    assert code == 1
    expected = {
        "binary.md": "looks binary",
        "empty.txt": "empty",
        "latin1.txt": "not valid UTF-8",
        "huge.txt": "above MAX_DOCUMENT_BYTES",
        "notes.md": "no such file or directory",
    }
    for name, needle in expected.items():
        (line,) = [line for line in out.splitlines() if line.startswith("  error") and name in line]
        detail = out.split(line, 1)[1].splitlines()[1]
        assert needle in detail, (name, detail)
    assert f"ok        {bad / 'garden.md'}  (1 added;" in out
    assert "1 document(s) added, 0 replaced, 4 unchanged" in out
    assert "5 file(s) had errors (see above); the others were ingested." in out
    after = registry()
    assert {k: after[k] for k in before} == before and "Gardening" in after


def test_json_report(data_dir: Path, corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--json", str(corpus_dir / "cats.rst")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["added"] == 1 and report["files"][0]["status"] == "ok"


def test_a_postgres_without_pgvector_is_a_clear_error(
    data_dir: Path,
    corpus_dir: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_url)  # the machine's Postgres 15: no pgvector
    assert main(["ingest", str(corpus_dir)]) == 2
    err = capsys.readouterr().err
    assert "Cannot open the knowledge base" in err and "no pgvector extension" in err
    assert "pgvector/pgvector:pg16" in err and "unset DATABASE_URL" in err
