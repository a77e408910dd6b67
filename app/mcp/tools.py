"""Operations as MCP tools and resources: definitions, results and errors, with no code per tool.

- A tool per served operation (:func:`served`: the open components' registry plus the app's
  :data:`~app.mcp.graph_operations.GRAPH_OPERATIONS`): its name, description, input schema
  (the operation's input model) and output schema (its output model), annotated read-only when
  it only reads.
- A result is the output model as ``structuredContent`` plus a short text rendering (the
  answer's text when it has one, then the JSON, capped): clients that read only text get it.
- Every refusal is a tool error (``isError``) with a message, never a JSON-RPC or HTTP error:
  invalid arguments (the input model's validation), an :class:`OperationError` (its status;
  a missing engine names its dependency), an ``HTTPException`` of the app (quota, rate limit),
  an outage (the dependency, as the REST 503 words it), or a failure (its class; the log has
  the traceback).
- A resource per read-only operation that needs no arguments (the document list, the KPI
  catalogue, the caller's tasks, ...): ``switchyard://<capability>/<operation>``, read as the
  operation's JSON (``application/json``, as listed).
- :func:`catalogue`: the tools and resources of a registry, built once (their JSON schemas are
  generated once per model): ``tools/list`` and ``resources/list`` answer from it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException

from app.errors import DEPENDENCIES, DependencyUnavailable, dependency_of
from app.mcp.graph_operations import GRAPH_OPERATIONS
from app.runs.executor import describe_failure
from tools.operations import (
    EngineNotOpen,
    Operation,
    OperationError,
    OperationRegistry,
    invalid_arguments,
)

log = logging.getLogger(__name__)

#: Longest JSON in a result's text rendering (the full result is its structuredContent).
TEXT_JSON_CHARS = 4000
#: Fields whose string value leads a result's text rendering.
LEAD_FIELDS = ("answer", "text", "summary", "message")
RESOURCE_SCHEME = "switchyard"
JSON_MIME = "application/json"


def served(operations: Iterable[Operation[Any, Any]]) -> OperationRegistry:
    """What the MCP server serves: ``operations`` (the components') and the app's own."""
    return OperationRegistry([*operations, *GRAPH_OPERATIONS])


def _title(op: Operation[Any, Any]) -> str:
    return op.name.replace("_", " ").capitalize()


def tool(op: Operation[Any, Any]) -> types.Tool:
    """The MCP tool of an operation."""
    return types.Tool(
        name=op.name,
        title=_title(op),
        description=op.description,
        inputSchema=op.input_schema(),
        outputSchema=op.output_schema(),
        annotations=types.ToolAnnotations(
            title=_title(op), readOnlyHint=op.read_only, openWorldHint=False
        ),
    )


def rendered(data: dict[str, Any]) -> str:
    """A result's short text: its answer or text first (when it has one), then its JSON."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(body) > TEXT_JSON_CHARS:
        more = len(body) - TEXT_JSON_CHARS
        body = f"{body[:TEXT_JSON_CHARS]}… ({more} more characters in structuredContent)"
    lead = next((data[k] for k in LEAD_FIELDS if isinstance(data.get(k), str) and data[k]), None)
    return f"{lead}\n\n{body}" if lead else body


def result(output: BaseModel) -> types.CallToolResult:
    """A tool's successful result: structured, with its text rendering."""
    data = output.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=rendered(data))],
        structuredContent=data,
        isError=False,
    )


