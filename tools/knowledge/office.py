"""Loaders of office and data formats: .docx, .pptx, .xlsx, .csv and .json.

Each turns its file into the plain text the chunker reads (headings as Markdown lines) under the
bounds PDFs have: MAX_DOCUMENT_BYTES (checked before loading), MAX_PDF_PAGES (slides of a .pptx
and sheets of a .xlsx count as pages, checked before any is read), MAX_EXTRACTED_CHARS (checked
as text is extracted), and for the zip-based formats MAX_UNCOMPRESSED_BYTES: the sizes the zip
directory declares are summed before anything is inflated (Python's zipfile never inflates an
entry past its declared size, so the sum bounds what a zip bomb can expand to).

- .docx (python-docx): paragraphs in document order, ``Heading N`` styles as Markdown headings,
  tables as rows (below). No pages (Word paginates at display time).
- .pptx (python-pptx): a page per slide (its number), the slide title as a heading, then the
  text of its shapes, tables and speaker notes.
- .xlsx (openpyxl, read-only): a page per sheet (its name); the sheet's first non-empty row is
  its header and every other row one record.
- .csv (stdlib csv, dialect sniffed): the first row is the header, every other row a record.
- .json: flattened to ``path: value`` lines; a top-level array gives a record per element.

Table rows are written ``column: value; column: value`` and separated by blank lines, so each
row carries its header into whichever chunk it lands in, and a row-based document is chunked by
whole rows (`LoadedDocument.records`).

An encrypted (password-protected) .docx/.pptx/.xlsx is an OLE compound file, not a zip: it is
refused with a message saying so, as is a file that is not the zip it should be.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tools.knowledge.loaders import (
    IngestLimitExceeded,
    LoadedDocument,
    LoaderError,
    LoadLimits,
    LoadResult,
    decode_text,
    join_pages,
    normalise_text,
)

#: First bytes of an OLE compound file: what an encrypted OOXML file (or a legacy .doc/.xls/.ppt)
#: is instead of a zip.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_LEGACY = {".docx": ".doc", ".pptx": ".ppt", ".xlsx": ".xls"}


def load_office(suffix: str, data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """Load ``data`` (a file named ``name``) of one of the formats above."""
    loaders: dict[str, Callable[[bytes, str, str, LoadLimits], LoadResult]] = {
        ".docx": load_docx,
        ".pptx": load_pptx,
        ".xlsx": load_xlsx,
        ".csv": load_csv,
        ".json": load_json,
    }
    return loaders[suffix](data, name, source, limits)


class _Budget:
    """Counts extracted characters against MAX_EXTRACTED_CHARS."""

    def __init__(self, name: str, kind: str, limit: int | None) -> None:
        self.name, self.kind, self.limit, self.used = name, kind, limit, 0

    def add(self, text: str) -> str:
        self.used += len(text)
        if self.limit is not None and self.used > self.limit:
            raise LoaderError(
                f"{self.name}: the {self.kind} holds more than {self.limit:,} characters of text "
                "(MAX_EXTRACTED_CHARS): split it, or raise MAX_EXTRACTED_CHARS"
            )
        return text


def _check_pages(name: str, count: int, what: str, limits: LoadLimits) -> None:
    if limits.max_pdf_pages is not None and count > limits.max_pdf_pages:
        raise LoaderError(
            f"{name}: the file has {count:,} {what}; at most {limits.max_pdf_pages:,} are read "
            "(MAX_PDF_PAGES counts pages, slides and sheets): split it, or raise MAX_PDF_PAGES"
        )


def check_zip(data: bytes, name: str, suffix: str, limits: LoadLimits) -> None:
    """Refuse (`LoaderError`) an OOXML file that is encrypted, not a zip, or would inflate past
    ``limits.max_uncompressed_bytes``; nothing is inflated here."""
    if data.startswith(OLE_MAGIC):
        raise LoaderError(
            f"{name}: this is an OLE compound file, not a {suffix} zip: the file is "
            f"password-protected (encrypted), or in the legacy {_LEGACY[suffix]} format. Remove "
            f"the password (or save it as {suffix}) and upload it again"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise LoaderError(
            f"{name}: not a {suffix} file (a {suffix} is a zip archive, and this one cannot be "
            f"opened: {exc}); check the file is complete, or save it again as {suffix}"
        ) from exc
    if any(entry.flag_bits & 0x1 for entry in entries):
        raise LoaderError(f"{name}: the zip entries are encrypted; remove the password first")
    expanded = sum(entry.file_size for entry in entries)
    most = limits.max_uncompressed_bytes
    if most is not None and expanded > most:
        raise LoaderError(
            f"{name}: the {suffix} expands to {expanded:,} bytes uncompressed, above "
            f"MAX_UNCOMPRESSED_BYTES ({most:,}); a genuine file that large: split it, or raise "
            "MAX_UNCOMPRESSED_BYTES"
        )


@contextmanager
def _readable(name: str, kind: str) -> Iterator[None]:
    """Turn whatever a format library raises on a damaged file into a `LoaderError`.

    The libraries raise their own exception types, lxml's, zipfile's, KeyError for a missing
    part and more; all mean the same to the uploader (the file is damaged or not what its name
    says), so all are caught here -- our own errors and limits pass through."""
    try:
        yield
    except (LoaderError, IngestLimitExceeded):
        raise
    except Exception as exc:
        raise LoaderError(
            f"{name}: not a readable {kind} ({type(exc).__name__}: {exc}); check the file is "
            f"complete, or open it and save it again as {kind}"
        ) from exc


def cell_text(value: Any) -> str:
    """A table cell as text: whole floats without ``.0``, dates in ISO form, spaces collapsed."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, dt.datetime | dt.date | dt.time):
        value = value.isoformat()
    return " ".join(str(value).split())


