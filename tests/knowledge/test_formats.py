"""The office and data loaders (.docx, .pptx, .xlsx, .csv, .json) and paged chunking, on files
the tests build with python-docx, python-pptx, openpyxl and pypdf: text, pages, caps, and the
per-file errors of encrypted, damaged and hostile files."""

from __future__ import annotations

import pytest

from agents.knowledge.citations import Citation
from agents.knowledge.common import sources_listing
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
from tools.knowledge.chunking import chunk_text
from tools.knowledge.ingest import chunk_document
from tools.knowledge.loaders import LoaderError, LoadLimits, load_bytes


def test_docx_keeps_headings_paragraphs_and_table_rows_in_order() -> None:
    data = make_docx(
        "Escalation policy",
        ["Page the duty manager after 20 minutes without a fix."],
        [["Team", "Lead"], ["SRE", "Ada Lovelace"]],
    )
    (doc,) = load_bytes("policy.docx", data, "upload:x/policy.docx").documents
    assert doc.title == "Escalation policy" and doc.pages == [] and not doc.records
    assert doc.text == (
        "# Escalation policy\n\nPage the duty manager after 20 minutes without a fix.\n\n"
        "Team: SRE; Lead: Ada Lovelace"
    )
    (chunk,) = chunk_document(doc, 400, 80)
    assert (chunk.heading, chunk.page) == ("Escalation policy", None)


def test_pptx_is_a_page_per_slide_with_its_title_as_heading_and_notes() -> None:
    data = make_pptx(
        [
            ("Roadmap", "The mobile app ships in spring."),
            ("Pricing", "The team plan costs 14 euros."),
        ],
        notes={2: "Discounts need the CFO's approval."},
    )
    (doc,) = load_bytes("deck.pptx", data).documents
    assert doc.title == "Roadmap"
    assert [label for _, label in doc.pages] == ["1", "2"]
    chunks = chunk_document(doc, 400, 80)
    assert [(c.page, c.heading) for c in chunks] == [("1", "Roadmap"), ("2", "Pricing")]
    assert "14 euros" in chunks[1].text and "CFO's approval" in chunks[1].text
    assert "14 euros" not in chunks[0].text


def test_xlsx_is_a_page_per_sheet_and_a_record_per_row() -> None:
    data = make_xlsx({
        "Budget": [["Item", "Cost"], ["GPU", 1200.0], ["Desk", 300]],
        "Staff": [["Name", "Role"], ["Grace Hopper", "release captain"], [None, None]],
        "Empty": [],
    })  # fmt: skip
    (doc,) = load_bytes("plan.xlsx", data).documents
    assert doc.records and [label for _, label in doc.pages] == ["Budget", "Staff"]
    assert doc.text == (
        "# Budget\n\nItem: GPU; Cost: 1200\n\nItem: Desk; Cost: 300\n\n"
        "# Staff\n\nName: Grace Hopper; Role: release captain"
    )
    chunks = chunk_document(doc, 400, 80)
    assert [(c.page, c.heading) for c in chunks] == [("Budget", "Budget"), ("Staff", "Staff")]


def test_a_large_csv_is_chunked_by_whole_rows_with_the_header_in_each_chunk() -> None:
    header = ["ticket", "service", "severity", "owner"]
    rows = [[f"T-{i:04d}", f"svc-{i % 7}", ("high", "low")[i % 2], f"team {i % 5}"]
            for i in range(2000)]  # fmt: skip
    (doc,) = load_bytes("tickets.csv", make_csv(header, rows)).documents
    assert doc.records and doc.title == "tickets"
    chunks = chunk_document(doc, 400, 80)  # overlap asked, not used: rows stay whole
    assert len(chunks) > 100
    seen: list[str] = []
    for chunk in chunks:
        lines = chunk.text.split("\n\n")
        for line in lines:  # whole rows only, each with the header's column names
            assert line.startswith("ticket: T-") and all(f"{h}: " in line for h in header), line
        seen.extend(line.split(";")[0].removeprefix("ticket: ") for line in lines)
        assert len(chunk.text) <= 400
    assert seen == [row[0] for row in rows]  # every row once, in order, none cut or repeated


def test_csv_dialects_quotes_and_a_header_alone() -> None:
    data = b'name;note\n"Smith, J.";"said ""hi"""\n'
    (doc,) = load_bytes("people.csv", data).documents
    assert doc.text == 'name: Smith, J.; note: said "hi"'
    (alone,) = load_bytes("h.csv", b"a,b,c\n").documents
    assert alone.text == "a; b; c"


