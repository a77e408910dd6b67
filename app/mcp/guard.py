"""What ``/mcp`` checks of a POST before the MCP SDK reads it, and the JSON-RPC errors it answers.

The SDK parses a body with :func:`json.loads` and catches only ``JSONDecodeError``: a body
nested a thousand levels deep (2 KB of brackets) raised ``RecursionError`` through it, a 500
with a traceback. :func:`read_message` measures the nesting on the bytes first (no recursion:
strings are cut out, the brackets left are counted), refuses a body deeper than MAX_JSON_DEPTH
and only then parses it; anything that is not JSON (or not UTF-8, which the SDK answered 500
too), or a string that is not text (a lone surrogate, as the REST API refuses), is a parse
error. Both are answered 400 with a JSON-RPC error (:func:`jsonrpc_error`), as the SDK answers
a body it cannot parse.

The body, once read, is handed to the SDK by :func:`replay` (an ASGI ``receive`` that gives
the same bytes again).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Message, Receive

from app.bodies import lone_surrogate_at, unportable_number_at

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: A server error of the implementation-defined range: the request was refused (rate limit).
REFUSED = -32000

#: A JSON string (escapes included): its brackets are text, not nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
#: ``{}`` read as ``[]`` (only the nesting matters), and every byte but a bracket dropped.
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class BadMessage(ValueError):
    """A body that is not a JSON-RPC message /mcp reads: its JSON-RPC code and why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def nesting_depth(body: bytes, limit: int) -> int:
    """How deep arrays and objects nest in ``body`` (counting stops past ``limit``).

    Strings are cut out and every other byte but the brackets dropped; each pass then removes
    the innermost pairs (one level: ``bytes.replace`` does not rescan what it made), and the
    passes that removed something are the depth. Unbalanced brackets stop it early: the parser
    refuses them.
    """
    brackets = _STRING.sub(b"", body).translate(_AS_SQUARE, _NOT_BRACKETS)
    if brackets.count(b"[") <= limit:
        limit = brackets.count(b"[")  # no deeper than that: count exactly, cheaply
    depth = 0
    while brackets and depth <= limit:
        inner = brackets.replace(b"[]", b"")
        if len(inner) == len(brackets):
            break
        brackets, depth = inner, depth + 1
    return depth


def read_message(body: bytes, max_depth: int) -> Any:
    """``body`` parsed (BadMessage when it nests deeper than ``max_depth`` or is not JSON)."""
    if nesting_depth(body, max_depth) > max_depth:
        raise BadMessage(
            INVALID_REQUEST,
            f"Invalid request: the JSON nests deeper than {max_depth} levels (MAX_JSON_DEPTH).",
        )
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8
        raise BadMessage(PARSE_ERROR, f"Parse error: {exc}") from None
    where = lone_surrogate_at(message, "message")
    if where is not None:  # valid JSON, but not text: no answer naming it could be encoded
        raise BadMessage(
            PARSE_ERROR,
            f"Parse error: {where} holds a lone surrogate (\\ud800-\\udfff), which is not "
            "text; send valid Unicode.",
        )
    return message


def request_id(message: Any) -> str | int | None:
    """The id of a JSON-RPC request (None for a notification or something else)."""
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def unportable_at(message: Any) -> tuple[bool, str] | None:
    """Where ``message`` holds NaN, Infinity or an integer beyond 64 bits (the SDK turns the
    first two into null, silently): (whether it is in a tool call's arguments, the problem)."""
    params = message.get("params") if isinstance(message, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if method_of(message) == "tools/call" and arguments is not None:
        problem = unportable_number_at(arguments, "arguments")
        if problem is not None:
            return True, problem
    problem = unportable_number_at(message, "message")
    return None if problem is None else (False, problem)


def method_of(message: Any) -> str | None:
    found = message.get("method") if isinstance(message, dict) else None
    return found if isinstance(found, str) else None


def jsonrpc_error(
    status: int,
    code: int,
    message: str,
    *,
    request: str | int | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A JSON-RPC error answered with HTTP ``status`` (the error also carries ``status``, as
    the REST API's errors do)."""
    body = {
        "jsonrpc": "2.0",
        "id": request,
        "error": {"code": code, "message": message, "status": status},
    }
    return JSONResponse(body, status, headers=headers)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (already read) once, then waits on ``receive``."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
