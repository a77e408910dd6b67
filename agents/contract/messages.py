"""Helpers over the conversation that every agent reads."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AnyMessage, HumanMessage


def last_user_text(messages: Sequence[AnyMessage]) -> str:
    """The text of the latest human message ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            content = message.content
            return content if isinstance(content, str) else str(content)
    return ""


def last_human(messages: Sequence[AnyMessage]) -> HumanMessage | None:
    """The latest human message, or None."""
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
