"""``/mcp`` over HTTP with the official MCP client: initialize, the tool list is the operation
registry (a capability added in the test included), keys (401 before any MCP message), owner
isolation, and every refusal (unknown tool, missing engine, rate limit, quota) as a tool error.
What the official client cannot send (another method, a body nested too deep, NaN, arbitrary
JSON) is sent with httpx: never a 5xx."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import types
from mcp.shared.exceptions import McpError
from pydantic import BaseModel, Field

from app.components.base import operation_registry
from app.components.registry import COMPONENTS
from app.mcp.graph_operations import GRAPH_OPERATIONS
from app.mcp.tools import _first_sentence, served
from tests.mcp.conftest import KEYS, MAX_BODY, RATE_LIMIT, THREAD_QUOTA, McpServer
from tests.mcp.test_tools import ok, refused
from tools.operations import Arguments, OperationContext, operation

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
NOTES = b"# Garden notes\n\nThe tomatoes go in the north bed after the last frost.\n"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(server: McpServer, key: str, body: bytes | dict[str, Any]) -> httpx.Response:
    """One raw POST to /mcp with ``key`` (a JSON-RPC message, or any bytes)."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {**ACCEPT, "X-API-Key": key}
    return httpx.post(server.endpoint, content=content, headers=headers, timeout=120)


def rpc(method: str, params: dict[str, Any] | None = None, ident: int = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}


