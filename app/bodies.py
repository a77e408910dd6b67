"""Request bodies: a size limit that answers 413, and JSON that is well-formed Unicode.

- :class:`BodySizeLimit` refuses a body above MAX_REQUEST_BYTES with 413 before it is read
  into memory: at once for a declared ``Content-Length``, and as soon as a chunked body
  crosses the limit (FastAPI answers an error while reading the body with 400 unless it is an
  ``HTTPException``, so the limit raises one).
- :class:`StrictJSONRoute` decodes JSON bodies strictly: bytes that are not UTF-8, and
  strings holding a lone surrogate (``"\\ud800"`` is valid JSON but not Unicode text, and
  would fail later, when a response or a log line encodes it), are a 422 naming the field;
  so are integers outside 64 bits and NaN/Infinity (the checkpoint serializer and JSON clients
  cannot take them).
- :class:`PrivateNetworkAccess` answers Chrome's private-network preflights (with CORS on).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_response


def too_large_message(max_bytes: int) -> str:
    return (
        f"Request body exceeds the limit of {max_bytes} bytes (MAX_REQUEST_BYTES); send fewer "
        "or smaller files, or raise MAX_REQUEST_BYTES."
    )


class BodyTooLarge(HTTPException):
    """A body crossed the limit while it was being read."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, too_large_message(max_bytes))


class BodySizeLimit:
    """Reject request bodies above ``max_bytes`` with 413 before they are read into memory."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(413, too_large_message(self.max_bytes))(scope, receive, send)
            return
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, limited_receive, send)


class PrivateNetworkAccess:
    """Answer Chrome's Private Network Access preflights (``Access-Control-Request-Private-
    Network: true``): a page served from the internet (LangGraph Studio) may then call this
    server on a private address. Installed only with CORS_ORIGINS, outside the CORS layer,
    which answers the preflight itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = (
            scope["type"] == "http"
            and scope.get("method") == "OPTIONS"
            and dict(scope.get("headers") or []).get(b"access-control-request-private-network")
            == b"true"
        )
        if not asked:
            await self.app(scope, receive, send)
            return

        async def allow(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                headers.append((b"access-control-allow-private-network", b"true"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, allow)


def lone_surrogate_at(
    value: Any, path: str = "body", *, lenient: frozenset[str] = frozenset()
) -> str | None:
    """The path of the first string (or key) in ``value`` holding a lone surrogate; strings at
    a ``lenient`` path (``body.files[].content``: list indices written ``[]``) are skipped."""
    stack: list[tuple[Any, str, str]] = [(value, path, path)]
    while stack:
        item, where, shape = stack.pop()
        if isinstance(item, str):
            if shape not in lenient and _has_surrogate(item):
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                if _has_surrogate(key):
                    return f"{where} (a key)"
                stack.append((child, f"{where}.{key}", f"{shape}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]", f"{shape}[]") for i, child in enumerate(item))
    return None


INT64 = (-(2**63), 2**63 - 1)


def unportable_number_at(value: Any, path: str = "body") -> str | None:
    """(The path of) the first number in ``value`` that JSON data cannot carry portably: an
    integer outside 64 bits (no store or client here takes it), or NaN/Infinity (which
    Python's parser accepts, but JSON does not have)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and not INT64[0] <= item <= INT64[1]:
            return f"{where} holds an integer outside the 64-bit range; send it as a string"
        if isinstance(item, float) and (item != item or item in (math.inf, -math.inf)):
            return f"{where} holds NaN or Infinity, which JSON does not have"
        if isinstance(item, dict):
            stack.extend((child, f"{where}.{key}") for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class StrictJSONRequest(Request):
    """A request whose JSON body must be UTF-8 and well-formed Unicode."""

    #: Fields whose text may hold lone surrogates: the endpoint reports them itself.
    lenient: frozenset[str] = frozenset()

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            raw = await self.body()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                # FastAPI answers a JSONDecodeError with 422 naming the decoder's reason.
                raise json.JSONDecodeError(
                    f"the body is not UTF-8 ({exc.reason} at byte {exc.start})", "", 0
                ) from None
            data = json.loads(text)
            where = lone_surrogate_at(data, lenient=self.lenient)
            if where is not None:
                raise json.JSONDecodeError(
                    f"{where} holds a lone surrogate (\\ud800-\\udfff), which is not text; send "
                    "valid Unicode",
                    text,
                    0,
                )
            problem = unportable_number_at(data)
            if problem is not None:
                raise json.JSONDecodeError(problem, text, 0)
            self._json = data
        return self._json


class StrictJSONRoute(APIRoute):
    """An API route that reads its JSON body through :class:`StrictJSONRequest`."""

    request_class: type[StrictJSONRequest] = StrictJSONRequest

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        request_class = self.request_class

        async def strict(request: Request) -> Response:
            return await handler(request_class(request.scope, request.receive))

        return strict


def strict_json_route(*lenient: str) -> type[StrictJSONRoute]:
    """A :class:`StrictJSONRoute` that lets lone surrogates through at the ``lenient`` paths
    (e.g. ``body.files[].content``, where undecodable text is a finding, not an error)."""
    request_class = type(
        "LenientJSONRequest", (StrictJSONRequest,), {"lenient": frozenset(lenient)}
    )
    return type("LenientJSONRoute", (StrictJSONRoute,), {"request_class": request_class})
