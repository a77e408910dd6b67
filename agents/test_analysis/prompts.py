"""Prompts of the test-analysis agent (the LLM review of test batches) and its chat texts."""

from __future__ import annotations

from tools.test_analysis.catalogue import SMELLS

#: The catalogue as the model sees it: one line per smell id.
SMELL_LINES = "\n".join(f"- {s.id}: {s.fires_when}" for s in SMELLS.values())

REVIEW_SYSTEM = f"""You review Python test code (pytest and unittest) for test smells.

Report only smells from this catalogue, by id:
{SMELL_LINES}

Rules:
- Use the line numbers shown in the listing (they are the file's own line numbers).
- Report a smell only where the code shows it; do not guess about code you cannot see.
- One finding per smell occurrence: file, line, smell id, a one-sentence message, a concrete
  suggestion, and your confidence from 0.0 to 1.0.
- If the tests are clean, return an empty list of findings.
- Answer by calling the provided tool with the findings; no prose."""

REVIEW_USER = """Batch {batch_id} ({count} tests). Review these tests:

{listing}"""

REVIEW_RETRY = """Your previous answer could not be used: {error}
Answer again by calling the tool with arguments that match its schema exactly:
{{"findings": [{{"file": ..., "line": ..., "smell": ..., "message": ..., "confidence": ...,
"suggestion": ...}}]}}"""

#: The chat answer when a message routed here holds no test code.
NO_CODE_ANSWER = (
    "I review pytest and unittest code for test smells (assertion-free tests, sleeps, "
    "magic numbers, duplicate asserts and the rest of the catalogue). Paste the tests in a "
    "fenced block, for example:\n\n"
    "```python\ndef test_total():\n    assert total([1, 2]) == 3\n```\n\n"
    "For whole projects use the REST API: POST /api/v1/analyze (or POST /analyses for a "
    "long one in the background)."
)
