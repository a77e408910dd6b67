"""Files of every ingestible office/data format, built by the tests with the libraries that
write them (python-docx, python-pptx, openpyxl, pypdf), plus damaged and hostile ones."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from tools.knowledge.office import OLE_MAGIC


def make_docx(
    heading: str, paragraphs: Sequence[str], table: Sequence[Sequence[str]] = ()
) -> bytes:
    """A Word document: a Heading 1, paragraphs, and a table (first row its header)."""
    from docx import Document

    doc = Document()
    doc.add_heading(heading, level=1)
    for text in paragraphs:
        doc.add_paragraph(text)
    if table:
        grid = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def make_pptx(slides: Sequence[tuple[str, str]], notes: dict[int, str] | None = None) -> bytes:
    """A deck of ``(title, body)`` slides (title-and-content layout), with speaker notes."""
    from pptx import Presentation

    deck = Presentation()
    for number, (title, body) in enumerate(slides, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes and number in notes:
            slide.notes_slide.notes_text_frame.text = notes[number]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def make_xlsx(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    """A workbook with one sheet per entry (rows as given, the first one the header)."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def make_pdf(pages: Sequence[Sequence[str]], title: str | None = None) -> bytes:
    """A PDF with a real text layer (Helvetica): one page per entry, one text line per string."""
    writer = PdfWriter()
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    })  # fmt: skip
    for lines in pages:
        page = writer.add_blank_page(width=612, height=792)
        page[NameObject("/Resources")] = DictionaryObject({
            NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})
        })  # fmt: skip
        stream = DecodedStreamObject()
        ops = " ".join(
            f"BT /F1 11 Tf 72 {720 - 16 * i} Td ({line}) Tj ET" for i, line in enumerate(lines)
        )
        stream.set_data(ops.encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if title:
        writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> bytes:
    lines = [",".join(header)] + [",".join(str(v) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def make_json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def encrypted_office() -> bytes:
    """What a password-protected .docx/.xlsx/.pptx is on disk: an OLE compound file (the
    EncryptedPackage inside it), never a zip."""
    return OLE_MAGIC + bytes(504) + b"EncryptionInfo\x00EncryptedPackage\x00" * 16


def zip_bomb(expanded: int) -> bytes:
    """A zip (named like a .docx) whose one entry inflates to ``expanded`` bytes of zeros."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            block = bytes(1 << 20)
            for _ in range(expanded >> 20):
                entry.write(block)
    return out.getvalue()


def zip_without_parts() -> bytes:
    """A valid zip that is no office document (none of the parts a .pptx has)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "not a presentation")
    return out.getvalue()
