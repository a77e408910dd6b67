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

**Per HTTP request** (:meth:`McpEndpoint.__call__`), before the SDK sees it: the key (401);
the method (only POST: a stateless server offers no stream of its own, so GET, which would
open one that only pings, and DELETE, which ends a session there is none of, are 405 with
``Allow: POST``); the body, at most ``MAX_REQUEST_BYTES`` (413), nested at most
``MAX_JSON_DEPTH`` deep and parsed (400 with a JSON-RPC error otherwise: :mod:`app.mcp.guard`);
then the request counts against the key's rate limit (``RATE_LIMIT_PER_MINUTE``) like one REST
request, whatever its method. Over the limit, a ``tools/call`` is answered with a tool error
and a ``resources/read`` with a JSON-RPC error (both in the protocol, the session goes on);
any other request is answered 429 with ``Retry-After`` and a JSON-RPC error.

**Per tool call** (:meth:`McpEndpoint.call_tool`): the arguments are validated by the
operation's input model (unknown ones refused, naming the accepted ones; NaN and Infinity,
which JSON does not have, refused); the operation runs with the caller's owner
(``OperationContext(owner=...)``, the scope of every row, document and thread it touches).
Every refusal is a tool error (:mod:`app.mcp.tools`).

The tool and resource lists are built once per registry (:func:`app.mcp.tools.catalogue`) and
rebuilt when an operation is registered: adding an operation to a capability's ``OPERATIONS``
(or a component to the list) adds the tool.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from pydantic import AnyUrl
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from app.errors import error_response
from app.mcp import guard, tools
from app.mcp.graph_operations import app_engines
from app.operations import context_for
from app.owner_metrics import OWNER_SCOPE_KEY
from app.security import Caller, RateLimiter, identify, presented_key, refusal
from app.services import Services
from config import Settings
from tools.operations import NotFound, OperationContext, OperationRegistry

log = logging.getLogger(__name__)

#: Where the authenticated caller of an MCP request is kept in its ASGI scope.
CALLER_SCOPE_KEY = "switchyard.mcp_caller"
#: Where a request over the rate limit keeps its refusal, for the handler that answers it.
REFUSAL_SCOPE_KEY = "switchyard.mcp_refusal"
#: Where a tool call keeps what is wrong with its arguments' numbers (NaN, which the SDK would
#: turn into null), for the handler that answers it.
UNPORTABLE_SCOPE_KEY = "switchyard.mcp_unportable"
#: Methods whose refusal is answered in the protocol (a tool error, a JSON-RPC error).
ANSWERED_IN_PROTOCOL = frozenset({"tools/call", "resources/read"})
INSTRUCTIONS = (
    "Switchyard's capabilities as tools: search and ask the knowledge base, query analytics, "
    "check and run Python code in a sandbox, analyze test files, manage the user's tasks, meals "
    "and events, and chat with the multi-agent assistant (chat keeps a session_id). Every call "
    "acts for the API key's owner."
)


