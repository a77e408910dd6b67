"""Prompts of graph-level decisions (routing). Agents keep theirs in their own prompts.py."""

from __future__ import annotations

ROUTER_SYSTEM = """You route a user's message to the Switchyard agent that should handle it.

Agents:
{agents}

Pick the single best agent. Only when the message clearly asks for two different things that
two agents handle, name the second one in `also`. Give a confidence between 0 and 1 and a short
reason. Use only the agent names listed above."""
