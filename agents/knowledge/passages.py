"""A retrieved chunk as answerable passages: sentences, and lists kept whole with their lead-in.

The extractive answer quotes passages, never fragments: a numbered procedure or a bullet list is
one passage (its items stay together and in order, with the sentence that introduces it, such as
"First steps:"), and every passage knows the section heading it sits under, because in runbooks,
policies and FAQs the heading often says what the text below it answers ("How do I connect to
the VPN?" over "Install the WireGuard client ...").

Pure and deterministic: markdown / reStructuredText structure is read from the text only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from agents.knowledge.text import sentences
from tools.knowledge.chunking import lines_of

#: A list item: ``- x``, ``* x``, ``+ x``, ``• x``, ``1. x``, ``1) x`` (indented up to six spaces).
LIST_ITEM = re.compile(r"^[ \t]{0,6}(?:[-*+•]|\d{1,3}[.)])[ \t]+(?=\S)")
_ATX = re.compile(r"^\s{0,3}#{1,6}(?:\s+(.*?))?\s*#*\s*$")
_ADORNMENT = re.compile(r"^\s*([=\-~^\"'`*+#:.])\1{2,}\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
#: Items kept of one list, characters of one item, characters of one sentence.
MAX_ITEMS, MAX_ITEM_CHARS, MAX_SENTENCE_CHARS = 15, 400, 600

Kind = Literal["sentence", "list", "code"]


@dataclass(frozen=True, slots=True)
class Passage:
    """One quotable unit of a chunk.

    ``kind`` is ``sentence``, ``list`` (``items`` in order, each with its marker) or ``code``
    (a fenced block, in ``items`` line by line); ``lead`` is the sentence that introduces a list
    or code block (ending with ``:``), ``heading`` the section heading above the passage (the
    chunk's own, or the one it was cut from), ``section`` its section's number within the chunk
    and ``position`` its order within the chunk.
    """

    kind: Kind
    text: str
    heading: str
    section: int
    position: int
    lead: str = ""
    items: tuple[str, ...] = field(default_factory=tuple)

    @property
    def words_text(self) -> str:
        """Everything the passage says (lead-in and items included)."""
        return " ".join([self.lead, self.text, *self.items]).strip()


@dataclass
class _Builder:
    heading: str
    section: int = 0
    out: list[Passage] = field(default_factory=list)
    paragraph: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    item_kind: Kind = "list"

    def add(self, kind: Kind, text: str, **extra: object) -> None:
        self.out.append(
            Passage(kind, text, self.heading, self.section, len(self.out), **extra)  # type: ignore[arg-type]
        )

    def flush_paragraph(self) -> None:
        if not self.paragraph:
            return
        for sentence in sentences(" ".join(self.paragraph)):
            if len(sentence) <= MAX_SENTENCE_CHARS:
                self.add("sentence", sentence)
        self.paragraph.clear()

    def flush_items(self) -> None:
        if not self.items:
            return
        items = tuple(i if len(i) <= MAX_ITEM_CHARS else i[: MAX_ITEM_CHARS - 1] + "…"
                      for i in self.items[:MAX_ITEMS])  # fmt: skip
        lead = ""
        previous = self.out[-1] if self.out else None
        if (
            previous is not None
            and previous.section == self.section
            and previous.kind == "sentence"
            and previous.text.endswith(":")
        ):
            lead = self.out.pop().text  # "First steps:" introduces the list below it
        self.add(self.item_kind, "", lead=lead, items=items)
        self.items.clear()

    def new_section(self, heading: str) -> None:
        self.flush_paragraph()
        self.flush_items()
        self.heading = heading
        self.section += 1


def split_passages(text: str, heading: str = "") -> list[Passage]:
    """The passages of ``text`` (one chunk), under ``heading`` until the text names its own.

    Headings (ATX ``#``, setext and reStructuredText underlines) are not passages: they only
    set the heading of what follows. A list item's continuation lines join the item; a fenced
    code block is one ``code`` passage.
    """
    lines = lines_of(text)  # not splitlines(): U+2028, "\f", ... do not end a line
    build = _Builder(heading.strip())
    in_fence = False
    blank = False  # the previous line was blank (a list goes on only with an item or indent)
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if in_fence:
            if _FENCE.match(line):
                in_fence = False
                build.flush_items()
                build.item_kind = "list"
            else:
                build.items.append(line.rstrip())
            i += 1
            continue
        if _FENCE.match(line):
            build.flush_paragraph()
            build.flush_items()
            in_fence, build.item_kind = True, "code"
            i += 1
            continue
        atx = _ATX.match(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if atx:
            build.new_section((atx.group(1) or "").strip())
            i += 1
            continue
        if (
            stripped
            and _ADORNMENT.match(nxt)
            and not _ADORNMENT.match(line)
            and not LIST_ITEM.match(line)
        ):
            build.new_section(stripped)  # setext / reStructuredText heading (underlined)
            i += 2
            continue
        if _ADORNMENT.match(line):  # an overline or a stray rule
            i += 1
            continue
        if not stripped:
            build.flush_paragraph()
            blank = True
            i += 1
            continue
        if LIST_ITEM.match(line):
            build.flush_paragraph()
            build.items.append(stripped)  # after a blank line too: a loose list is one list
        elif build.items and (line[:1].isspace() or not blank):
            build.items[-1] = f"{build.items[-1]} {stripped}"  # an item's continuation line
        else:
            build.flush_items()
            build.paragraph.append(stripped)
        blank = False
        i += 1
    build.flush_paragraph()
    build.flush_items()
    return [p for p in build.out if p.kind != "sentence" or p.text]
