"""``/mcp``: the MCP server (the official SDK's streamable HTTP transport) over the operations.

:class:`McpEndpoint` is an ASGI app the API routes ``/mcp`` to. Each HTTP request is
authenticated first, with the REST API's keys and answers (:func:`app.security.identify`,
:func:`app.security.refusal`): a request without a valid key gets the same 401 JSON before any
MCP message is read. The caller is then kept in the request's scope, where the tool handlers
find it (the SDK hands each handler the HTTP request its message came in), and the request goes
to the SDK's :class:`StreamableHTTPSessionManager`.

**Stateless, JSON answers.** Every POST carries its own messages and is answered with JSON: no
MCP session lives in one process, so any API replica serves any request (like the REST API and
the thread ids), nothing is lost when a replica restarts, and a proxy sees plain
request/response traffic. The tools need no server-to-client requests (sampling, elicitation),
which a session would be for; a conversation's state is the ``chat`` tool's ``session_id``, a
thread in Redis like any other.

**Per tool call** (:meth:`McpEndpoint.call_tool`): the rate limit counts the call like one REST
request (``RATE_LIMIT_PER_MINUTE``, per key); the arguments are validated by the operation's
input model; the operation runs with the caller's owner (``OperationContext(owner=...)``, the
scope of every row, document and thread it touches). Every refusal is a tool error
(:mod:`app.mcp.tools`). The body limit (``MAX_REQUEST_BYTES``) holds as for every request: the
app's middleware and the transport's own limit.

The tools are read from the open components' registry at each ``tools/list``: adding an
operation to a capability's ``OPERATIONS`` (or a component to the list) adds the tool.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from pydantic import AnyUrl
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from app.errors import error_response
from app.mcp import tools
from app.mcp.graph_operations import app_engines
from app.operations import context_for
from app.owner_metrics import OWNER_SCOPE_KEY
from app.security import Caller, identify, presented_key, refusal
from app.services import Services
from config import Settings
from tools.operations import NotFound, OperationContext, OperationRegistry

log = logging.getLogger(__name__)

#: Where the authenticated caller of an MCP request is kept in its ASGI scope.
CALLER_SCOPE_KEY = "switchyard.mcp_caller"
INSTRUCTIONS = (
    "Switchyard's capabilities as tools: search and ask the knowledge base, query analytics, "
    "check and run Python code in a sandbox, analyze test files, manage the user's tasks, meals "
    "and events, and chat with the multi-agent assistant (chat keeps a session_id). Every call "
    "acts for the API key's owner."
)


class McpEndpoint:
    """The ``/mcp`` ASGI app: key check, then the SDK's transport; the tool handlers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: Server[Any, Request] = Server("switchyard", instructions=INSTRUCTIONS)
        self._manager: StreamableHTTPSessionManager | None = None
        self.server.list_tools()(self.list_tools)
        self.server.call_tool(validate_input=False)(self.call_tool)
        self.server.list_resources()(self.list_resources)
        self.server.read_resource()(self.read_resource)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The transport's task group, for the app's lifespan (a new manager per lifespan: the
        SDK's runs once)."""
        manager = StreamableHTTPSessionManager(
            self.server,
            stateless=True,
            json_response=True,
            max_request_body_size=self.settings.api.max_request_bytes,
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        who = identify(request, presented_key(request))
        if who is None:  # before any MCP message is read
            denied = refusal(self.settings)
            response = error_response(denied.status_code, str(denied.detail))
            for name, value in (denied.headers or {}).items():
                response.headers[name] = value
            await response(scope, receive, send)
            return
        scope[OWNER_SCOPE_KEY] = who.owner  # counted for this owner (`app.owner_metrics`)
        scope[CALLER_SCOPE_KEY] = who
        if self._manager is None:
            response = error_response(503, "The MCP server is not running (app not started).")
            await response(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)

    # --- the caller of the current message ---------------------------------------------------

    def _request(self) -> Request:
        request = self.server.request_context.request
        if request is None:  # the HTTP transport always passes it
            raise RuntimeError("an MCP message without its HTTP request")
        return request

    def _caller(self) -> tuple[Caller, Services]:
        request = self._request()
        who: Caller = request.scope[CALLER_SCOPE_KEY]
        services: Services = request.app.state.services
        return who, services

    def _context(self, who: Caller, services: Services) -> OperationContext:
        return replace(context_for(who, services), engines=app_engines(services))

    async def _count(self, who: Caller) -> None:
        """One tool call (or resource read) against the caller's rate limit (429 detail)."""
        limiter = getattr(self._request().app.state, "rate_limiter", None)
        if limiter is not None:
            await limiter.check(who.client)

    def _registry(self, services: Services) -> OperationRegistry:
        return tools.served(services.operations)

    # --- handlers ----------------------------------------------------------------------------

    async def list_tools(self) -> list[types.Tool]:
        _, services = self._caller()
        return [tools.tool(op) for op in self._registry(services)]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        who, services = self._caller()
        try:
            op = self._registry(services).get(name)
        except NotFound:
            return tools.error(f"Unknown tool {name!r}; tools/list shows the tools.")
        try:
            await self._count(who)
            payload = op.parse(arguments)
            output = await op(self._context(who, services), payload)
        except Exception as exc:  # every refusal and failure is the tool's error, never a 500
            return tools.error(tools.error_message(name, exc, op.input_model))
        return tools.result(output)

    async def list_resources(self) -> list[types.Resource]:
        _, services = self._caller()
        return [tools.resource(op) for op in tools.resource_operations(self._registry(services))]

    async def read_resource(self, uri: AnyUrl) -> str:
        who, services = self._caller()
        op = tools.resource_operation(self._registry(services), str(uri))
        if op is None:
            raise ValueError(f"Unknown resource {str(uri)!r}; resources/list shows them.")
        try:
            await self._count(who)
            output = await op(self._context(who, services), {})
        except Exception as exc:
            # a JSON-RPC error with the tool error's message (resources have no isError)
            raise ValueError(tools.error_message(op.name, exc)) from exc
        return output.model_dump_json()
