"""What the MCP client loaded at start-up: the remote tools and each server's status.

Kept apart from the loader (`remote.py`, which imports the MCP SDK and with it Starlette) so
that agents can read the tools without importing the web stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.tools import BaseTool

from tools.operations import EngineNotOpen, Engines


class McpServerRefused(RuntimeError):
    """A configured MCP server's address may not be called (the message names the fix)."""


@dataclass(frozen=True)
class ServerStatus:
    """What start-up found at one configured server (for /health and the log)."""

    name: str
    target: str
    ok: bool
    tools: list[str]
    error: str | None = None
    latency_ms: float | None = None


class RemoteTools:
    """The tools loaded from the configured MCP servers, and what each server answered."""

    NOT_OPEN = "no MCP client tools are loaded in this process (see MCP_CLIENT_SERVERS)"

    def __init__(self, tools: Sequence[BaseTool], servers: Sequence[ServerStatus]) -> None:
        self.tools: list[BaseTool] = list(tools)
        self.servers: list[ServerStatus] = list(servers)


def remote_tools_of(engines: Engines) -> list[BaseTool]:
    """The loaded remote tools of ``engines`` (the agents' services), or none (the default)."""
    try:
        return list(engines.engine(RemoteTools).tools)
    except EngineNotOpen:
        return []
