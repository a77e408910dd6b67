"""Errors as JSON (``{"error": {"status", "message", ...}}``) and the request body limit."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import redis.exceptions
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from tools.knowledge.schema import KnowledgeEngineError
from tools.operations import EngineNotOpen, OperationError

log = logging.getLogger("switchyard")


class FieldError(BaseModel):
    """One invalid field of a request."""

    field: str = Field(description="Dotted path of the field ('' for the body as a whole).")
    message: str


class ErrorDetail(BaseModel):
    """What went wrong, and (in the message) how to fix it."""

    status: int = Field(description="The HTTP status, repeated.")
    message: str = Field(description="What went wrong and the fix.")
    details: list[FieldError] | None = Field(None, description="Invalid fields (422).")
    dependency: str | None = Field(None, description="The unavailable dependency (503).")


class ErrorBody(BaseModel):
    """Every error answer: ``{"error": {"status", "message", ...}}``."""

    error: ErrorDetail


_MEANINGS = {
    400: "The request cannot be used as sent (e.g. an unsafe file path).",
    401: "Missing or unknown API key (only when API_KEYS is set).",
    403: "The operation is not allowed on this resource (e.g. assistants are read-only).",
    404: "Not found, or owned by another API key.",
    409: "Conflicts with the resource's state (e.g. a turn still running on the session).",
    413: "The body is above MAX_REQUEST_BYTES, or a part of it above its own limit (a file, "
    "an upload's documents, metadata, a run's input); the message names the setting.",
    422: "The body, a parameter or an option is invalid; `details` names the fields.",
    429: "Rate limit exceeded (see Retry-After), or a per-key quota (threads, active runs, "
    "documents); the message names the setting.",
    502: "The language model provider failed.",
    503: "A dependency (Redis, Postgres) is unavailable; see Retry-After and /health.",
    504: "The request took longer than its time limit.",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for these error statuses (all answer :class:`ErrorBody`)."""
    return {code: {"model": ErrorBody, "description": _MEANINGS[code]} for code in statuses}


#: What any endpoint behind the API key and the rate limit may answer.
COMMON_ERRORS = error_responses(401, 422, 429, 503)
#: A Server-Sent Events answer (documented as such, not as JSON).
SSE: dict[str, Any] = {
    "description": "Server-Sent Events: `event:` names the kind, `data:` is JSON.",
    "content": {
        "text/event-stream": {
            # one event: `event:` its kind, `data:` its JSON, `id:` when it can be resumed
            "schema": {
                "type": "object",
                "properties": {
                    "event": {"type": "string"},
                    "data": {"type": "string"},
                    "id": {"type": "string"},
                },
            }
        }
    },
}


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"status": status, "message": message, **extra}}, status)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    response = error_response(exc.status_code, str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def operation_error(request: Request, exc: Exception) -> JSONResponse:
    """An operation's refusal (tools.operations.OperationError): its status, its message.

    A route calls an operation and lets this answer; a missing engine is 503 like any outage.
    """
    assert isinstance(exc, OperationError)
    if isinstance(exc, EngineNotOpen):
        return error_response(exc.status, str(exc), dependency=exc.dependency)
    return error_response(exc.status, str(exc))


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [
        {
            "field": ".".join(str(p) for p in err.get("loc", ()) if p != "body"),
            "message": _message(err),
        }
        for err in exc.errors()
    ]
    summary = "; ".join(f"{d['field'] or 'body'}: {d['message']}" for d in details)
    return error_response(422, f"Invalid request: {summary}", details=details)


#: What each dependency holds, for the 503 message.
DEPENDENCIES = {
    "redis": "Redis (sessions, checkpoints, the run queue)",
    "postgres": "Postgres (the knowledge base, memory, domain data)",
    "engine": "A capability's engine (its component did not start: see /health)",
}


class DependencyUnavailable(Exception):
    """A dependency the request needs cannot be reached right now (answered 503)."""

    def __init__(self, dependency: str, cause: BaseException | str) -> None:
        self.dependency = dependency
        self.cause = cause if isinstance(cause, str) else f"{type(cause).__name__}: {cause}"
        # what callers see: a message we wrote, or only the class of an exception (its text
        # names internal hosts and sockets; the log has it)
        self.shown_cause = cause if isinstance(cause, str) else type(cause).__name__
        super().__init__(f"{dependency} unavailable ({self.cause})")


#: Redis errors that mean "unreachable".
REDIS_OUTAGES: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
)


def dependency_of(exc: BaseException) -> str | None:
    """Which dependency ``exc`` says is unreachable, or None when it is not an outage."""
    if isinstance(exc, DependencyUnavailable):
        return exc.dependency
    if isinstance(exc, EngineNotOpen):
        return "engine"
    if isinstance(exc, REDIS_OUTAGES):
        return "redis"
    if isinstance(exc, psycopg.OperationalError | KnowledgeEngineError):
        return "postgres"
    return None


async def unavailable_error(request: Request, exc: Exception) -> JSONResponse:
    """503 naming the dependency: one log line, no traceback (an outage is not a bug)."""
    dependency = dependency_of(exc) or "a dependency"
    cause = (
        exc.shown_cause
        if isinstance(exc, DependencyUnavailable)
        else str(exc)
        if isinstance(exc, KnowledgeEngineError)
        else f"{type(exc).__name__}"
    )
    log.warning("%s %s: %s is unavailable (%s)", request.method, request.url.path, dependency, exc)
    what = DEPENDENCIES.get(dependency, dependency)
    response = error_response(
        503,
        f"{what} is unavailable ({cause}); retry shortly. GET /health shows each dependency.",
        dependency=dependency,
    )
    response.headers["Retry-After"] = "5"
    return response


def _message(err: dict[str, Any]) -> str:
    """A validation error's message, with the decoder's reason for a body that is not JSON."""
    message = str(err.get("msg"))
    reason = (err.get("ctx") or {}).get("error")
    return f"{message}: {reason}" if err.get("type") == "json_invalid" and reason else message


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, f"Internal error ({type(exc).__name__}); see the server log.")
