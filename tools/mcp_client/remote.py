"""The tools of the MCP servers the operator configures (MCP_CLIENT_SERVERS), loaded once.

`load_remote_tools` contacts each configured server at start-up, one after the other:

- its address is vetted first with the outgoing-webhook guard (`tools.webhooks.WebhookGuard`:
  public addresses only unless the host is in WEBHOOK_ALLOWED_HOSTS); a refused address stops
  the start-up (:class:`McpServerRefused` names MCP_CLIENT_SERVERS), because a configuration
  that points the server at an internal address is an operator's mistake to fix, not to skip;
- its tools are listed within MCP_CLIENT_CONNECT_TIMEOUT_SECONDS through the official SDK's
  streamable HTTP client (`langchain-mcp-adapters`); a server that does not resolve, answer or
  list in time is skipped with a warning and shown as an error by /health;
- every tool is named ``<server>_<tool>`` so it cannot clash with Switchyard's own tools, and
  at most MCP_CLIENT_MAX_TOOLS are kept in all.

Every connection (listing and each later call) goes through the guard's pinned client: resolved
once, vetted, connected to the vetted address, no redirects, no proxy from the environment. A
call is bounded by MCP_CLIENT_CALL_TIMEOUT_SECONDS; a failure or a timeout is an error message to
the model (an `isError` result), never an exception that ends the agent's run.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

import httpx
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult
from langchain_mcp_adapters.sessions import StreamableHttpConnection
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.types import CallToolResult, TextContent

from tools.mcp_client.loaded import McpServerRefused, RemoteTools, ServerStatus
from tools.mcp_client.settings import McpClientSettings, McpServerConfig
from tools.webhooks import WebhookGuard, WebhookRejected, parse_target

log = logging.getLogger(__name__)

SETTING = "MCP_CLIENT_SERVERS"
#: Characters of a remote failure's message given to the model or shown by /health.
MAX_ERROR_CHARS = 300


def server_target(url: str) -> str:
    """The server's URL as it may be shown: scheme, host and port (never path or query)."""
    try:
        target = parse_target(url)
    except WebhookRejected:
        return "<invalid url>"
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"{target.scheme}://{host}:{target.port}"


def _short(exc: BaseException) -> str:
    # anyio wraps a transport failure in an ExceptionGroup: its first leaf says what happened
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return text[:MAX_ERROR_CHARS]


def _client_factory(guard: WebhookGuard, call_timeout: float) -> Callable[..., httpx.AsyncClient]:
    """The SDK's HTTP clients, built on the guard's pinned transport (vetted addresses only)."""

    def make(
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        client = guard.client(timeout_seconds=call_timeout)
        client.headers.update(headers or {})
        if timeout is not None:
            client.timeout = timeout
        if auth is not None:
            client.auth = auth
        return client

    return make


class BoundedCalls:
    """A tool-call interceptor: one call within the timeout; a failure becomes an error result."""

    def __init__(self, server: str, call_timeout: float) -> None:
        self.server = server
        self.call_timeout = call_timeout

    async def __call__(
        self,
        request: MCPToolCallRequest,
        handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]],
    ) -> MCPToolCallResult:
        try:
            async with asyncio.timeout(self.call_timeout):
                return await handler(request)
        except Exception as exc:  # a remote failure is the model's to read, not the run's end
            if isinstance(exc, TimeoutError):
                reason = (
                    f"no answer within {self.call_timeout:g} s (MCP_CLIENT_CALL_TIMEOUT_SECONDS)"
                )
            else:
                reason = _short(exc)
            log.warning("MCP tool %s_%s failed: %s", self.server, request.name, reason)
            text = f"the MCP server {self.server!r} could not run {request.name!r}: {reason}"
            return CallToolResult(content=[TextContent(type="text", text=text)], isError=True)


async def load_remote_tools(settings: McpClientSettings, guard: WebhookGuard) -> RemoteTools:
    """Contact every configured server (see the module docstring); raises
    :class:`McpServerRefused` for an address the guard refuses."""
    tools: list[BaseTool] = []
    statuses: list[ServerStatus] = []
    for name, server in settings.servers.items():
        status, found = await _load_server(name, server, settings, guard)
        room = max(settings.max_tools - len(tools), 0)
        if len(found) > room:
            log.warning(
                "MCP server %r offers %d tools; %d kept (MCP_CLIENT_MAX_TOOLS=%d)",
                name, len(found), room, settings.max_tools,
            )  # fmt: skip
            found = found[:room]
            status = replace(status, tools=[t.name for t in found])
        tools.extend(found)
        statuses.append(status)
    return RemoteTools(tools, statuses)


async def _vet(name: str, url: str, guard: WebhookGuard) -> str | None:
    """Refuse a disallowed address (raises); the reason a host is unreachable, or None."""
    where = f"{SETTING}[{name!r}] ({server_target(url)})"
    try:
        target = parse_target(url)
    except WebhookRejected as exc:
        raise McpServerRefused(f"{where}: {exc}") from None
    literal = _is_literal(target.host)
    if not literal:
        try:
            await guard.resolver(target.host, target.port)
        except OSError as exc:
            return f"the host does not resolve ({exc})"
    try:
        await guard.vetted_addresses(target.host, target.port)
    except WebhookRejected as exc:
        raise McpServerRefused(
            f"{where} is refused: {exc}. Point {SETTING} at a public address, or add the "
            "host to WEBHOOK_ALLOWED_HOSTS (the outgoing allow-list) if it is yours."
        ) from None
    return None


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


async def _load_server(
    name: str, server: McpServerConfig, settings: McpClientSettings, guard: WebhookGuard
) -> tuple[ServerStatus, list[BaseTool]]:
    target = server_target(server.url)
    started = time.perf_counter()
    unreachable = await _vet(name, server.url, guard)
    connection = StreamableHttpConnection(
        transport="streamable_http",
        url=server.url,
        headers={key: value.get_secret_value() for key, value in server.headers.items()},
        timeout=settings.call_timeout_seconds,
        sse_read_timeout=settings.call_timeout_seconds,
        httpx_client_factory=_client_factory(guard, settings.call_timeout_seconds),
    )
    found: list[BaseTool] = []
    if unreachable is None:
        try:
            async with asyncio.timeout(settings.connect_timeout_seconds):
                found = await load_mcp_tools(
                    None,
                    connection=connection,
                    server_name=name,
                    tool_name_prefix=True,
                    tool_interceptors=[BoundedCalls(name, settings.call_timeout_seconds)],
                )
        except TimeoutError:
            unreachable = (
                f"no answer within {settings.connect_timeout_seconds:g} s "
                "(MCP_CLIENT_CONNECT_TIMEOUT_SECONDS)"
            )
        except Exception as exc:  # an unreachable server is skipped, not a failed start-up
            unreachable = _short(exc)
    ms = round((time.perf_counter() - started) * 1000, 2)
    if unreachable is not None:
        log.warning("MCP server %r (%s) skipped: %s", name, target, unreachable)
        return ServerStatus(name, target, False, [], unreachable, ms), []
    log.info("MCP server %r (%s): %d tools", name, target, len(found))
    return ServerStatus(name, target, True, [t.name for t in found], None, ms), found
