"""Tools from other MCP servers for Switchyard's agents (off unless MCP_CLIENT_SERVERS is set).

`loaded` (what the agents read) imports no MCP SDK; `remote` (the loader, for the app's
component) does.
"""

from __future__ import annotations

from tools.mcp_client.loaded import McpServerRefused, RemoteTools, ServerStatus, remote_tools_of

__all__ = ["McpServerRefused", "RemoteTools", "ServerStatus", "remote_tools_of"]