def test_json_is_flattened_to_path_value_lines() -> None:
    data = make_json({
        "title": "Billing service",
        "owner": {"team": "payments", "oncall": ["ana", "bo"]},
        "sla": {"uptime": "99.95%", "paged": True},
        "endpoints": [{"path": "/charge", "timeout_ms": 800}],
    })  # fmt: skip
    (doc,) = load_bytes("billing.json", data).documents
    assert doc.title == "Billing service" and not doc.records
    assert doc.text == (
        "title: Billing service\n\nowner.team: payments\nowner.oncall: ana, bo\n\n"
        "sla.uptime: 99.95%\nsla.paged: true\n\n"
        "endpoints[0].path: /charge\nendpoints[0].timeout_ms: 800"
    )
    (rows,) = load_bytes("rows.json", make_json([{"a": 1}, {"a": 2}])).documents
    assert rows.records and rows.text == "a: 1\n\na: 2"
    with pytest.raises(LoaderError, match=r"invalid JSON .* line 1"):
        load_bytes("bad.json", b'{"a": ')


def test_pdf_pages_are_kept_and_no_chunk_spans_two() -> None:
    data = make_pdf([["Intro page text."], ["The fact on page two."], ["Closing words."]])
    (doc,) = load_bytes("three.pdf", data).documents
    assert [label for _, label in doc.pages] == ["1", "2", "3"]
    chunks = chunk_document(doc, 1200, 200)  # all three would fit one chunk: pages split it
    assert [(c.page, c.text) for c in chunks] == [
        ("1", "Intro page text."), ("2", "The fact on page two."), ("3", "Closing words.")
    ]  # fmt: skip


def test_a_heading_stays_in_force_across_a_page_break() -> None:
    text = "# Setup\n\nFirst part.\n\nSecond part on the next page."
    cut = text.index("Second")
    chunks = chunk_text(text, 400, 50, pages=[(0, "1"), (cut, "2")])
    assert [(c.page, c.heading, c.text) for c in chunks] == [
        ("1", "Setup", "# Setup\n\nFirst part."),
        ("2", "Setup", "Second part on the next page."),
    ]


@pytest.mark.parametrize(
    ("name", "data", "needle"),
    [
        ("locked.xlsx", encrypted_office(), "password-protected"),
        ("locked.docx", encrypted_office(), "legacy .doc format"),
        ("broken.docx", b"this is not a zip archive", "not a .docx file"),
        ("cut.pptx", make_pptx([("A", "b")])[:-300], "not a .pptx file"),
        ("other.pptx", zip_without_parts(), "not a readable .pptx"),
        ("other.xlsx", zip_without_parts(), "not a readable .xlsx"),
        ("empty.docx", make_docx("", []), "no text to index"),
        ("binary.csv", b"a,b\x00\x01", "looks binary"),
    ],
)
def test_damaged_and_encrypted_files_are_loader_errors_naming_the_problem(
    name: str, data: bytes, needle: str
) -> None:
    with pytest.raises(LoaderError, match=needle):
        load_bytes(name, data)


def test_a_zip_bomb_is_refused_from_its_directory_before_inflating() -> None:
    bomb = zip_bomb(64 << 20)
    assert len(bomb) < 200_000
    with pytest.raises(LoaderError, match="MAX_UNCOMPRESSED_BYTES"):
        load_bytes("bomb.docx", bomb, limits=LoadLimits(max_uncompressed_bytes=8 << 20))


def test_slides_and_sheets_count_as_pages_and_text_is_capped() -> None:
    deck = make_pptx([(f"Slide {i}", "text") for i in range(4)])
    with pytest.raises(LoaderError, match="4 slides.*MAX_PDF_PAGES"):
        load_bytes("deck.pptx", deck, limits=LoadLimits(max_pdf_pages=3))
    book = make_xlsx({f"S{i}": [["a"], ["b"]] for i in range(3)})
    with pytest.raises(LoaderError, match="3 sheets.*MAX_PDF_PAGES"):
        load_bytes("book.xlsx", book, limits=LoadLimits(max_pdf_pages=2))
    limits = LoadLimits(max_extracted_chars=1000)
    rows = [[f"row {i}", "x" * 50] for i in range(100)]
    for name, data in [
        ("big.xlsx", make_xlsx({"S": [["a", "b"], *rows]})),
        ("big.csv", make_csv(["a", "b"], rows)),
        ("big.docx", make_docx("Big", ["word " * 300])),
        ("big.json", make_json([{"a": r[0], "b": r[1]} for r in rows])),
    ]:
        with pytest.raises(LoaderError, match="MAX_EXTRACTED_CHARS"):
            load_bytes(name, data, limits=limits)


def test_citations_name_the_page_slide_or_sheet() -> None:
    def cite(number: int, source: str, page: str | None) -> Citation:
        return Citation(number, "d", "Guide", source, "c", "text", page)

    listing = sources_listing([
        cite(1, "upload:o/guide.pdf", "2"), cite(2, "upload:o/deck.pptx", "3"),
        cite(3, "upload:o/plan.xlsx", "Staff"), cite(4, "upload:o/notes.md", None),
    ])  # fmt: skip
    assert listing == (
        "Sources:\n[1] Guide (upload:o/guide.pdf, p. 2)\n[2] Guide (upload:o/deck.pptx, slide 3)"
        "\n[3] Guide (upload:o/plan.xlsx, sheet Staff)\n[4] Guide (upload:o/notes.md)"
    )