def row_text(header: Sequence[str], values: Sequence[Any]) -> str:
    """``column: value; column: value`` of a row's non-empty cells (``column N`` where the
    header has no name for it)."""
    parts: list[str] = []
    for i, value in enumerate(values):
        text = cell_text(value)
        if text:
            column = header[i] if i < len(header) and header[i] else f"column {i + 1}"
            parts.append(f"{column}: {text}")
    return "; ".join(parts)


def table_rows(rows: Iterator[Sequence[Any]], budget: _Budget) -> list[str]:
    """The records of a table whose first non-empty row is its header (the header alone when
    there is no other row)."""
    header: list[str] | None = None
    out: list[str] = []
    for row in rows:
        cells = [cell_text(v) for v in row]
        if not any(cells):
            continue
        if header is None:
            header = cells
            continue
        line = row_text(header, row)
        if line:
            out.append(budget.add(line))
    if header is not None and not out:
        out.append(budget.add("; ".join(c for c in header if c)))
    return out


def _document(
    name: str,
    source: str,
    title: str,
    text: str,
    *,
    pages: list[tuple[int, str]] | None = None,
    records: bool = False,
) -> LoadResult:
    if not text.strip():
        raise LoaderError(f"{name}: no text to index (the file holds no text)")
    doc = LoadedDocument(
        key=source,
        title=" ".join(title.split()) or Path(name).stem,
        text=text,
        source=source,
        pages=pages or [],
        records=records,
    )
    return LoadResult([doc])


