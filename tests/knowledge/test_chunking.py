"""Chunking: coverage, size and overlap on any text (hypothesis), structure on real examples."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.knowledge.chunking import chunk_text, heading_starts, lines_of

# Text with the shapes that matter: words of varied length, sentence ends, blank lines,
# markdown headings, an occasional very long "word", unicode.
_piece = st.one_of(
    st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=30),
    st.sampled_from([". ", "! ", "? ", "\n", "\n\n", "\n\n# Heading\n\n", "\n\n## Sub\n", "  "]),
    st.text(alphabet="xyz", min_size=50, max_size=400),
    st.text(min_size=1, max_size=10),
)
texts = st.lists(_piece, min_size=0, max_size=60).map("".join)


def _non_space_positions(text: str) -> set[int]:
    return {i for i, ch in enumerate(text) if not ch.isspace()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, size=st.integers(20, 300), overlap_ratio=st.floats(0, 0.9))
def test_chunks_cover_all_content_within_size_and_overlap(
    text: str, size: int, overlap_ratio: float
) -> None:
    overlap = int(size * overlap_ratio)
    chunks = chunk_text(text, size, overlap)
    covered: set[int] = set()
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end], "a chunk is an exact span of the text"
        assert 0 < len(chunk.text) <= size, "every chunk is non-empty and within the size"
        assert not chunk.text[0].isspace() and not chunk.text[-1].isspace(), "chunks are trimmed"
        covered.update(range(chunk.start, chunk.end))
    assert _non_space_positions(text) <= covered, "every non-space character is in some chunk"
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert nxt.start > prev.start, "chunks advance"
        shared = prev.end - nxt.start
        assert shared <= overlap, "overlap never exceeds chunk_overlap"
        if shared > 0:
            assert nxt.heading == prev.heading, "no overlap is carried across a heading"
    assert [c.index for c in chunks] == list(range(len(chunks)))


@settings(max_examples=150, deadline=None)
@given(
    paragraphs=st.lists(
        st.text(alphabet="abcdef ghij.", min_size=1, max_size=120).map(str.strip).filter(bool),
        min_size=1,
        max_size=12,
    )
)
def test_paragraphs_that_fit_are_never_split(paragraphs: list[str]) -> None:
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, 150, 30)
    pos = 0
    for para in paragraphs:
        start = text.index(para, pos)
        end = start + len(para)
        pos = end
        assert any(c.start <= start and end <= c.end for c in chunks), para


def test_long_paragraph_splits_at_sentences_with_overlap() -> None:
    sentences = [f"Sentence number {i} talks about topic {i}." for i in range(40)]
    text = " ".join(sentences)
    chunks = chunk_text(text, 200, 60)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.endswith("."), "splits fall on sentence ends"
    overlaps = [a.end - b.start for a, b in zip(chunks, chunks[1:], strict=False)]
    assert all(0 < o <= 60 for o in overlaps), overlaps


def test_headings_start_new_chunks_markdown_setext_and_rst() -> None:
    text = (
        "Intro text before any heading.\n\n"
        "# First\n\nAlpha body.\n\n"
        "Second\n======\n\nBeta body.\n\n"
        "=====\nThird\n=====\n\nGamma body.\n\n"
        "```\n# not a heading inside a fence\n```\n"
    )
    chunks = chunk_text(text, 1000, 100)
    assert [c.heading for c in chunks] == [None, "First", "Second", "Third"]
    assert chunks[1].text.startswith("# First")
    assert "# not a heading" in chunks[3].text
    assert [t for _, t in heading_starts(text)] == ["First", "Second", "Third"]


def test_word_longer_than_chunk_is_cut_hard() -> None:
    chunks = chunk_text("x" * 250, 100, 10)
    assert [len(c.text) for c in chunks] == [100, 100, 50]


def test_empty_and_whitespace_give_no_chunks() -> None:
    assert chunk_text("", 100, 10) == []
    assert chunk_text(" \n\n \t", 100, 10) == []


def test_bad_sizes_are_rejected_with_the_rule() -> None:
    with pytest.raises(ValueError, match="chunk_overlap must be in"):
        chunk_text("text", 100, 100)
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        chunk_text("text", 0, 0)


#: What str.splitlines() breaks at that does not end a line of a document (CommonMark ends lines
#: at LF, CRLF and CR only).
NOT_LINE_ENDS = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", NOT_LINE_ENDS, ids=lambda c: f"U+{ord(c):04X}")
def test_only_line_ends_make_lines_so_text_after_a_separator_is_no_heading(char: str) -> None:
    text = f"# Guide\n\nSome intro{char}# Not a heading{char}more words.\n\nSecond paragraph.\n"
    assert heading_starts(text) == [(0, "Guide")]
    assert {c.heading for c in chunk_text(text, 30, 0)} == {"Guide"}
    assert lines_of(f"a{char}b\r\nc\rd\ne\n") == [f"a{char}b", "c", "d", "e"]
    assert lines_of("") == [] and lines_of("x") == ["x"] and lines_of("x\n\n") == ["x", ""]
