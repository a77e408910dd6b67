"""The test-analysis agent's section of the graph state (its stage nodes fill it in)."""

from __future__ import annotations

from typing import TypedDict


class AnalysisSection(TypedDict, total=False):
    """The test-analysis agent's working state within a run."""
