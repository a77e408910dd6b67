"""The retrieval bench reads a BEIR set as the loader does: a JSON Lines record ends at "\\n"
only, so a string holding any other character that ``str.splitlines()`` breaks at (a raw
"\\r" too) stays in its record, in the corpus (the ingest progress total, the
``--throughput-docs`` sample) and in the queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.retrieval import corpus_records, write_sample
from tools.knowledge.loaders import load_bytes
from tools.knowledge.metrics import read_queries

#: Every character str.splitlines() breaks at but "\n" itself (JSON Lines' only separator).
BREAKS = ["\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_the_list_is_every_break_of_str_splitlines_but_newline() -> None:
    found = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert found - {"\n"} == set(BREAKS)


def _record(number: int, char: str) -> str:
    """A record whose strings hold ``char`` raw (JSON escapes none of them here)."""
    return f'{{"_id": "d{number}", "title": "T{char}{number}", "text": "before{char}after"}}'


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_corpus_records_and_the_throughput_sample_keep_every_record_whole(
    tmp_path: Path, ending: str
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [_record(i, char) for i, char in enumerate(BREAKS)]
    corpus.write_bytes((ending.join(rows) + ending + ending).encode("utf-8"))  # a blank last line
    records = corpus_records(corpus)
    assert records == rows  # the ingest progress total is len(records)
    for record, char in zip(records, BREAKS, strict=True):
        assert char in json.loads(record, strict=False)["text"]

    sample = write_sample(corpus, 5, tmp_path / "sample.jsonl")
    loaded = load_bytes(sample.name, sample.read_bytes(), str(sample))
    assert loaded.warnings == []
    assert [d.external_id for d in loaded.documents] == [f"d{i}" for i in range(5)]
    assert all("before" in d.text and "after" in d.text for d in loaded.documents)


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_queries_keep_every_record_whole(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "queries.jsonl"
    rows = [f'{{"_id": "q{i}", "text": "what{char}now?"}}' for i, char in enumerate(BREAKS)]
    path.write_bytes((ending.join(rows) + ending).encode("utf-8"))
    assert read_queries(path) == {f"q{i}": f"what{char}now?" for i, char in enumerate(BREAKS)}
