"""The MCP client component: the tools of the MCP servers the operator configures.

Off by default: without MCP_CLIENT_SERVERS nothing is contacted, nothing is provided and
/health shows nothing. Otherwise the tools are loaded once, here (`tools.mcp_client`), and
provided to the agents (`RemoteTools`), which bind them when the graph is compiled (the coding
and analytics agents' ReAct loops). A refused address stops the start-up with a message naming
MCP_CLIENT_SERVERS; an unreachable server is skipped with a warning and shown by /health as an
error that does not make the process unhealthy (`required=False`).
"""

from __future__ import annotations

from app.components.base import Component, Components
from app.storage import Dependency
from tools.mcp_client import ServerStatus
from tools.mcp_client.remote import load_remote_tools
from tools.webhooks import WebhookGuard


def _dependency(status: ServerStatus) -> Dependency:
    if status.ok:
        return Dependency(
            f"mcp:{status.name}",
            "ok",
            f"mcp client, {len(status.tools)} tools",
            status.latency_ms,
            status.target,
            required=False,
        )
    return Dependency(
        f"mcp:{status.name}",
        "error",
        "mcp client",
        status.latency_ms,
        status.target,
        f"skipped at start-up: {status.error}",
        required=False,
    )


async def start_mcp_client(components: Components) -> None:
    """Load the configured servers' tools (none configured: nothing to do)."""
    settings = components.settings
    if not settings.mcp_client.servers:
        return
    guard = WebhookGuard(settings.webhooks.allowed_hosts)
    remote = await load_remote_tools(settings.mcp_client, guard)
    components.agents.provide(remote)
    for status in remote.servers:

        async def check(status: ServerStatus = status) -> Dependency:
            # what start-up found: the tools are loaded once, so a later answer changes nothing
            return _dependency(status)

        components.health.append(check)
    components.metrics["mcp_client"] = lambda: {
        "tools": len(remote.tools),
        "servers": {s.name: {"ok": s.ok, "tools": len(s.tools)} for s in remote.servers},
    }


#: The MCP client's part of the app: no operations or routes of its own.
COMPONENT = Component("mcp_client", start_mcp_client)
