"""The knowledge agent's section of the graph state (its stage nodes fill it in)."""

from __future__ import annotations

from typing import TypedDict


class KnowledgeSection(TypedDict, total=False):
    """The knowledge agent's working state within a turn."""