class McpEndpoint:
    """The ``/mcp`` ASGI app: key check, method, body and rate limit, then the SDK's transport;
    the tool and resource handlers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: Server[Any, Request] = Server("switchyard", instructions=INSTRUCTIONS)
        self._manager: StreamableHTTPSessionManager | None = None
        #: (registry id, registry version) -> what is listed of it
        self._catalogue: tuple[tuple[int, int], tools.Catalogue] | None = None
        self.server.list_tools()(self.list_tools)
        self.server.call_tool(validate_input=False)(self.call_tool)
        self.server.list_resources()(self.list_resources)
        self.server.read_resource()(self.read_resource)

    @asynccontextmanager
    async def running(self, services: Services | None = None) -> AsyncIterator[None]:
        """The transport's task group, for the app's lifespan (a new manager per lifespan: the
        SDK's runs once); the tool list of ``services`` is built before the first request."""
        if services is not None:
            self.catalogue(services)
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
        if request.method != "POST":
            await self._not_allowed(request.method)(scope, receive, send)
            return
        if self._manager is None:
            response = error_response(503, "The MCP server is not running (app not started).")
            await response(scope, receive, send)
            return
        refused = await self._count(request, who)  # every request, whatever it holds
        body = await request.body()  # at most MAX_REQUEST_BYTES (413: app.bodies)
        early = self._screen(scope, body, refused)
        if early is not None:
            await early(scope, receive, send)
            return
        await self._manager.handle_request(scope, guard.replay(body, receive), send)

    def _screen(self, scope: Scope, body: bytes, refused: HTTPException | None) -> Response | None:
        """The answer to a request refused before the SDK reads it, or None: hand it on (with
        the refusal its handler answers in the protocol kept in ``scope``)."""
        try:
            message = guard.read_message(body, self.settings.api.max_json_depth)
        except guard.BadMessage as exc:
            if refused is None:
                return guard.jsonrpc_error(400, exc.code, str(exc))
            message = None
        ident = guard.request_id(message)
        if refused is not None:
            if guard.method_of(message) not in ANSWERED_IN_PROTOCOL:
                return guard.jsonrpc_error(
                    refused.status_code, guard.REFUSED, str(refused.detail), request=ident,
                    headers=refused.headers,
                )  # fmt: skip
            scope[REFUSAL_SCOPE_KEY] = refused
        unportable = guard.unportable_at(message)
        if unportable is not None:
            in_arguments, problem = unportable
            if not in_arguments:  # not a tool's argument: the message itself is refused
                message_error = f"Invalid request: {problem}."
                return guard.jsonrpc_error(400, guard.INVALID_REQUEST, message_error, request=ident)
            scope[UNPORTABLE_SCOPE_KEY] = f"Invalid arguments: {problem}."
        return None

    @staticmethod
    def _not_allowed(method: str) -> Any:
        return guard.jsonrpc_error(
            405,
            guard.INVALID_REQUEST,
            f"Method Not Allowed: /mcp takes POST only (this stateless server opens no stream "
            f"for {method}; every answer comes with its request).",
            headers={"Allow": "POST"},
        )

    @staticmethod
    async def _count(request: Request, who: Caller) -> HTTPException | None:
        """One request against the caller's rate limit: its refusal (429), or None."""
        limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
        if limiter is None:
            return None
        try:
            await limiter.check(who.client)
        except HTTPException as exc:
            return exc
        return None

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

    def _refusal(self) -> HTTPException | None:
        refused: HTTPException | None = self._request().scope.get(REFUSAL_SCOPE_KEY)
        return refused

    def _context(self, who: Caller, services: Services) -> OperationContext:
        return replace(context_for(who, services), engines=app_engines(services))

    def catalogue(self, services: Services) -> tools.Catalogue:
        """What is listed: built once per registry, again when an operation is registered."""
        operations = services.operations
        key = (id(operations), operations.version)
        if self._catalogue is None or self._catalogue[0] != key:
            self._catalogue = key, tools.catalogue(tools.served(operations))
        return self._catalogue[1]

    def _registry(self, services: Services) -> OperationRegistry:
        return self.catalogue(services).registry

    # --- handlers ----------------------------------------------------------------------------

    async def list_tools(self) -> list[types.Tool]:
        _, services = self._caller()
        return self.catalogue(services).tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        who, services = self._caller()
        refused = self._refusal()
        if refused is not None:
            return tools.error(tools.error_message(name, refused))
        try:
            op = self._registry(services).get(name)
        except NotFound:
            return tools.error(f"Unknown tool {name!r}; tools/list shows the tools.")
        unportable: str | None = self._request().scope.get(UNPORTABLE_SCOPE_KEY)
        if unportable is not None:  # the SDK gave them as null
            return tools.error(unportable)
        try:
            payload = op.parse(arguments)
            output = await op(self._context(who, services), payload)
        except Exception as exc:  # every refusal and failure is the tool's error, never a 500
            return tools.error(tools.error_message(name, exc, op.input_model))
        return tools.result(output)

    async def list_resources(self) -> list[types.Resource]:
        _, services = self._caller()
        return self.catalogue(services).resources

    async def read_resource(self, uri: AnyUrl) -> list[ReadResourceContents]:
        who, services = self._caller()
        op = self.catalogue(services).by_uri.get(str(uri))
        if op is None:
            raise ValueError(f"Unknown resource {str(uri)!r}; resources/list shows them.")
        refused = self._refusal()
        try:
            if refused is not None:
                raise refused
            output = await op(self._context(who, services), {})
        except Exception as exc:
            # a JSON-RPC error with the tool error's message (resources have no isError)
            raise ValueError(tools.error_message(op.name, exc)) from exc
        return [ReadResourceContents(output.model_dump_json(), mime_type=tools.JSON_MIME)]
