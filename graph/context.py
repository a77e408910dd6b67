"""Per-run knobs, passed as LangGraph's runtime context (`context=` on invoke/stream).

Every field defaults to None, meaning "use the setting"; a caller (the API, Studio) may override
one for one run without touching the process-wide Settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from config import Settings


@dataclass
class RunContext:
    """Overrides for one run."""

    enable_reflection: bool | None = None
    enable_document_grading: bool | None = None
    enable_response_grading: bool | None = None
    enable_query_transformation: bool | None = None
    enable_reranking: bool | None = None
    reflection_max_iterations: int | None = None
    retrieval_top_k: int | None = None
    analysis_default_mode: Literal["rules-only", "llm-only", "hybrid"] | None = None
    analysis_allow_downgrade: bool | None = None

    def resolve(self, settings: Settings, name: str) -> Any:
        """The override for `name` if one is set, else the setting."""
        value = getattr(self, name, None)
        return getattr(settings, name) if value is None else value


def knob(context: RunContext | None, settings: Settings, name: str) -> Any:
    """`context.resolve(settings, name)`, tolerating runs without a context."""
    return (context or RunContext()).resolve(settings, name)
