"""Tools from other MCP servers for Switchyard's agents (off unless MCP_CLIENT_SERVERS is set)."""

from __future__ import annotations

from tools.mcp_client.remote import McpServerRefused, RemoteTools, ServerStatus, remote_tools_of

__all__ = ["McpServerRefused", "RemoteTools", "ServerStatus", "remote_tools_of"]