async def test_initialize_and_every_operation_is_a_tool(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["units"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
    services = mcp_server.app.state.services
    expected = {op.name: op for op in served(services.operations)}
    assert set(tools) == set(expected)
    assert {op.name for op in GRAPH_OPERATIONS} <= set(tools)
    for name, tool in tools.items():
        op = expected[name]
        assert tool.inputSchema == op.input_schema()
        assert tool.outputSchema == op.output_schema()
        assert tool.description == op.description
        assert tool.annotations is not None and tool.annotations.readOnlyHint == op.read_only
    assert "switchyard://knowledge/list_documents" in resources
    assert "switchyard://analytics/list_kpis" in resources


async def test_a_capability_registered_in_the_test_is_a_tool(mcp_server: McpServer) -> None:
    # the example capability (tests/example_agent) is not in the shipped component list
    assert "convert_length" not in {op.name for op in operation_registry(COMPONENTS)}
    async with mcp_server.session(KEYS["units"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["convert_length"].inputSchema["properties"]["target"]["enum"] == [
            "km", "m", "mi", "miles", "ft"
        ]  # fmt: skip
        converted = await session.call_tool(
            "convert_length", {"value": 5, "source": "km", "target": "mi"}
        )
        assert ok(converted)["text"] == "5 km = 3.11 mi"
        assert converted.content[0].text.startswith("5 km = 3.11 mi")  # type: ignore[union-attr]
        refused(
            await session.call_tool("convert_length", {"value": -1, "source": "km", "target": "x"}),
            "value",
            "target",
        )


def test_a_request_without_a_valid_key_is_401_before_any_mcp_message(
    mcp_server: McpServer,
) -> None:
    for headers in ({}, {"X-API-Key": "not-a-key"}, {"Authorization": "Bearer not-a-key"}):
        answer = httpx.post(
            mcp_server.endpoint, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=60
        )
        assert answer.status_code == 401, answer.text
        assert "API key" in answer.json()["error"]["message"]
        assert answer.headers["WWW-Authenticate"] == "Bearer"
    # not even a malformed body is read without a key
    garbage = httpx.post(mcp_server.endpoint, content=b"{not json", headers=ACCEPT, timeout=60)
    assert garbage.status_code == 401
    # the same request with a key (either header) is an MCP answer
    for headers in ({"X-API-Key": KEYS["a"]}, {"Authorization": f"Bearer {KEYS['a']}"}):
        answer = httpx.post(
            mcp_server.endpoint, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=60
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["serverInfo"]["name"] == "switchyard"


async def test_the_official_client_without_a_key_fails_to_connect(mcp_server: McpServer) -> None:
    with pytest.raises(ExceptionGroup) as raised:  # the transport's error, in a task group
        async with mcp_server.session(None):
            raise AssertionError("initialized without a key")
    errors = raised.value.exceptions
    assert len(errors) == 1 and isinstance(errors[0], httpx.HTTPStatusError)
    assert errors[0].response.status_code == 401


def test_a_body_over_the_limit_is_413(mcp_server: McpServer) -> None:
    big = {**INITIALIZE, "padding": "x" * (MAX_BODY + 1)}
    answer = httpx.post(
        mcp_server.endpoint,
        content=json.dumps(big),
        headers={**ACCEPT, "X-API-Key": KEYS["a"]},
        timeout=60,
    )
    assert answer.status_code == 413 and "MAX_REQUEST_BYTES" in answer.text


async def test_another_key_sees_none_of_the_callers_rows_threads_or_uploads(
    mcp_server: McpServer,
) -> None:
    uploaded = httpx.post(
        f"{mcp_server.url}/documents",
        files={"files": ("private-notes.md", NOTES, "text/markdown")},
        headers={"X-API-Key": KEYS["a"]},
        timeout=120,
    )
    assert uploaded.status_code == 200, uploaded.text
    async with mcp_server.session(KEYS["a"]) as a:
        task = ok(await a.call_tool("create_task", {"title": "A's secret errand"}))
        meal = ok(await a.call_tool("log_meal", {"description": "A's soup", "meal_type": "lunch"}))
        event = ok(
            await a.call_tool(
                "create_event", {"title": "A's dentist", "starts_at": "2031-04-01T09:00:00Z"}
            )
        )
        turn = ok(await a.call_tool("chat", {"message": "Convert 2 km to m"}))
        docs = ok(await a.call_tool("list_documents", {}))["documents"]
        document_id = next(d["id"] for d in docs if d["source"].endswith("private-notes.md"))
    async with mcp_server.session(KEYS["b"]) as b:
        tasks = ok(await b.call_tool("list_tasks", {"status": ["open", "done"]}))
        assert all(t["id"] != task["id"] for t in tasks["items"]) and tasks["total"] == 0
        assert ok(await b.call_tool("list_meals", {}))["total"] == 0
        refused(await b.call_tool("get_task", {"task_id": task["id"]}), "status 404")
        refused(
            await b.call_tool("update_task", {"task_id": task["id"], "title": "mine"}),
            "status 404",
        )
        refused(await b.call_tool("delete_meal", {"meal_id": meal["id"]}), "status 404")
        window = {"starts_from": "2031-01-01T00:00:00Z", "starts_to": "2032-01-01T00:00:00Z"}
        assert ok(await b.call_tool("list_events", window))["total"] == 0
        refused(await b.call_tool("get_event", {"event_id": event["id"]}), "status 404")
        refused(
            await b.call_tool("update_event", {"event_id": event["id"], "title": "mine"}),
            "status 404",
        )
        refused(await b.call_tool("delete_event", {"event_id": event["id"]}), "status 404")
        # A's session id names nothing for B (thread ids are per owner)
        refused(
            await b.call_tool("chat", {"message": "hi", "session_id": turn["session_id"]}),
            "not found",
            "status 404",
        )
        # A's upload is in A's private collection: B can neither read nor delete it
        refused(await b.call_tool("get_document", {"document_id": document_id}), "status 404")
        refused(await b.call_tool("delete_document", {"document_id": document_id}), "status 404")
        assert all(
            d["id"] != document_id for d in ok(await b.call_tool("list_documents", {}))["documents"]
        )
    async with mcp_server.session(KEYS["a"]) as a:
        assert ok(await a.call_tool("get_task", {"task_id": task["id"]}))["title"] == task["title"]
        mine = ok(await a.call_tool("get_event", {"event_id": event["id"]}))
        assert mine["title"] == "A's dentist"
        again = ok(await a.call_tool("chat", {"message": "hi", "session_id": turn["session_id"]}))
        assert again["turn"] == 2


async def test_refusals_are_tool_errors(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["errors"]) as session:
        refused(await session.call_tool("no_such_tool", {}), "Unknown tool", "no_such_tool")
        refused(await session.call_tool("get_task", {"task_id": "seven"}), "task_id")
        # a missing engine names its dependency (no chat model on this server)
        spec = {"function_name": "f", "description": "add one"}
        generated = await session.call_tool("generate_code", {"execution_spec": spec})
        if generated.isError:
            refused(generated, "dependency")
        else:
            assert generated.structuredContent and not generated.structuredContent["success"]
        explained = await session.call_tool(
            "explain_change", {"metric": "no_such_metric", "period": "last month"}
        )
        assert explained.isError, explained.structuredContent
        # a resource read with an unknown URI is an MCP error, not a transport failure
        try:
            await session.read_resource("switchyard://nothing/here")  # type: ignore[arg-type]
            raise AssertionError("an unknown resource was read")
        except McpError as exc:
            assert "Unknown resource" in str(exc)
        listed = {str(r.uri): r for r in (await session.list_resources()).resources}
        kpis = await session.read_resource("switchyard://analytics/list_kpis")  # type: ignore[arg-type]
        first = kpis.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert json.loads(first.text)["metrics"]
        # read as it is listed: JSON
        assert first.mimeType == listed["switchyard://analytics/list_kpis"].mimeType
        assert first.mimeType == "application/json"


async def test_every_request_counts_against_the_rate_limit(mcp_server: McpServer) -> None:
    """initialize, tools/list and tool calls count alike; over the limit a tool call is a tool
    error, a resource read an MCP error, any other request 429 with Retry-After."""
    arguments = {"value": 1, "source": "km", "target": "m"}
    key = KEYS["rate"]
    async with mcp_server.session(key) as session:  # initialize, notifications/initialized
        await session.list_tools()
        calls = 0
        while not (result := await session.call_tool("convert_length", arguments)).isError:
            calls += 1
        assert calls == RATE_LIMIT - 3  # the session's two requests and tools/list counted
        refused(result, "RATE_LIMIT_PER_MINUTE", "status 429")
        with pytest.raises(McpError, match="RATE_LIMIT_PER_MINUTE"):
            await session.read_resource("switchyard://analytics/list_kpis")  # type: ignore[arg-type]
    for method in ("tools/list", "initialize", "ping"):
        params: Any = INITIALIZE["params"]
        answer = post(mcp_server, key, rpc(method, params, ident=41))
        assert answer.status_code == 429, answer.text
        assert int(answer.headers["Retry-After"]) >= 1
        error = answer.json()
        assert error["id"] == 41 and error["error"]["code"] == -32000
        assert "RATE_LIMIT_PER_MINUTE" in error["error"]["message"]
    async with mcp_server.session(KEYS["units"]) as other:  # another key is unaffected
        ok(await other.call_tool("convert_length", arguments))


def test_get_and_delete_are_405_and_open_no_stream(mcp_server: McpServer) -> None:
    """A stateless server offers no stream of its own: GET (which opened an SSE stream that
    only pinged) and DELETE are 405 with Allow: POST; without a key, 401 first."""
    for method in ("GET", "DELETE", "PUT"):
        answer = httpx.request(
            method,
            mcp_server.endpoint,
            headers={"Accept": "text/event-stream", "X-API-Key": KEYS["guard"]},
            timeout=30,
        )
        assert answer.status_code == 405, (method, answer.text)
        assert answer.headers["Allow"] == "POST"
        assert "POST" in answer.json()["error"]["message"]
        anonymous = httpx.request(method, mcp_server.endpoint, timeout=30)
        assert anonymous.status_code == 401, (method, anonymous.text)


def test_a_body_nested_too_deep_is_400_not_500(mcp_server: McpServer) -> None:
    deep = b"[" * 1100 + b"]" * 1100
    body = (
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_task",'
        b'"arguments":{"title":' + deep + b"}}}"
    )
    answer = post(mcp_server, KEYS["guard"], body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == -32600 and "MAX_JSON_DEPTH" in error["message"]
    # the REST API answers deep JSON 400 too
    rest = httpx.post(
        f"{mcp_server.url}/tasks",
        content=b'{"title":' + deep + b"}",
        headers={"X-API-Key": KEYS["guard"], "Content-Type": "application/json"},
        timeout=60,
    )
    assert rest.status_code == 400, rest.text
    # just under the limit is an MCP answer: a tool error about the title, not an HTTP error
    nested = b"[" * 50 + b"]" * 50
    within = post(
        mcp_server,
        KEYS["guard"],
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_task",'
        b'"arguments":{"title":' + nested + b"}}}",
    )
    assert within.status_code == 200, within.text
    assert within.json()["result"]["isError"] is True
    assert "title" in within.json()["result"]["content"][0]["text"]
    for garbage, code in ((b"{not json", -32700), (b'"\xff\xfe', -32700), (b"\xff", -32700)):
        answer = post(mcp_server, KEYS["guard"], garbage)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == code, garbage
    surrogate = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x\\ud800"}}'
    answer = post(mcp_server, KEYS["guard"], surrogate)
    assert answer.status_code == 400 and "surrogate" in answer.json()["error"]["message"]


def test_nan_and_infinity_are_refused_naming_the_argument(mcp_server: McpServer) -> None:
    """JSON has no NaN (the official client sends null for it): a raw NaN is a tool error."""
    for literal in (b"NaN", b"Infinity", b"-Infinity"):
        body = (
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"log_meal",'
            b'"arguments":{"description":"soup","meal_type":"lunch","calories":' + literal + b"}}}"
        )
        answer = post(mcp_server, KEYS["guard"], body)
        assert answer.status_code == 200, answer.text
        result = answer.json()["result"]
        assert result["isError"] is True
        assert "arguments.calories holds NaN or Infinity" in result["content"][0]["text"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
TOOLS = st.sampled_from(["convert_length", "list_tasks", "check_code", "get_task", "no_such"])
MESSAGES = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "id": st.integers(0, 99) | st.text(max_size=4),
         "method": st.sampled_from(["tools/call", "tools/list", "resources/read", "ping",
                                    "initialize", "nope"]) | st.text(max_size=6)},
        optional={"params": st.fixed_dictionaries({"name": TOOLS}, optional={"arguments": JSON})
                  | JSON},
    ),
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(message=MESSAGES)
def test_arbitrary_json_to_mcp_is_never_a_server_error(mcp_server: McpServer, message: Any) -> None:
    answer = post(mcp_server, KEYS["fuzz"], json.dumps(message).encode())
    assert answer.status_code < 500, (message, answer.status_code, answer.text)


class Shout(Arguments):
    text: str = Field(min_length=1, max_length=40, description="What to shout.")


class Shouted(BaseModel):
    text: str


@operation("echo", read_only=True)
async def shout(ctx: OperationContext, payload: Shout) -> Shouted:
    """Shout the text back."""
    return Shouted(text=payload.text.upper())


async def test_the_tool_list_is_built_once_and_again_when_an_operation_is_added(
    mcp_server: McpServer,
) -> None:
    endpoint = mcp_server.app.state.mcp
    services = mcp_server.app.state.services
    async with mcp_server.session(KEYS["listed"]) as session:
        first = (await session.list_tools()).tools
        built = endpoint.catalogue(services)
        again = (await session.list_tools()).tools
        assert endpoint.catalogue(services) is built and first == again  # not rebuilt
        assert "shout" not in {t.name for t in first}
        services.operations.register(shout)  # a tool added to the registry in the test
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert endpoint.catalogue(services) is not built
        assert tools["shout"].inputSchema["additionalProperties"] is False
        assert ok(await session.call_tool("shout", {"text": "hi"})) == {"text": "HI"}


async def test_the_thread_quota_is_a_tool_error(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["quota"]) as session:
        for _ in range(THREAD_QUOTA):
            ok(await session.call_tool("chat", {"message": "Convert 1 km to m"}))
        refused(
            await session.call_tool("chat", {"message": "Convert 1 km to m"}),
            "MAX_THREADS_PER_OWNER",
            "status 429",
        )


def test_the_readme_row_keeps_a_sentence_whole() -> None:
    """A period of 'e.g.' (or inside parentheses) ends no sentence of the tool table."""
    text = "Send a 'reminder due' webhook for a task (e.g. to an n8n workflow). More words."
    assert _first_sentence(text) == (
        "Send a 'reminder due' webhook for a task (e.g. to an n8n workflow)."
    )
    assert _first_sentence("Ask it, i.e. the model. Then go.") == "Ask it, i.e. the model."
    assert _first_sentence("A | B. C.") == "A \\| B."
