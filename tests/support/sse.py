"""Reading a Server-Sent Events answer in tests."""

from __future__ import annotations

import json
from typing import Any


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Every ``(event, data)`` of an SSE body, in order (comments and pings skipped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields.get("data") or "{}")))
    return events
