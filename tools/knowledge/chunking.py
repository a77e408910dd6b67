"""Structure-aware chunking: headings start a new chunk, paragraphs stay whole when they fit.

A chunk is a span ``[start, end)`` of the document text, so what was indexed can always be traced
back to the source and the properties (coverage, size, overlap) are checkable on offsets.

Rules, in order:
1. Markdown ATX (``# Title``), setext (``Title`` over ``====``) and reStructuredText
   (underlined, optionally overlined) headings open a new *section*; a chunk never spans two
   sections, and no overlap is carried across a heading (the next topic should not start with the
   tail of the previous one).
2. Inside a section, paragraphs (blank-line separated) are packed greedily up to ``chunk_size``
   characters. A paragraph is only split when it alone is longer than ``chunk_size``: first at
   sentence ends, then at word boundaries, and a single word longer than the limit is cut hard.
   A page break (``pages``: a PDF page, a slide, a sheet) also opens a new section, which keeps
   the heading in force but carries the new page: a chunk never spans two pages, and each chunk
   knows the page it came from.
3. Consecutive chunks of one section overlap by at most ``chunk_overlap`` characters: the next
   chunk starts at the earliest sentence start (else word start) inside the last
   ``chunk_overlap`` characters of the previous one, as long as its first piece still fits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ATX = re.compile(r"^\s{0,3}#{1,6}(\s+\S|\s*$)")
_ADORNMENT = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
#: Where a line ends (CommonMark: LF, CRLF, CR). Not ``str.splitlines()``, which also breaks
#: at "\v", "\f", "\x1c"-"\x1e", U+0085, U+2028 and U+2029: inside a line of a document (a
#: PDF's form feed, a separator a scraper left) they would make the text after them look like
#: a line of its own, e.g. a heading.
LINE_END = re.compile(r"\r\n|\r|\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: ``text == source[start:end]``; ``heading`` is its section's heading line,
    ``page`` the label of the page it lies on (None for a text without pages)."""

    index: int
    start: int
    end: int
    text: str
    heading: str | None
    page: str | None = None