def load_docx(data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """A Word document: paragraphs and tables in order, headings as Markdown headings."""
    check_zip(data, name, ".docx", limits)
    budget = _Budget(name, "document", limits.max_extracted_chars)
    with _readable(name, ".docx"):
        from docx import Document
        from docx.table import Table

        doc = Document(io.BytesIO(data))
        blocks: list[str] = []
        first_heading = ""
        for block in doc.iter_inner_content():
            if isinstance(block, Table):
                rows = ([cell.text for cell in row.cells] for row in block.rows)
                blocks.extend(table_rows(rows, budget))
                continue
            text = " ".join(block.text.split())
            if not text:
                continue
            style = (block.style.name if block.style is not None else "") or ""
            level = _heading_level(style)
            if level:
                first_heading = first_heading or text
                text = f"{'#' * level} {text}"
            blocks.append(budget.add(text))
        title = doc.core_properties.title or first_heading
    return _document(name, source, title, normalise_text("\n\n".join(blocks)))


def _heading_level(style: str) -> int:
    """1..6 for Word's ``Title`` and ``Heading N`` styles, else 0."""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        number = style.removeprefix("Heading ").strip()
        return min(int(number), 6) if number.isdigit() and int(number) > 0 else 0
    return 0


def load_pptx(data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """A PowerPoint deck: a page per slide, its title as a heading, its text, tables, notes."""
    check_zip(data, name, ".pptx", limits)
    budget = _Budget(name, "presentation", limits.max_extracted_chars)
    with _readable(name, ".pptx"):
        from pptx import Presentation

        deck = Presentation(io.BytesIO(data))
        slides = list(deck.slides)
        _check_pages(name, len(slides), "slides", limits)
        pages: list[tuple[str, str]] = []
        first_title = ""
        for number, slide in enumerate(slides, start=1):
            title_shape = slide.shapes.title
            heading = " ".join(title_shape.text_frame.text.split()) if title_shape else ""
            first_title = first_title or heading
            blocks = [budget.add(f"# {heading}")] if heading else []
            for shape in _shapes(slide.shapes):
                if title_shape is not None and shape.shape_id == title_shape.shape_id:
                    continue
                if getattr(shape, "has_table", False) and shape.has_table:
                    rows = ([cell.text for cell in row.cells] for row in shape.table.rows)
                    blocks.extend(table_rows(rows, budget))
                elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                    blocks.append(budget.add(shape.text_frame.text))
            if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                notes = slide.notes_slide.notes_text_frame.text.strip()
                if notes:
                    blocks.append(budget.add(f"Notes: {notes}"))
            pages.append((str(number), "\n\n".join(blocks)))
        title = deck.core_properties.title or first_title
    text, starts = join_pages(pages)
    return _document(name, source, title, text, pages=starts)


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape, the members of group shapes included."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def load_xlsx(data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """An Excel workbook (read-only, cached values): a page per sheet, a record per row."""
    check_zip(data, name, ".xlsx", limits)
    budget = _Budget(name, "workbook", limits.max_extracted_chars)
    with _readable(name, ".xlsx"):
        from openpyxl import load_workbook

        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            sheets = list(book.worksheets)
            _check_pages(name, len(sheets), "sheets", limits)
            pages: list[tuple[str, str]] = []
            for sheet in sheets:
                rows = table_rows(sheet.iter_rows(values_only=True), budget)
                if rows:
                    pages.append((sheet.title, "\n\n".join([f"# {sheet.title}", *rows])))
            title = book.properties.title or ""
        finally:
            book.close()
    text, starts = join_pages(pages)
    return _document(name, source, title, text, pages=starts, records=True)


def load_csv(data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """Comma-separated values (the dialect sniffed: , ; tab |): a record per row."""
    text = decode_text(data, name)
    budget = _Budget(name, "CSV file", limits.max_extracted_chars)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel  # one column, or too irregular to tell: plain commas
    try:
        rows = table_rows(csv.reader(io.StringIO(text, newline=""), dialect), budget)
    except csv.Error as exc:
        raise LoaderError(f"{name}: not a readable CSV file ({exc}); check its quoting") from exc
    return _document(name, source, "", normalise_text("\n\n".join(rows)), records=True)


def load_json(data: bytes, name: str, source: str, limits: LoadLimits) -> LoadResult:
    """JSON flattened to ``path: value`` lines: a block per element of a top-level array, or
    per key of a top-level object."""
    text = decode_text(data, name)
    budget = _Budget(name, "JSON file", limits.max_extracted_chars)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoaderError(
            f"{name}: invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); for "
            "one document per line use .jsonl"
        ) from exc
    except RecursionError as exc:
        raise LoaderError(f"{name}: the JSON is nested too deeply to read") from exc
    title = ""
    if isinstance(value, list):
        items: list[tuple[str, Any]] = [("", v) for v in value]
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
        found = value.get("title") or value.get("name")
        title = found if isinstance(found, str) else ""
    else:
        items = [("", value)]
    with _readable(name, ".json"):
        blocks = [budget.add("\n".join(_flatten(v, path))) for path, v in items]
    body = normalise_text("\n\n".join(b for b in blocks if b.strip()))
    return _document(name, source, title, body, records=isinstance(value, list))


def _flatten(value: Any, path: str) -> Iterator[str]:
    """``path: value`` per scalar leaf; a list of scalars stays on one line."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            joined = ", ".join(cell_text(v) for v in value if cell_text(v))
            if joined:
                yield f"{path}: {joined}" if path else joined
            return
        for i, item in enumerate(value):
            yield from _flatten(item, f"{path}[{i}]")
    else:
        text = cell_text(value) if not isinstance(value, bool) else str(value).lower()
        if text:
            yield f"{path}: {text}" if path else text
