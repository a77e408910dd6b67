"""Citations: the numbered sources an answer cites, one per document or per page of one.

A paged document (PDF pages, PPTX slides, XLSX sheets) is cited per page, so ``[n]`` tells the
reader where to look: its listing line reads ``[n] Title (source, p. N)`` (``slide N``,
``sheet NAME``).
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.knowledge.strategies import Hit
from tools.knowledge.types import page_label


@dataclass(frozen=True, slots=True)
class Citation:
    """A numbered source: ``[number]`` in the answer text refers to it.

    A source is a document, or one page of a paged document (a PDF page, a slide, a sheet:
    ``page``), so ``[n]`` says where the reader finds it. ``text`` is all retrieved text of it
    (its chunks in rank order); ``chunk_id`` is its best chunk."""

    number: int
    document_id: str
    title: str
    source: str
    chunk_id: str
    text: str
    page: str | None = None

    @property
    def label(self) -> str:
        """``Title (source)``, or ``Title (source, p. N)`` for a page."""
        where = page_label(self.page, self.source)
        place = f"{self.source}, {where}" if where else self.source
        return f"{self.title} ({place})"


def source_key(hit: Hit) -> tuple[str, str | None]:
    """What one citation number stands for: the hit's document, and its page when it has one."""
    page = getattr(hit, "page", None)
    return hit.document_id, page if isinstance(page, str) and page else None
