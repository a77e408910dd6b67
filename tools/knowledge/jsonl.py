"""JSON Lines records, split as every reader of a BEIR set or a labelled set must split them.

The corpus loader (`tools.knowledge.loaders.load_jsonl`), the BEIR queries reader
(`tools.knowledge.metrics.read_queries`) and the retrieval bench share this one helper, so a
record one of them keeps whole none of them cuts.
"""

from __future__ import annotations

from collections.abc import Iterator


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    r"""The records of JSON Lines ``text`` with their 1-based line numbers, blank lines left out.

    A record ends at "\n" only (a "\r" right before it is dropped: CRLF files). Not
    ``str.splitlines()``, which also breaks at "\r", "\v", "\f", "\x1c"-"\x1e", U+0085, U+2028 and
    U+2029: valid JSON strings hold the last three as they are, and the others raw where a
    reader accepts control characters (``json.loads(strict=False)``); splitting there cuts a
    record in two. Read files for it with `tools.knowledge.loaders.read_jsonl_text` (no newline
    translation either)."""
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield number, line
