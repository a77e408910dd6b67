"""Pure helpers of the LLM review: batching tests, the structured output schema, validation.

The graph's ``review_with_llm`` node sends one batch (``batch_size`` test functions, 5 by
default) per ``Send`` task. Batches are deterministic for a given input, and each carries a
``batch_id`` derived from its content, so a resumed run can tell finished batches apart.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.test_analysis.catalogue import SMELLS
from tools.test_analysis.parsing import ParsedFile
from tools.test_analysis.schemas import Finding, Source
from tools.test_analysis.templates import generic_suggestion

__all__ = [
    "DroppedFinding",
    "LLMBatch",
    "LLMReview",
    "LLMReviewFinding",
    "LLMTestUnit",
    "MalformedLLMOutput",
    "ReviewValidation",
    "batch_tests_for_llm",
    "estimate_tokens",
    "parse_llm_json",
    "review_json_schema",
    "validate_llm_review",
]


class LLMTestUnit(BaseModel):
    """One test function as the LLM sees it (source with absolute line numbers)."""

    file: str
    qualname: str
    line: int = Field(description="Line of the def.")
    start_line: int = Field(description="First line, decorators included.")
    end_line: int
    source: str


class LLMBatch(BaseModel):
    """Up to ``batch_size`` tests reviewed in one LLM call."""

    batch_id: str
    index: int
    tests: list[LLMTestUnit]

    def render(self) -> str:
        """The tests as numbered source listings (line numbers are the file's own)."""
        parts: list[str] = []
        for unit in self.tests:
            parts.append(
                f"### {unit.file} :: {unit.qualname} (lines {unit.start_line}-{unit.end_line})"
            )
            for offset, text in enumerate(unit.source.split("\n")):
                parts.append(f"{unit.start_line + offset:>5} | {text}")
            parts.append("")
        return "\n".join(parts)

    @property
    def estimated_tokens(self) -> int:
        """Rough prompt size of :meth:`render` (4 characters per token)."""
        return estimate_tokens(self.render())


def estimate_tokens(text: str) -> int:
    """Rough token count for planning (about 4 characters per token for code)."""
    return math.ceil(len(text) / 4)


def batch_tests_for_llm(
    parsed_files: Iterable[ParsedFile],
    batch_size: int = 5,
    *,
    max_lines_per_test: int = 150,
) -> list[LLMBatch]:
    """Group the tests of ``parsed_files`` (in file, then line order) into batches.

    A test longer than ``max_lines_per_test`` is cut there (with a marker line) so one huge
    test cannot blow a prompt; files that did not parse contribute nothing.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    units: list[LLMTestUnit] = []
    for parsed in parsed_files:
        if not parsed.ok:
            continue
        for test in parsed.tests:
            start, end = test.start_line, test.end_line
            cut = min(end, start + max_lines_per_test - 1)
            source = parsed.segment(start, cut)
            if cut < end:
                source += f"\n# ... ({end - cut} more lines not shown)"
            units.append(
                LLMTestUnit(
                    file=parsed.path,
                    qualname=test.qualname,
                    line=test.line,
                    start_line=start,
                    end_line=end,
                    source=source,
                )
            )
    batches: list[LLMBatch] = []
    for index, offset in enumerate(range(0, len(units), batch_size)):
        chunk = units[offset : offset + batch_size]
        digest = hashlib.blake2b(digest_size=8)
        for unit in chunk:
            digest.update(f"{unit.file}\0{unit.qualname}\0{unit.start_line}\0".encode())
            digest.update(unit.source.encode("utf-8", "surrogatepass"))
        batches.append(LLMBatch(batch_id=digest.hexdigest(), index=index, tests=chunk))
    return batches


# --------------------------------------------------------------------------- output schema


class LLMReviewFinding(BaseModel):
    """One finding as the LLM must return it."""

    model_config = ConfigDict(extra="ignore")

    file: str = Field(description="File path exactly as given in the listing header.")
    line: int = Field(description="Line number from the listing where the smell is.")
    end_line: int | None = Field(None, description="Last line of the smell, if several.")
    smell: str = Field(description="A smell id from the catalogue.")
    message: str = Field(description="One sentence: what is wrong here.")
    confidence: float = Field(description="0.0-1.0: how sure you are that this is the smell.")
    suggestion: str | None = Field(None, description="A concrete fix, one or two sentences.")


class LLMReview(BaseModel):
    """The LLM's whole answer for one batch."""

    findings: list[LLMReviewFinding] = Field(default_factory=list)


def review_json_schema() -> dict[str, Any]:
    """JSON schema of :class:`LLMReview` with the smell ids as an enum (for the prompt or
    ``with_structured_output``)."""
    schema = LLMReview.model_json_schema()
    props = schema["$defs"]["LLMReviewFinding"]["properties"]
    props["smell"]["enum"] = sorted(SMELLS)
    props["confidence"]["minimum"] = 0.0
    props["confidence"]["maximum"] = 1.0
    return schema


class MalformedLLMOutput(ValueError):
    """The model's answer is not the JSON object asked for; the node should retry once."""


class DroppedFinding(BaseModel):
    """An LLM finding that validation rejected, and why."""

    reason: str
    item: Any


class ReviewValidation(BaseModel):
    """Accepted findings (as :class:`Finding`, ``source=llm``) and the dropped ones."""

    findings: list[Finding]
    dropped: list[DroppedFinding]


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_llm_json(text: str) -> dict[str, Any]:
    """The JSON object in ``text`` (code fences allowed); :class:`MalformedLLMOutput` if none."""
    match = _FENCE.match(text)
    body = match.group(1) if match else text.strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise MalformedLLMOutput(f"the model's answer is not JSON: {text[:120]!r}") from None
        try:
            value = json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise MalformedLLMOutput(f"the model's answer is not valid JSON ({exc})") from None
    if isinstance(value, list):
        value = {"findings": value}
    if not isinstance(value, dict) or not isinstance(value.get("findings", []), list):
        raise MalformedLLMOutput(
            'the model must answer {"findings": [...]}; got ' + type(value).__name__
        )
    return value


def validate_llm_review(
    review: LLMReview | dict[str, Any] | str, batch: LLMBatch, min_confidence: float = 0.6
) -> ReviewValidation:
    """Turn the model's answer for ``batch`` into findings, dropping what cannot be trusted.

    Dropped: items that do not fit the schema, unknown smell ids, files not in the batch,
    lines outside the batch's tests, confidence outside [0, 1] or below ``min_confidence``.
    Lines of test-level smells (unknown-test, verbose-test, ...) are moved to the test's
    ``def`` line, where the rule engine reports them, so synthesis can deduplicate them.
    Raises :class:`MalformedLLMOutput` when the answer is not JSON of the right shape.
    """
    if isinstance(review, str):
        raw_items: list[Any] = parse_llm_json(review).get("findings", [])
    elif isinstance(review, LLMReview):
        raw_items = [item.model_dump() for item in review.findings]
    elif isinstance(review, dict):
        raw_items = review.get("findings", [])
        if not isinstance(raw_items, list):
            raise MalformedLLMOutput('"findings" must be a list')
    else:
        raise MalformedLLMOutput(f"unexpected review type {type(review).__name__}")
    findings: list[Finding] = []
    dropped: list[DroppedFinding] = []
    for raw in raw_items:
        try:
            item = LLMReviewFinding.model_validate(raw)
        except ValidationError as exc:
            dropped.append(
                DroppedFinding(reason=f"invalid item: {exc.errors()[0]['msg']}", item=raw)
            )
            continue
        reason, finding = _accept(item, batch, min_confidence)
        if finding is None:
            dropped.append(DroppedFinding(reason=reason, item=raw))
        else:
            findings.append(finding)
    return ReviewValidation(findings=findings, dropped=dropped)


def _accept(
    item: LLMReviewFinding, batch: LLMBatch, min_confidence: float
) -> tuple[str, Finding | None]:
    entry = SMELLS.get(item.smell.strip().lower())
    if entry is None:
        return f"unknown smell id {item.smell!r}", None
    if not 0.0 <= item.confidence <= 1.0:
        return f"confidence {item.confidence} outside [0, 1]", None
    if item.confidence < min_confidence:
        return f"confidence {item.confidence} below {min_confidence}", None
    in_file = [u for u in batch.tests if u.file == item.file]
    if not in_file:
        return f"file {item.file!r} is not in this batch", None
    unit = next((u for u in in_file if u.start_line <= item.line <= u.end_line), None)
    if unit is None:
        return f"line {item.line} is outside the batch's tests in {item.file}", None
    if entry.scope:
        line, end_line = unit.line, unit.end_line
    else:
        line = item.line
        end_line = min(max(item.end_line or line, line), unit.end_line)
    return "", Finding(
        file=item.file,
        line=line,
        end_line=end_line,
        smell=entry.id,
        severity=entry.severity,
        message=item.message.strip()[:500] or entry.fires_when,
        suggestion=(item.suggestion or "").strip()[:1000] or generic_suggestion(entry.id),
        confidence=item.confidence,
        source=Source.LLM,
    )
