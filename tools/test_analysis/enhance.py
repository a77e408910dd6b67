"""Enhancement: a concrete fix suggestion and a short code example for every finding.

Rule findings carry a ``context`` (the assertion's text, the test's name, the fields, ...)
that fills the per-smell templates of :mod:`templates`. LLM findings carry none, so context is
rebuilt from the source when the parsed file is at hand (the enclosing test's name, the text
of the reported line); a template that still lacks a field falls back to the generic text.

Confidence: enhancement does not change how sure we are that the smell is there; it keeps
the detection confidence from synthesis (rule confidence, LLM confidence, or their noisy-OR
when both agree) and only clamps it to [0, 1].
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping

from tools.test_analysis.parsing import ParsedFile
from tools.test_analysis.schemas import Finding, Source
from tools.test_analysis.templates import TEMPLATES, generic_suggestion, render

__all__ = ["enhance", "enhance_one"]


class _TestIndex:
    """Enclosing-test lookup by line for one file."""

    def __init__(self, parsed: ParsedFile) -> None:
        spans = sorted((t.start_line, t.end_line, t.name) for t in parsed.tests)
        self.starts = [s[0] for s in spans]
        self.spans = spans

    def test_at(self, line: int) -> str | None:
        i = bisect.bisect_right(self.starts, line) - 1
        if i >= 0 and self.spans[i][0] <= line <= self.spans[i][1]:
            return self.spans[i][2]
        return None


def _context(f: Finding, parsed: ParsedFile | None, index: dict[str, _TestIndex]) -> dict[str, str]:
    ctx = dict(f.context)
    ctx.setdefault("file", f.file)
    ctx.setdefault("line", str(f.line))
    if parsed is not None and parsed.ok:
        if "test" not in ctx:
            idx = index.get(f.file)
            if idx is None:
                idx = index[f.file] = _TestIndex(parsed)
            name = idx.test_at(f.line)
            if name is not None:
                ctx["test"] = name
                ctx.setdefault("test_plain", name)
        if f.source is Source.LLM:
            text = parsed.line_text(f.line).strip()
            if text:
                for field in ("assertion", "call", "first"):
                    ctx.setdefault(field, text)
                if f.smell == "magic-number":
                    numbers = [n for n in _NUMBER.findall(text) if n not in _SMALL]
                    if numbers:
                        ctx.setdefault("numbers", ", ".join(numbers[:3]))
                        ctx.setdefault("number", numbers[0])
                        ctx.setdefault("constant", "VALUE")
                        ctx.setdefault("fixed", text.replace(numbers[0], "EXPECTED_VALUE", 1))
    return ctx


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_SMALL = {str(n) for n in range(11)} | {"100"}


def enhance_one(
    f: Finding, parsed: ParsedFile | None = None, *, _index: dict[str, _TestIndex] | None = None
) -> Finding:
    """A copy of ``f`` with a concrete ``suggestion`` and ``example``."""
    template = TEMPLATES.get(f.smell)
    if template is None:
        return f
    ctx = _context(f, parsed, {} if _index is None else _index)
    suggestion = render(template.suggestion, ctx)
    if f.source is Source.LLM and f.suggestion and f.suggestion != generic_suggestion(f.smell):
        suggestion = f.suggestion  # the model's fix is specific to the code it read
    example = render(template.example, ctx) if template.example else None
    return f.model_copy(
        update={
            "suggestion": suggestion or f.suggestion or template.generic,
            "example": example or f.example or template.generic_example,
            "confidence": min(max(f.confidence, 0.0), 1.0),
        }
    )


def enhance(
    findings: Iterable[Finding], parsed_files: Mapping[str, ParsedFile] | None = None
) -> list[Finding]:
    """:func:`enhance_one` for every finding (``parsed_files`` maps path -> ParsedFile)."""
    index: dict[str, _TestIndex] = {}
    files = parsed_files or {}
    return [enhance_one(f, files.get(f.file), _index=index) for f in findings]
