"""``/mcp`` over HTTP with the official MCP client: initialize, the tool list is the operation
registry (a capability added in the test included), keys (401 before any MCP message), owner
isolation, and every refusal (unknown tool, missing engine, rate limit, quota) as a tool error."""

from __future__ import annotations

import json

import httpx
import pytest
from mcp import types
from mcp.shared.exceptions import McpError

from app.components.base import operation_registry
from app.components.registry import COMPONENTS
from app.mcp.graph_operations import GRAPH_OPERATIONS
from app.mcp.tools import served
from tests.mcp.conftest import KEYS, MAX_BODY, RATE_LIMIT, THREAD_QUOTA, McpServer
from tests.mcp.test_tools import ok, refused

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
        kpis = await session.read_resource("switchyard://analytics/list_kpis")  # type: ignore[arg-type]
        first = kpis.contents[0]
        assert isinstance(first, types.TextResourceContents)
        assert json.loads(first.text)["metrics"]


async def test_tool_calls_count_against_the_rate_limit(mcp_server: McpServer) -> None:
    arguments = {"value": 1, "source": "km", "target": "m"}
    async with mcp_server.session(KEYS["rate"]) as session:
        for _ in range(RATE_LIMIT):
            ok(await session.call_tool("convert_length", arguments))
        refused(
            await session.call_tool("convert_length", arguments),
            "RATE_LIMIT_PER_MINUTE",
            "status 429",
        )
    async with mcp_server.session(KEYS["units"]) as other:  # another key is unaffected
        ok(await other.call_tool("convert_length", arguments))


async def test_the_thread_quota_is_a_tool_error(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["quota"]) as session:
        for _ in range(THREAD_QUOTA):
            ok(await session.call_tool("chat", {"message": "Convert 1 km to m"}))
        refused(
            await session.call_tool("chat", {"message": "Convert 1 km to m"}),
            "MAX_THREADS_PER_OWNER",
            "status 429",
        )
