"""Loaders per format, and the per-file errors that bad input must produce."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.knowledge.loaders import (
    LoaderError,
    expand_paths,
    load_bytes,
    read_file,
)


def make_pdf(lines: list[str], title: str | None = None) -> bytes:
    """A minimal one-page PDF with a real text layer (Helvetica), xref offsets computed."""
    text_ops = " ".join(
        f"BT /F1 12 Tf 72 {720 - 20 * i} Td ({line}) Tj ET" for i, line in enumerate(lines)
    )
    stream = text_ops.encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title:
        objects.append(b"<< /Title (" + title.encode("latin-1") + b") >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    info = f" /Info {len(objects)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_markdown_title_from_first_heading() -> None:
    result = load_bytes("guide.md", b"# Install Guide\n\nRun the installer.\r\n", "src/guide.md")
    (doc,) = result.documents
    assert (doc.title, doc.source, doc.key) == ("Install Guide", "src/guide.md", "src/guide.md")
    assert doc.text == "# Install Guide\n\nRun the installer."


def test_txt_title_falls_back_to_file_name_and_bom_is_dropped() -> None:
    (doc,) = load_bytes("notes.txt", "\ufeffplain words".encode()).documents
    assert doc.title == "notes"
    assert doc.text == "plain words"


def test_utf16_with_bom_is_decoded() -> None:
    (doc,) = load_bytes("wide.txt", "héllo wörld".encode("utf-16")).documents
    assert doc.text == "héllo wörld"


def test_rst_title_from_underlined_heading() -> None:
    (doc,) = load_bytes("cats.rst", b"Cats\n====\n\nThey sleep.\n").documents
    assert doc.title == "Cats"


def test_html_keeps_headings_and_paragraphs_and_drops_scripts() -> None:
    html = (
        b"<html><head><title>Page Title</title><style>p{}</style></head><body>"
        b"<h1>Main</h1><p>First <b>para</b>.</p><script>alert(1)</script>"
        b"<h2>Next</h2><ul><li>one</li><li>two</li></ul></body></html>"
    )
    (doc,) = load_bytes("page.html", html).documents
    assert doc.title == "Page Title"
    assert doc.text == "# Main\n\nFirst para.\n\n## Next\n\none\n\ntwo"


def test_pdf_text_layer_and_metadata_title() -> None:
    data = make_pdf(["Quarterly report", "Revenue grew by ten percent."], title="Q3 Report")
    (doc,) = load_bytes("report.pdf", data).documents
    assert doc.title == "Q3 Report"
    assert "Revenue grew by ten percent." in doc.text


def test_pdf_without_text_layer_and_broken_pdf_are_errors() -> None:
    with pytest.raises(LoaderError, match="no text layer"):
        load_bytes("scan.pdf", make_pdf([]))
    with pytest.raises(LoaderError, match="not a readable PDF"):
        load_bytes("broken.pdf", b"%PDF-1.4\nthis is not a pdf")


def test_jsonl_is_one_document_per_line_and_bad_lines_are_warnings() -> None:
    lines = [
        json.dumps({"_id": "d1", "title": "First", "text": "alpha"}),
        "{not json",
        json.dumps({"_id": "d2", "title": "", "text": "beta"}),
        json.dumps({"title": "no id"}),
        json.dumps({"_id": "d1", "title": "dup", "text": "again"}),
        "",
    ]
    result = load_bytes("corpus.jsonl", "\n".join(lines).encode(), "/data/corpus.jsonl")
    assert [(d.external_id, d.title, d.text) for d in result.documents] == [
        ("d1", "First", "alpha"),
        ("d2", "d2", "beta"),
    ]
    assert result.documents[0].key == "/data/corpus.jsonl#d1"
    assert len({d.document_id for d in result.documents}) == 2
    assert [w.split(":")[1] for w in result.warnings] == ["2", "4", "5"]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.md", b"", "empty"),
        ("blank.txt", b"  \n\n\t ", "no text to index"),
        ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "looks binary"),
        ("latin1.md", "café crème".encode("latin-1"), "not valid UTF-8"),
        ("image.png", b"\x89PNG", "unsupported file type"),
        ("nothing.jsonl", b"{bad\n", "no loadable JSONL"),
    ],
)
def test_bad_input_raises_an_error_that_names_the_problem(
    name: str, data: bytes, message: str
) -> None:
    with pytest.raises(LoaderError, match=message):
        load_bytes(name, data)


def test_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "huge.txt"
    with big.open("wb") as handle:  # sparse: 200 MB on paper, no blocks written
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(LoaderError, match="above MAX_DOCUMENT_BYTES"):
        read_file(big, 20 * 1024 * 1024)


def test_missing_path_and_folder_expansion(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="no such file"):
        read_file(tmp_path / "missing.md", 1000)
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.TXT").write_text("b")
    (tmp_path / "sub" / "c.exe").write_text("c")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "d.md").write_text("d")
    found = [p.relative_to(tmp_path).as_posix() for p in expand_paths([tmp_path])]
    assert found == ["a.md", "sub/b.TXT"]
    explicit = list(expand_paths([tmp_path / "sub" / "c.exe", tmp_path / "nope.md"]))
    assert [p.name for p in explicit] == ["c.exe", "nope.md"], "explicit paths reach the report"


# Every character str.splitlines() breaks at, besides "\n" itself (the only JSON Lines separator).
_NOT_RECORD_BREAKS = ["\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", _NOT_RECORD_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_jsonl_records_end_at_newline_only(char: str) -> None:
    """A string value holding a character that str.splitlines() treats as a line break stays in
    its record: the corpus loads whole, with no warning."""
    rows = [
        '{"_id": "a", "title": "T' + char + 'one", "text": "before' + char + 'after"}',
        json.dumps({"_id": "b", "title": "Two", "text": "second"}),
    ]
    data = ("\r\n".join(rows) + "\r\n").encode()
    result = load_bytes("corpus.jsonl", data, "/data/corpus.jsonl")
    assert result.warnings == []
    assert [d.external_id for d in result.documents] == ["a", "b"]
    assert "before" in result.documents[0].text and "after" in result.documents[0].text
