"""Document loaders: .md, .txt, .rst, .html, .pdf, BEIR-style .jsonl (one document per line),
and through `tools.knowledge.office` .docx, .pptx, .xlsx, .csv and .json.

Every loader works on bytes (so uploads and files share one path) and returns plain text in which
headings are kept as Markdown-style lines, so the chunker can start a new chunk at each heading.
A paged format (PDF pages, PPTX slides, XLSX sheets) also says where each page starts in that
text (`LoadedDocument.pages`), so no chunk spans two pages and every chunk knows its page.
Bad input raises `LoaderError` with a message that says what is wrong and how to fix it; the
ingestion layer turns it into a per-file error and carries on with the other files.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.knowledge.chunking import heading_starts
from tools.knowledge.jsonl import jsonl_lines

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
#: Loaded by `tools.knowledge.office`.
OFFICE_SUFFIXES = frozenset({".docx", ".pptx", ".xlsx", ".csv", ".json"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | OFFICE_SUFFIXES | {".pdf", ".jsonl"}

#: Namespace of document ids: uuid5(namespace, document key) is stable across runs and machines.
DOCUMENT_NAMESPACE = uuid.UUID("5b0c2f0e-4f39-4c55-9a53-6d0f2b1c7a11")


class LoaderError(ValueError):
    """A file that cannot be ingested; the message names the problem and the fix."""


class IngestLimitExceeded(Exception):
    """A whole upload is refused: it holds more than a per-upload or per-owner limit allows.

    Raised before anything of it is embedded or stored; ``setting`` names the limit, and
    ``per_owner`` says whether it is the owner's quota (room frees up by deleting documents)
    rather than the size of this one upload."""

    def __init__(self, message: str, *, setting: str, per_owner: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.setting = setting
        self.per_owner = per_owner


@dataclass(frozen=True, slots=True)
class LoadLimits:
    """Bounds on what loading one file may produce (None: unbounded)."""

    #: Documents this file may still add to its upload (MAX_DOCUMENTS_PER_UPLOAD less those
    #: of the upload's earlier files); loading stops at one past it.
    max_documents: int | None = None
    #: Pages of a PDF, slides of a .pptx, sheets of a .xlsx (MAX_PDF_PAGES), checked before
    #: any page is extracted.
    max_pdf_pages: int | None = None
    #: Characters extracted from a PDF, .docx, .pptx, .xlsx, .csv or .json
    #: (MAX_EXTRACTED_CHARS), checked as the text is extracted.
    max_extracted_chars: int | None = None
    #: Uncompressed bytes of a zip-based office file (.docx, .pptx, .xlsx;
    #: MAX_UNCOMPRESSED_BYTES), checked from its zip directory before anything is inflated.
    max_uncompressed_bytes: int | None = None


def too_many_documents(name: str, limit: int) -> IngestLimitExceeded:
    """The refusal of an upload holding more than ``limit`` documents."""
    return IngestLimitExceeded(
        f"{name}: the upload holds more than {limit:,} documents (MAX_DOCUMENTS_PER_UPLOAD); "
        "nothing was indexed. Split it into smaller uploads, or ingest it with "
        "`python main.py ingest` on the server.",
        setting="MAX_DOCUMENTS_PER_UPLOAD",
    )


@dataclass(slots=True)
class LoadedDocument:
    """One document ready to chunk. ``key`` identifies it across re-ingestion."""

    key: str
    title: str
    text: str
    source: str
    external_id: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    #: ``(offset in text, page label)`` where each page starts, in order: the PDF page number,
    #: the slide number, the sheet name; empty for formats without pages.
    pages: list[tuple[int, str]] = field(default_factory=list)
    #: The text is whole records (table rows) separated by blank lines: chunks hold whole
    #: records and do not overlap, so no chunk starts in the middle of a row.
    records: bool = False

    @property
    def document_id(self) -> str:
        """Stable id: the same source (and BEIR ``_id``) always maps to the same document."""
        return document_id_for(self.key)


@dataclass(slots=True)
class LoadResult:
    """What one file produced: documents, plus non-fatal problems (e.g. bad JSONL lines)."""

    documents: list[LoadedDocument]
    warnings: list[str] = field(default_factory=list)


def document_id_for(key: str) -> str:
    """The document id of a document key (a source path, ``upload:<name>``, ``path#_id``)."""
    return str(uuid.uuid5(DOCUMENT_NAMESPACE, key))


def decode_text(data: bytes, name: str) -> str:
    """Decode UTF-8 (BOM optional) or BOM-marked UTF-16; anything else is a `LoaderError`.

    Guessing a legacy code page would silently index mojibake, so we refuse and say how to
    convert instead.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise LoaderError(
                f"{name}: invalid UTF-16 ({exc.reason}); re-save it as UTF-8"
            ) from exc
    head = data[:8192]
    if b"\x00" in head:
        raise LoaderError(
            f"{name}: looks binary (NUL bytes), not text; ingest "
            + ", ".join(sorted(SUPPORTED_SUFFIXES))
            + " files"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoaderError(
            f"{name}: not valid UTF-8 (byte {exc.start}: {exc.reason}); convert it first, e.g. "
            f"`iconv -f WINDOWS-1252 -t UTF-8 {name}`"
        ) from exc


def normalise_text(text: str) -> str:
    """Unix newlines, no trailing spaces, at most one blank line in a row, no NULs."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _require_text(text: str, name: str) -> str:
    if not text.strip():
        raise LoaderError(f"{name}: no text to index (the file is empty or only whitespace)")
    return text


def _title_from_headings(text: str, fallback: str) -> str:
    heads = heading_starts(text)
    return heads[0][1] if heads and heads[0][1] else fallback


def load_plain(data: bytes, name: str, source: str) -> LoadResult:
    """Markdown, reStructuredText or plain text; the title is the first heading or the name."""
    text = _require_text(normalise_text(decode_text(data, name)), name)
    title = _title_from_headings(text, Path(name).stem)
    return LoadResult([LoadedDocument(key=source, title=title, text=text, source=source)])


_BLOCK_TAGS = (
    "p", "div", "section", "article", "li", "ul", "ol", "pre", "blockquote", "table", "tr",
    "br", "hr", "dd", "dt", "figcaption", "header", "footer", "main",
)  # fmt: skip


def load_html(data: bytes, name: str, source: str) -> LoadResult:
    """HTML: visible text with block structure kept; <h1>..<h6> become Markdown headings."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(decode_text(data, name), "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg"]):
        tag.decompose()
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    if title_tag:
        title_tag.decompose()
    for level in range(1, 7):
        for tag in soup.find_all(f"h{level}"):
            heading = " ".join(tag.get_text(" ", strip=True).split())
            tag.replace_with(f"\n\n{'#' * level} {heading}\n\n" if heading else "\n\n")
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    lines = (" ".join(line.split()) for line in soup.get_text().split("\n"))
    text = _require_text(normalise_text("\n".join(lines)), name)
    title = page_title or _title_from_headings(text, Path(name).stem)
    return LoadResult([LoadedDocument(key=source, title=title, text=text, source=source)])


def load_pdf(data: bytes, name: str, source: str, limits: LoadLimits | None = None) -> LoadResult:
    """PDF text layer, pages separated by blank lines; title from the metadata or the name.

    A PDF above ``limits.max_pdf_pages`` pages is refused before any page is read; text
    extraction stops as soon as it passes ``limits.max_extracted_chars`` (a small compressed
    PDF can expand to far more text than its size suggests)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    limits = limits or LoadLimits()
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoaderError(f"{name}: the PDF is encrypted; remove its password first")
        count = len(reader.pages)
        if limits.max_pdf_pages is not None and count > limits.max_pdf_pages:
            raise LoaderError(
                f"{name}: the PDF has {count:,} pages; at most {limits.max_pdf_pages:,} are "
                "read (MAX_PDF_PAGES): split it, or raise MAX_PDF_PAGES"
            )
        pages: list[str] = []
        chars = 0
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            chars += len(pages[-1])
            if limits.max_extracted_chars is not None and chars > limits.max_extracted_chars:
                raise LoaderError(
                    f"{name}: the PDF holds more than {limits.max_extracted_chars:,} characters "
                    "of text (MAX_EXTRACTED_CHARS): split it, or raise MAX_EXTRACTED_CHARS"
                )
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except LoaderError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise LoaderError(
            f"{name}: not a readable PDF ({exc}); check the file is complete"
        ) from exc
    text, starts = join_pages([(str(number), page) for number, page in enumerate(pages, 1)])
    if not text:
        raise LoaderError(
            f"{name}: the PDF has no text layer (scanned images?); run OCR on it first"
        )
    title = str(meta_title).strip() or Path(name).stem
    return LoadResult(
        [LoadedDocument(key=source, title=title, text=text, source=source, pages=starts)]
    )


def join_pages(pages: Iterable[tuple[str, str]]) -> tuple[str, list[tuple[int, str]]]:
    """One text of ``(label, page text)`` pages, normalised page by page and separated by blank
    lines, with the offset where each non-empty page starts (blank pages are left out)."""
    parts: list[str] = []
    starts: list[tuple[int, str]] = []
    offset = 0
    for label, page in pages:
        body = normalise_text(page)
        if not body:
            continue
        if parts:
            offset += 2  # the "\n\n" before this page
        starts.append((offset, label))
        parts.append(body)
        offset += len(body)
    return "\n\n".join(parts), starts


def read_jsonl_text(path: Path) -> str:
    r"""A JSON Lines file's text exactly as stored (`decode_text`: UTF-8, or UTF-16 with a BOM):
    no universal-newline translation, which would turn a raw "\r" inside a string into a record
    break. `LoaderError` for a file that is not text."""
    return decode_text(path.read_bytes(), path.name)


def load_jsonl(data: bytes, name: str, source: str, max_documents: int | None = None) -> LoadResult:
    """BEIR corpus lines ``{"_id", "title", "text"}``: one document per line.

    Bad lines become warnings (with their line numbers) and the good lines still load. With
    ``max_documents``, loading stops at the document past it with `IngestLimitExceeded`.
    """
    text = decode_text(data, name)
    docs: list[LoadedDocument] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for number, line in jsonl_lines(text):
        try:
            # strict=False: raw control characters inside strings (a \v or \x1c that a scraper
            # left in a title) are kept rather than costing the whole record.
            row = json.loads(line, strict=False)
        except json.JSONDecodeError as exc:
            warnings.append(f"{name}:{number}: invalid JSON ({exc.msg}); line skipped")
            continue
        if not isinstance(row, dict) or "_id" not in row:
            warnings.append(f'{name}:{number}: expected an object with "_id"; line skipped')
            continue
        ext_id = str(row["_id"])
        body = normalise_text(str(row.get("text") or ""))
        title = " ".join(str(row.get("title") or "").split())
        if not body and not title:
            warnings.append(f"{name}:{number}: document {ext_id!r} has no text; line skipped")
            continue
        if ext_id in seen:
            warnings.append(f"{name}:{number}: duplicate _id {ext_id!r}; later line skipped")
            continue
        seen.add(ext_id)
        if max_documents is not None and len(docs) >= max_documents:
            raise too_many_documents(name, max_documents)
        docs.append(
            LoadedDocument(
                key=f"{source}#{ext_id}",
                title=title or ext_id,
                text=body or title,
                source=source,
                external_id=ext_id,
            )
        )
    if not docs:
        detail = f" ({warnings[0]})" if warnings else ""
        raise LoaderError(f"{name}: no loadable JSONL documents{detail}")
    return LoadResult(docs, warnings)


def load_bytes(
    name: str, data: bytes, source: str | None = None, *, limits: LoadLimits | None = None
) -> LoadResult:
    """Parse `data` by the suffix of `name`. ``source`` (default: ``name``) identifies it;
    ``limits`` bound what it may produce (`IngestLimitExceeded` past ``max_documents``)."""
    src = source or name
    suffix = Path(name).suffix.lower()
    if not data:
        raise LoaderError(f"{name}: the file is empty; nothing to index")
    if suffix in TEXT_SUFFIXES:
        return load_plain(data, name, src)
    if suffix in HTML_SUFFIXES:
        return load_html(data, name, src)
    if suffix == ".pdf":
        return load_pdf(data, name, src, limits)
    if suffix == ".jsonl":
        return load_jsonl(data, name, src, limits.max_documents if limits else None)
    if suffix in OFFICE_SUFFIXES:
        # imported here: the office loaders build on this module's types
        from tools.knowledge.office import load_office

        return load_office(suffix, data, name, src, limits or LoadLimits())
    raise LoaderError(
        f"{name}: unsupported file type {suffix or '(none)'!r}; supported: "
        + ", ".join(sorted(SUPPORTED_SUFFIXES))
    )


def read_file(path: Path, max_bytes: int) -> bytes:
    """Read `path` after checking it exists, is a file, and is at most `max_bytes` long.

    The size check uses `stat`, so an oversized file is refused without reading it.
    """
    if not path.exists():
        raise LoaderError(f"{path}: no such file or directory; check the path")
    if not path.is_file():
        raise LoaderError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise LoaderError(
            f"{path}: {size:,} bytes is above MAX_DOCUMENT_BYTES ({max_bytes:,}); split the file "
            "or raise MAX_DOCUMENT_BYTES"
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LoaderError(
            f"{path}: cannot be read ({exc.strerror}); check its permissions"
        ) from exc


def expand_paths(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files to ingest: each file as given, each folder's supported files (recursive, sorted).

    Missing paths and unsupported files given explicitly are yielded too, so the caller reports
    them as per-file errors; hidden files and folders inside a folder are skipped.
    """
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                if any(part.startswith(".") for part in rel):
                    continue
                if child.is_file() and child.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield child
        else:
            yield path