def error_message(name: str, exc: BaseException, model: type[BaseModel] | None = None) -> str:
    """What a tool error says about ``exc`` (raised by tool ``name``, whose arguments
    ``model`` validates: an unknown argument is named with the accepted ones)."""
    if isinstance(exc, ValidationError):
        return invalid_arguments(exc, model)
    if isinstance(exc, EngineNotOpen):
        return f"{exc} (status {exc.status}; dependency: {exc.dependency})"
    if isinstance(exc, OperationError):
        return f"{exc} (status {exc.status})"
    if isinstance(exc, HTTPException):
        return f"{exc.detail} (status {exc.status_code})"
    dependency = dependency_of(exc)
    if dependency is not None:
        cause = exc.shown_cause if isinstance(exc, DependencyUnavailable) else type(exc).__name__
        log.warning("MCP tool %s: %s is unavailable (%s)", name, dependency, exc)
        what = DEPENDENCIES.get(dependency, dependency)
        return (
            f"{what} is unavailable ({cause}); retry shortly. GET /health shows each "
            f"dependency. (status 503; dependency: {dependency})"
        )
    log.exception("MCP tool %s failed", name)
    return describe_failure(exc, "tool call")


def error(message: str) -> types.CallToolResult:
    """A tool error (``isError``) with ``message``."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error: {message}")], isError=True
    )


# --- resources -------------------------------------------------------------------------------


def resource_operations(registry: OperationRegistry) -> list[Operation[Any, Any]]:
    """The operations served as resources too: read-only, with no required argument."""
    return [op for op in registry if op.read_only and not op.input_schema().get("required")]


def resource_uri(op: Operation[Any, Any]) -> str:
    return f"{RESOURCE_SCHEME}://{op.capability}/{op.name}"


def resource(op: Operation[Any, Any]) -> types.Resource:
    return types.Resource(
        uri=resource_uri(op),
        name=op.name,
        title=_title(op),
        description=op.description,
        mimeType=JSON_MIME,
    )


@dataclass(frozen=True)
class Catalogue:
    """What the MCP server lists of a registry, built once (:func:`catalogue`)."""

    registry: OperationRegistry
    tools: list[types.Tool]
    resources: list[types.Resource]
    #: resource URI -> its operation
    by_uri: dict[str, Operation[Any, Any]]


def catalogue(registry: OperationRegistry) -> Catalogue:
    """The tools and resources of ``registry`` (JSON schemas generated once per model)."""
    readable = resource_operations(registry)
    return Catalogue(
        registry=registry,
        tools=[tool(op) for op in registry],
        resources=[resource(op) for op in readable],
        by_uri={resource_uri(op): op for op in readable},
    )


# --- the README's tool table -----------------------------------------------------------------


#: Abbreviations whose period ends no sentence.
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _first_sentence(text: str) -> str:
    """The first sentence of ``text`` (a period of 'e.g.', 'i.e.', ... ends none, nor does
    one inside parentheses), Markdown-table safe."""
    flat = " ".join(text.split())
    end = len(flat)
    for found in _SENTENCE_END.finditer(flat):
        head = flat[: found.end()]
        if head.endswith(_ABBREVIATIONS) or head.count("(") > head.count(")"):
            continue
        end = found.end()
        break
    return flat[:end].replace("|", "\\|")


def _arguments(op: Operation[Any, Any]) -> str:
    schema = op.input_schema()
    required = set(schema.get("required") or [])
    names = [f"`{n}`" if n in required else f"`{n}?`" for n in schema.get("properties") or {}]
    return ", ".join(names) or "—"


def tools_table(registry: OperationRegistry) -> str:
    """Every served tool as a Markdown table (the README's, between the mcp-tools markers)."""
    rows = [
        "| tool | capability | arguments (`?` optional) | read-only | what it does |",
        "|---|---|---|---|---|",
    ]
    for op in registry:  # the component list's order, the app's own last
        rows.append(
            f"| `{op.name}` | {op.capability} | {_arguments(op)} | "
            f"{'yes' if op.read_only else 'no'} | {_first_sentence(op.description)} |"
        )
    return "\n".join(rows)


def default_tools_table() -> str:
    """The tool table of the default component list (``main.py mcp --tools-table``)."""
    from app.components.base import operation_registry
    from app.components.registry import COMPONENTS

    return tools_table(served(operation_registry(COMPONENTS)))