def lines_of(text: str) -> list[str]:
    """The lines of ``text``, ended by `LINE_END` only (like ``str.splitlines()`` otherwise: no
    empty last line after a final line end)."""
    lines = LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def _line_spans(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` of every line of ``text``, its line end included (`LINE_END`)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for end in LINE_END.finditer(text):
        spans.append((pos, end.end()))
        pos = end.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return spans


def heading_starts(text: str) -> list[tuple[int, str]]:
    """Offsets where a heading begins (with the heading's title), outside fenced code blocks."""
    lines = _line_spans(text)
    out: list[tuple[int, str]] = []
    in_fence = False
    i = 0
    while i < len(lines):
        start, end = lines[i]
        line = text[start:end].rstrip("\r\n")
        if _FENCE.match(line):
            in_fence = not in_fence
            i += 1
            continue
        if in_fence:
            i += 1
            continue
        if _ATX.match(line):
            out.append((start, line.strip().lstrip("#").strip()))
            i += 1
            continue
        stripped = line.strip()
        nxt = text[lines[i + 1][0] : lines[i + 1][1]].rstrip("\r\n") if i + 1 < len(lines) else ""
        # Overlined RST title: adornment / title / adornment.
        if _ADORNMENT.match(line) and i + 2 < len(lines):
            after = text[lines[i + 2][0] : lines[i + 2][1]].rstrip("\r\n")
            if nxt.strip() and _ADORNMENT.match(after) and after.strip()[0] == stripped[0]:
                out.append((start, nxt.strip()))
                i += 3
                continue
        # Underlined title (setext / RST): a text line followed by an adornment at least as long.
        if stripped and not _ADORNMENT.match(line) and _ADORNMENT.match(nxt):
            if len(nxt.strip()) >= min(len(stripped), 3):
                out.append((start, stripped))
                i += 2
                continue
        i += 1
    return out


def _pieces(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into non-blank spans no longer than ``limit``, coarsest first."""
    spans: list[tuple[int, int]] = []
    pos = start
    for brk in _PARAGRAPH_BREAK.finditer(text, start, end):
        spans.append((pos, brk.start()))
        pos = brk.end()
    spans.append((pos, end))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        s, e = _trim(text, s, e)
        if s < e:
            out.extend(_split_long(text, s, e, limit))
    return out


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_long(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    if end - start <= limit:
        return [(start, end)]
    sentences: list[tuple[int, int]] = []
    pos = start
    for brk in _SENTENCE_END.finditer(text, start, end):
        sentences.append((pos, brk.start()))
        pos = brk.end()
    sentences.append((pos, end))
    out: list[tuple[int, int]] = []
    for s, e in sentences:
        s, e = _trim(text, s, e)
        if s >= e:
            continue
        if e - s <= limit:
            out.append((s, e))
            continue
        for word in _WORD.finditer(text, s, e):
            ws, we = word.span()
            # A single "word" above the limit (a URL, base64, a table row) is cut hard.
            out.extend((p, min(p + limit, we)) for p in range(ws, we, limit))
    return out


def _overlap_start(
    text: str, chunk_start: int, chunk_end: int, next_end: int, size: int, overlap: int
) -> int | None:
    """Where the next chunk starts inside the previous one, or None for no overlap."""
    if overlap <= 0:
        return None
    lo = max(chunk_start + 1, chunk_end - overlap, next_end - size)
    if lo >= chunk_end:
        return None
    for brk in _SENTENCE_END.finditer(text, max(chunk_start, lo - 8), chunk_end):
        if lo <= brk.end() < chunk_end:
            return brk.end()  # a whole sentence fits in the window: start there
    for word in _WORD.finditer(text, lo, chunk_end):
        if word.start() == lo and lo > 0 and not text[lo - 1].isspace():
            continue  # lo fell inside a word; its start is before the window
        return word.start()
    return None


def chunk_text(
    text: str,
    chunk_size: int,
    chunk_overlap: int,
    *,
    pages: Sequence[tuple[int, str]] = (),
) -> list[Chunk]:
    """Split ``text`` into :class:`Chunk` spans (see the module docstring for the rules).

    ``pages`` are ``(offset, label)`` where each page starts, in order (text before the first
    one has no page). Raises ValueError when the sizes are inconsistent (overlap must be
    smaller than the size).
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(
            f"chunk_overlap must be in [0, chunk_size), got {chunk_overlap} with size {chunk_size}"
        )
    heads = heading_starts(text)
    page_at = {pos: label for pos, label in pages if 0 <= pos < len(text)}
    bounds = sorted({0, len(text), *(pos for pos, _ in heads), *page_at})
    titles: dict[int, str | None] = {pos: title for pos, title in heads}
    chunks: list[Chunk] = []
    heading: str | None = None
    page: str | None = None
    for sec_start, sec_end in zip(bounds, bounds[1:], strict=False):
        page = page_at.get(sec_start, page)
        # a page break continues the section above it: its heading stays in force
        heading = titles.get(sec_start, heading)
        pieces = _pieces(text, sec_start, sec_end, chunk_size)
        cur_start: int | None = None
        for i, (piece_start, piece_end) in enumerate(pieces):
            if cur_start is None:
                cur_start = piece_start
            nxt = pieces[i + 1] if i + 1 < len(pieces) else None
            if nxt is not None and nxt[1] - cur_start <= chunk_size:
                continue  # the next piece still fits: keep packing
            chunks.append(_make(text, len(chunks), cur_start, piece_end, heading, page))
            cur_start = (
                None
                if nxt is None
                else _overlap_start(text, cur_start, piece_end, nxt[1], chunk_size, chunk_overlap)
            )
    return chunks


def _make(
    text: str, index: int, start: int, end: int, heading: str | None, page: str | None
) -> Chunk:
    return Chunk(
        index=index, start=start, end=end, text=text[start:end], heading=heading, page=page
    )
