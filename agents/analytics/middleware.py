"""Tool-error middleware: any exception a tool raises becomes a ToolMessage the model can use.

`format_tool_error(tool, exc, scope, catalogue)` names the tool, the kind of failure and how to
fix the call over the source the run reads (the demo's analytics.* or the connected database's
schemas and tables): refused SQL (the guard's reason, once; a write is not to be retried), a
timeout, a database error (with the table list for unknown
names), the database being unavailable, a bad `data` argument, invalid arguments, or anything
else. Messages are bounded and carry no credentials (URLs with passwords are redacted) and no
tracebacks. LangGraph control flow (interrupts, `Command` bubbling up) and cancellation are never
caught. The message's artifact carries the failure's code (`{"error": "unavailable"}` when the
database cannot be reached), so the answer can tell an outage from a bad call.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from langchain.agents.middleware import ToolCallRequest, wrap_tool_call
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from psycopg_pool import PoolTimeout
from pydantic import ValidationError

from tools.analytics.catalogue_file import Catalogue
from tools.analytics.context import progress
from tools.analytics.frame import DataError
from tools.analytics.guard import SQLRefused, WriteRefused
from tools.analytics.schema import TABLES
from tools.analytics.source import DEMO_SCOPE, Scope

MAX_ERROR_CHARS = 1500
#: The error code of a tool call that failed because the analytics database is unreachable.
UNAVAILABLE = "unavailable"
_SECRET_URL = re.compile(r"(\w+://[^:/@\s]*:)[^@\s]*@")


def _schema_hint(catalogue: Catalogue | None = None) -> str:
    """The readable tables with their columns: the demo's, or the connected database's."""
    if catalogue is None:
        return "; ".join(f"analytics.{t.name}({', '.join(t.column_names)})" for t in TABLES)
    return "; ".join(
        f"{t.key}({', '.join(c.name for c in t.visible_columns())})"
        for t in catalogue.visible_tables()
    )


def _where(scope: Scope) -> str:
    """The exposed schemas' tables as the fix hints name them (analytics.*, or shop.*, ...)."""
    return ", ".join(f"{s}.*" for s in scope.schemas)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _classify(
    exc: BaseException, scope: Scope = DEMO_SCOPE, catalogue: Catalogue | None = None
) -> tuple[str, str, str]:
    """(kind, detail, how to fix); the hints name `scope`'s schemas and `catalogue`'s tables."""
    if isinstance(exc, WriteRefused):
        return (
            "SQL refused",
            str(exc).removeprefix("SQL refused: "),
            "Do not try to change data: tell the user the analytics agent is read-only and "
            "offer to answer a question about the data instead.",
        )
    if isinstance(exc, SQLRefused):
        return (
            "SQL refused",
            str(exc).removeprefix("SQL refused: "),
            f"Rewrite it as one SELECT over {_where(scope)} tables "
            "with allowed functions, or call sql_generation_tool with the question.",
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return (
            "query timed out",
            _first_line(exc),
            "Aggregate more (GROUP BY), filter a "
            "shorter period, or avoid cross joins, then run it again.",
        )
    if isinstance(
        exc,
        psycopg.errors.UndefinedColumn
        | psycopg.errors.UndefinedTable
        | psycopg.errors.UndefinedFunction
        | psycopg.errors.SyntaxError
        | psycopg.errors.GroupingError
        | psycopg.errors.AmbiguousColumn
        | psycopg.errors.DatatypeMismatch
        | psycopg.errors.InvalidTextRepresentation
        | psycopg.errors.DivisionByZero,
    ):
        return (
            "the database rejected the SQL",
            _first_line(exc),
            f"Fix the SQL; the tables are: {_schema_hint(catalogue)}.",
        )
    if isinstance(
        exc, psycopg.errors.InsufficientPrivilege | psycopg.errors.ReadOnlySqlTransaction
    ):
        schemas = ", ".join(scope.schemas)
        return ("not permitted", _first_line(exc), f"Only reading schema {schemas} is allowed.")
    if is_outage(exc):
        return (
            "the analytics database is unavailable",
            _first_line(exc),
            "Tell the user the data cannot be reached right now; do not guess figures.",
        )
    if isinstance(exc, psycopg.Error):
        return ("database error", _first_line(exc), "Fix the SQL or simplify the query.")
    if isinstance(exc, DataError):
        return (
            "bad data argument",
            str(exc),
            "Pass the result_id returned by sql_execution_tool (or 'latest').",
        )
    if isinstance(exc, ValidationError):
        fields = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
        return ("invalid arguments", fields, "Call the tool again with valid arguments.")
    if isinstance(exc, ValueError | KeyError | TypeError):
        return ("invalid argument", _first_line(exc), "Correct the argument and call again.")
    return (
        f"unexpected {type(exc).__name__}",
        _first_line(exc),
        "Try a simpler request, or answer with what the other tools returned.",
    )


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` means the database cannot be reached (not that the SQL was wrong)."""
    if isinstance(exc, psycopg.errors.QueryCanceled):  # a timeout: an OperationalError too
        return False
    return isinstance(exc, psycopg.OperationalError | PoolTimeout)


def error_code(exc: BaseException) -> str:
    """A short code of a tool failure: `unavailable` for an outage, else `failed`."""
    return UNAVAILABLE if is_outage(exc) else "failed"


def format_tool_error(
    tool: str, exc: BaseException, scope: Scope = DEMO_SCOPE, catalogue: Catalogue | None = None
) -> str:
    """A bounded, credential-free message for the model: what failed and how to fix it, over
    the source the run reads (`scope`, and `catalogue` for a connected database)."""
    return _format(tool, *_classify(exc, scope, catalogue))


def _format(tool: str, kind: str, detail: str, fix: str) -> str:
    text = f"Error in {tool}: {kind}: {detail}\nHow to fix: {fix}"
    text = _SECRET_URL.sub(r"\1***@", text)
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 3] + "..."
    return text


Handler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def _report(request: ToolCallRequest, tool: str, kind: str, code: str) -> None:
    """A progress event closing the tool's `start` when it fails (stage `error`)."""
    writer = getattr(getattr(request, "runtime", None), "stream_writer", None)
    if callable(writer):
        writer(progress(tool, "error", f"Failed: {kind}", error=code))


@wrap_tool_call(name="AnalyticsToolErrors")
async def analytics_tool_errors(
    request: ToolCallRequest, handler: Handler
) -> ToolMessage | Command[Any]:
    """Run the tool; turn any exception it raises into an error ToolMessage.

    Errors the ToolNode already turned into messages (arguments that fail the tool's schema)
    are rewritten into the same format, so the model sees one kind of error message.
    """
    call = request.tool_call
    context = getattr(getattr(request, "runtime", None), "context", None)
    scope = getattr(context, "scope", None) or DEMO_SCOPE
    catalogue = getattr(context, "catalogue", None)
    try:
        result = await handler(request)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # noqa: BLE001 - every tool failure becomes a message
        content = format_tool_error(call["name"], exc, scope, catalogue)
        code, kind = error_code(exc), _classify(exc)[0]
    else:
        if not (isinstance(result, ToolMessage) and result.status == "error"):
            return result
        if str(result.content).startswith(f"Error in {call['name']}: "):
            return result
        content = _format(
            call["name"],
            "invalid arguments",
            str(result.content).strip(),
            "Call the tool again with arguments that match its schema.",
        )
        code, kind = "invalid_arguments", "invalid arguments"
    _report(request, call["name"], kind, code)
    return ToolMessage(
        content=content,
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
        artifact={"error": code},
    )
