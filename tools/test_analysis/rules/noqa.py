"""``# noqa`` suppression.

Semantics (flake8-compatible, documented in the package docstring):

- ``# noqa: <id>[, <id>...]`` suppresses the listed smell ids on that line. Ids that are not
  ours (``# noqa: E501``) suppress nothing of ours.
- A bare ``# noqa`` suppresses every smell on its line (``honor_bare_noqa=False`` turns that
  off for projects that sprinkle bare noqa for other linters).
- The comment must be on the finding's first line; for a finding about one statement (not a
  whole test or class) its last line works too, so a multi-line assertion can carry the
  comment where formatters put it. Test- and class-level smells take it on the ``def`` /
  ``class`` line only: a ``# noqa`` deep inside a body must not silence the whole test.
"""

from __future__ import annotations

import re

from tools.test_analysis.catalogue import ALL_SMELLS
from tools.test_analysis.parsing import ParsedFile
from tools.test_analysis.schemas import Finding

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[\w\-]+(?:[\s,]+[\w\-]+)*))?", re.IGNORECASE)
_HAS_NOQA = re.compile(r"#\s*noqa", re.IGNORECASE)
_SPLIT = re.compile(r"[\s,]+")

#: line -> None (bare noqa: everything) or the set of suppressed ids
NoqaMap = dict[int, frozenset[str] | None]


def noqa_map(parsed: ParsedFile) -> NoqaMap:
    """The suppressions of a file (empty, cheaply, when it has no noqa comment at all)."""
    if not _HAS_NOQA.search(parsed.content):
        return {}
    out: NoqaMap = {}
    for index, text in enumerate(parsed.lines):
        if "#" not in text:
            continue
        for match in _NOQA.finditer(text):
            codes = match.group("codes")
            line = index + 1
            if codes is None:
                out[line] = None
                break
            ids = frozenset(c.lower() for c in _SPLIT.split(codes) if c)
            previous = out.get(line, frozenset())
            if previous is not None:
                out[line] = previous | ids
    return out


def _suppressed(entry: frozenset[str] | None, smell_id: str, bare: bool) -> bool:
    if entry is None:
        return bare
    return smell_id in entry


def apply_noqa(parsed: ParsedFile, findings: list[Finding], *, bare: bool = True) -> list[Finding]:
    """``findings`` without those suppressed by ``# noqa`` comments of ``parsed``."""
    if not findings:
        return findings
    suppressions = noqa_map(parsed)
    if not suppressions:
        return findings
    kept: list[Finding] = []
    for f in findings:
        entry = suppressions.get(f.line, frozenset())
        if _suppressed(entry, f.smell, bare):
            continue
        scope = ALL_SMELLS[f.smell].scope if f.smell in ALL_SMELLS else False
        if not scope and f.end_line != f.line:
            entry = suppressions.get(f.end_line, frozenset())
            if _suppressed(entry, f.smell, bare):
                continue
        kept.append(f)
    return kept
