"""Each tool the issue asks for, called over HTTP with the official MCP client: valid arguments
give a structured result (validated by the client against the tool's output schema) and a text
rendering; invalid arguments give a tool error (``isError``) naming the field, never a
transport failure."""

from __future__ import annotations

from typing import Any

import httpx
from mcp import ClientSession, types

from tests.mcp.conftest import KEYS, McpServer

TOTALS = '''
import pandas as pd


def totals(df: pd.DataFrame) -> dict[str, float]:
    """The amount per region."""
    if "amount" not in df.columns:
        raise ValueError("no amount column")
    return df.groupby("region")["amount"].sum().to_dict()
'''
RECORDS = [{"region": "north", "amount": 10.0}, {"region": "south", "amount": 20.5}]
SLEEPY_TEST = "import time\n\ndef test_waits():\n    time.sleep(2)\n    assert 1 == 1\n"
HANDBOOK = (
    "# Returns handbook\n\nCustomers may return any product within 45 days of delivery for a "
    "full refund. The refund window starts on the delivery date. Opened software cannot be "
    "returned.\n"
)


def ok(result: types.CallToolResult) -> dict[str, Any]:
    """A successful result's structured content (and it has a text rendering)."""
    assert not result.isError, result.content
    assert result.structuredContent is not None
    assert isinstance(result.content[0], types.TextContent) and result.content[0].text
    return result.structuredContent


def refused(result: types.CallToolResult, *fragments: str) -> str:
    """A tool error's message, which names each of ``fragments``."""
    assert result.isError, result.structuredContent
    text = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
    for fragment in fragments:
        assert fragment in text, text
    return text


async def call(session: ClientSession, name: str, **arguments: Any) -> types.CallToolResult:
    return await session.call_tool(name, arguments)


async def test_search_and_ask_documents(mcp_server: McpServer) -> None:
    key = KEYS["docs"]
    uploaded = httpx.post(
        f"{mcp_server.url}/documents",
        files={"files": ("returns.md", HANDBOOK.encode(), "text/markdown")},
        headers={"X-API-Key": key},
        timeout=120,
    )
    assert uploaded.status_code == 200, uploaded.text
    async with mcp_server.session(key) as session:
        found = ok(await call(session, "search_documents", query="refund window", top_k=3))
        assert found["hits"] and "45 days" in found["hits"][0]["text"]
        refused(await call(session, "search_documents", query=""), "query")
        refused(await call(session, "search_documents", query="x", top_k=0), "top_k")

        answer = ok(await call(session, "ask_documents", question="How long is the refund window?"))
        assert "refund" in answer["answer"] and "[1]" in answer["answer"]
        assert answer["citations"][0]["title"] == "Returns handbook"
        assert answer["citations"][0]["source"].endswith("returns.md")
        refused(await call(session, "ask_documents"), "question", "Field required")
        refused(await call(session, "ask_documents", question="x", extra=1), "extra")
        filtered = ok(await call(session, "search_documents", query="refund window",
                                 filters={"collection": "shared"}))  # fmt: skip
        assert all("45 days" not in h["text"] for h in filtered["hits"])
        refused(await call(session, "search_documents", query="x", filters={"x": 1}), "x")

    # another key never sees this key's private upload (issue 27: same scoping as REST)
    async with mcp_server.session(KEYS["b"]) as session:
        theirs = ok(await call(session, "search_documents", query="refund window", top_k=10))
        assert all("45 days" not in h["text"] for h in theirs["hits"])
        listed = ok(await call(session, "list_documents"))
        assert "Returns handbook" not in {d["title"] for d in listed["documents"]}
        answer = ok(await call(session, "ask_documents", question="How long is the refund window?"))
        assert "45 days" not in answer["answer"]
        assert "Returns handbook" not in {c["title"] for c in answer.get("citations") or []}


async def test_query_analytics_answers_a_question(mcp_server: McpServer) -> None:
    key = KEYS["analytics"]
    async with mcp_server.session(key) as session:
        # no chat model on this server: the agent's deterministic plan answers (as REST does)
        question = "Units sold by region in 2025"
        answer = ok(await call(session, "query_analytics", question=question))
        assert answer["question"] == question and answer["answer"]
        assert answer["method"] == "semantic-layer" and answer["sql"]
        assert "region" in answer["columns"] and answer["row_count"] == len(answer["rows"]) > 0
        assert answer["chart_id"] and answer["chart_url"]
        refused(await call(session, "query_analytics", question=""), "question")
        refused(
            await call(session, "query_analytics", sql="SELECT 1"), "question", "Field required"
        )
    chart = httpx.get(
        f"{mcp_server.url}/analytics/chart/{answer['chart_id']}.png",
        headers={"X-API-Key": key},
        timeout=60,
    )
    assert chart.status_code == 200 and chart.content.startswith(b"\x89PNG")


async def test_run_sql(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["analytics"]) as session:
        rows = ok(await call(session, "run_sql", sql="SELECT count(*) AS n FROM sales"))
        assert rows["columns"] == ["n"] and rows["rows"][0][0] > 0
        refused(await call(session, "run_sql", sql=""), "sql")
        # a refused statement is a tool error naming why (once), with the REST status
        text = refused(
            await call(session, "run_sql", sql="DELETE FROM sales"),
            "DELETE",
            "status 422",
        )
        assert text.count("SQL refused") == 1, text


def sandbox_runs(server: McpServer, key: str) -> bool:
    """Whether the server's sandbox runs code (its /health says so, as it tells operators)."""
    health = httpx.get(f"{server.url}/health", headers={"X-API-Key": key}, timeout=120).json()
    sandbox = health["dependencies"]["sandbox"]
    return bool(sandbox["status"] == "ok")


async def test_check_and_run_code(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["code"]) as session:
        checked = ok(await call(session, "check_code", code=TOTALS, function_name="totals"))
        assert checked == {"is_valid": True, "issues": []}
        refused(await call(session, "check_code", code=TOTALS), "function_name", "Field required")

        arguments = {"code": TOTALS, "function_name": "totals", "test_data": RECORDS}
        ran = await session.call_tool("run_code", arguments)
        if sandbox_runs(mcp_server, KEYS["code"]):
            assert ok(ran)["success"] is True, ran
            assert ok(ran)["result"]["value"] == {"north": 10.0, "south": 20.5}
        else:  # no bubblewrap here: refused naming the sandbox, never run outside it
            refused(ran, "(status 503; dependency: sandbox)")
        refused(await call(session, "run_code", code=TOTALS, function_name="1bad"), "function_name")


async def test_analyze_tests(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["tests"]) as session:
        files = [{"path": "tests/test_wait.py", "content": SLEEPY_TEST}]
        analysis = ok(await call(session, "analyze_tests", files=files))
        assert analysis["issues"] and analysis["files"]
        refused(await call(session, "analyze_tests", files=[]), "files")
        refused(await call(session, "analyze_tests", files=[{"path": "x.py"}]), "content")
        # a bad config is named compactly (field: message), without pydantic's links
        bad = {"profile": "loose", "verbose_test_max_statements": 0, "colour": "red"}
        text = refused(
            await call(session, "analyze_tests", files=files, config=bad),
            "invalid config: profile: Input should be 'default' or 'strict'",
            "verbose_test_max_statements: Input should be greater than or equal to 1",
            "colour: unknown field; accepted: profile,",
            "(status 422)",
        )
        assert "pydantic.dev" not in text and "For further information" not in text, text


async def test_tasks(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["tasks"]) as session:
        task = ok(
            await call(session, "create_task", title="Renew passport", due="2031-01-05T09:00:00Z")
        )
        assert task["title"] == "Renew passport" and task["due_at"].startswith("2031-01-05")
        refused(await call(session, "create_task", title=""), "title")

        listed = ok(await call(session, "list_tasks"))
        assert task["id"] in [t["id"] for t in listed["items"]]
        refused(await call(session, "list_tasks", limit=0), "limit")

        changed = ok(await call(session, "update_task", task_id=task["id"], priority="high"))
        assert changed["priority"] == "high" and changed["id"] == task["id"]
        refused(
            await call(session, "update_task", task_id=task["id"], priority="bogus"), "priority"
        )


async def test_meals(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["meals"]) as session:
        meal = ok(
            await call(
                session, "log_meal", description="oatmeal with banana", meal_type="breakfast"
            )
        )
        assert meal["meal_type"] == "breakfast"
        refused(
            await call(session, "log_meal", description="cake", meal_type="brunch"), "meal_type"
        )

        listed = ok(await call(session, "list_meals"))
        assert meal["id"] in [m["id"] for m in listed["items"]]
        refused(await call(session, "list_meals", limit=0), "limit")


async def test_events(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["events"]) as session:
        event = ok(
            await call(
                session, "create_event", title="Lunch with Sam", starts="2031-02-03T12:00:00Z"
            )
        )
        assert event["title"] == "Lunch with Sam"
        refused(await call(session, "create_event", title="Lunch"), "starts", "Field required")

        listed = ok(await call(session, "list_events", starts_from="2031-01-01T00:00:00Z"))
        assert event["id"] in [e["id"] for e in listed["items"]]
        refused(await call(session, "list_events", limit=0), "limit")


async def test_the_rest_bodys_field_names(mcp_server: McpServer) -> None:
    """The personal tools take the names of the REST bodies (and query parameters)."""
    async with mcp_server.session(KEYS["names"]) as session:
        schemas = {tool.name: tool.inputSchema for tool in (await session.list_tools()).tools}
        assert "due_at" in schemas["create_task"]["properties"]
        assert schemas["create_event"]["required"] == ["title", "starts_at"]

        task = ok(
            await call(session, "create_task", title="Pay the rent", due_at="2031-03-01T09:00:00Z")
        )
        assert task["due_at"].startswith("2031-03-01")
        moved = ok(
            await call(session, "update_task", task_id=task["id"], due_at="2031-03-02T09:00:00Z")
        )
        assert moved["due_at"].startswith("2031-03-02")
        cleared = ok(await call(session, "update_task", task_id=task["id"], clear=["due_at"]))
        assert cleared["due_at"] is None
        found = ok(await call(session, "list_tasks", q="Pay the rent"))
        assert [t["id"] for t in found["items"]] == [task["id"]]

        event = ok(
            await call(
                session,
                "create_event",
                title="Rent review",
                starts_at="2031-03-04T10:00:00Z",
                ends_at="2031-03-04T10:30:00Z",
            )
        )
        assert event["starts_at"].startswith("2031-03-04T10:00")
        assert event["ends_at"].startswith("2031-03-04T10:30")
        later = ok(
            await call(
                session, "update_event", event_id=event["id"], starts_at="2031-03-05T10:00:00Z"
            )
        )
        assert later["ends_at"].startswith("2031-03-05T10:30")  # a moved start keeps the length
        events = ok(
            await call(session, "list_events", q="Rent review", starts_from="2031-01-01T00:00:00Z")
        )
        assert [e["id"] for e in events["items"]] == [event["id"]]
        refused(await call(session, "create_event", title="Rent"), "starts_at", "Field required")

        meal = ok(
            await call(session, "log_meal", description="rye porridge", meal_type="breakfast")
        )
        meals = ok(await call(session, "list_meals", q="rye porridge"))
        assert [m["id"] for m in meals["items"]] == [meal["id"]]


async def test_chat_keeps_the_callers_session(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["chat"]) as session:
        first = ok(await call(session, "chat", message="Convert 5 km to miles"))
        assert first["agent"] == "units" and "3.11" in first["answer"]
        assert first["turn"] == 1
        second = ok(
            await call(session, "chat", message="And 3 m to ft", session_id=first["session_id"])
        )
        assert second["session_id"] == first["session_id"] and second["turn"] == 2
        refused(await call(session, "chat", message="   "), "message")
        refused(await call(session, "chat", message="hi", session_id="no such id!"), "session_id")
        refused(
            await call(session, "chat", message="hi", session_id="never-started-1"),
            "not found",
            "status 404",
        )


#: The tools issue 27 names.
ISSUE_TOOLS = (
    "search_documents", "ask_documents", "query_analytics", "run_sql", "check_code", "run_code",
    "analyze_tests", "create_task", "list_tasks", "update_task", "log_meal", "list_meals",
    "create_event", "list_events", "chat",
)  # fmt: skip


async def test_the_issues_tools_are_served(mcp_server: McpServer) -> None:
    async with mcp_server.session(KEYS["listed"]) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name in ISSUE_TOOLS:
        tool = listed[name]
        assert tool.description and tool.inputSchema["type"] == "object", name
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object", name
    # every tool refuses arguments its schema does not name
    assert {name for name, tool in listed.items()
            if tool.inputSchema.get("additionalProperties") is not False} == set()  # fmt: skip


async def test_unknown_arguments_are_refused_naming_the_accepted_ones(
    mcp_server: McpServer,
) -> None:
    """A misspelt argument is a tool error, never a silently lost value (as REST's 422)."""
    async with mcp_server.session(KEYS["strict"]) as session:
        typo = refused(
            await call(session, "create_task", title="probe", due_date="2031-01-01T00:00:00Z"),
            "due_date: unknown field",
            "accepted: title, due_at,",
        )
        assert "Invalid arguments" in typo
        refused(
            await call(session, "check_code", code=TOTALS, function_name="totals", timeout=9),
            "timeout: unknown field",
            "accepted: code, function_name",
        )
        refused(
            await call(session, "search_documents", query="x", k=50),
            "k: unknown field",
            "top_k",
        )
        refused(await call(session, "list_tasks", bogus=1), "bogus: unknown field", "status")
        # a nested object names its own fields
        refused(
            await call(session, "analyze_tests", files=[{"path": "t.py", "content": "", "x": 1}]),
            "files.0.x: unknown field",
            "accepted: path, content",
        )
        assert ok(await call(session, "list_tasks"))["total"] == 0  # nothing was created
        # the hidden aliases of the REST query parameters are fields, not unknown ones
        made = ok(await call(session, "create_task", title="Water the ferns", tags=["home"]))
        found = ok(await call(session, "list_tasks", q="ferns", tag=["home"]))
        assert [t["id"] for t in found["items"]] == [made["id"]]
    # REST answers the same body 422 naming the field
    answer = httpx.post(
        f"{mcp_server.url}/documents/search",
        json={"query": "x", "k": 50},
        headers={"X-API-Key": KEYS["strict"]},
        timeout=60,
    )
    assert answer.status_code == 422 and "k" in answer.json()["error"]["message"], answer.text


async def test_lists_default_as_rest_and_creates_take_the_callers_zone(
    mcp_server: McpServer,
) -> None:
    """The list tools' defaults are the operations', which GET /tasks, /meals and /events use
    too (every status, newest meals first, PERSONAL_PAGE_SIZE rows); a create takes ``tz``
    where POST takes ``?tz=`` (default PERSONAL_TIMEZONE)."""
    key = KEYS["lists"]
    page_size = mcp_server.app.state.settings.personal.page_size

    def rest(path: str) -> list[int]:
        answer = httpx.get(f"{mcp_server.url}{path}", headers={"X-API-Key": key}, timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["limit"] == page_size
        return [row["id"] for row in answer.json()["items"]]

    async with mcp_server.session(key) as session:
        paid = ok(await call(session, "create_task", title="Pay the plumber"))
        ok(await call(session, "update_task", task_id=paid["id"], status="done"))
        ok(await call(session, "create_task", title="Call the plumber"))
        tasks = ok(await call(session, "list_tasks"))
        assert tasks["total"] == 2 and tasks["limit"] == page_size
        assert [t["id"] for t in tasks["items"]] == rest("/tasks")
        for eaten in ("2031-01-01T08:00:00Z", "2031-01-02T08:00:00Z"):
            ok(await call(session, "log_meal", description="rye porridge", meal_type="breakfast",
                          eaten_at=eaten))  # fmt: skip
        meals = ok(await call(session, "list_meals"))
        assert [m["id"] for m in meals["items"]] == rest("/meals")
        assert meals["items"][0]["eaten_at"].startswith("2031-01-02")  # newest first
        ok(
            await call(
                session, "create_event", title="Boiler check", starts_at="2031-01-03T09:00:00Z"
            )
        )
        events = ok(await call(session, "list_events"))
        assert [e["id"] for e in events["items"]] == rest("/events")

        # the caller's zone: dates in words are read in it, the item's times shown in it
        tokyo = ok(await call(session, "create_task", title="Call Kenji", due_at="2031-01-05 09:00",
                              tz="Asia/Tokyo"))  # fmt: skip
        assert tokyo["tz"] == "Asia/Tokyo" and tokyo["due_at"] == "2031-01-05T09:00:00+09:00"
        home = ok(await call(session, "create_task", title="Call Anna", due_at="2031-01-05 09:00"))
        assert home["tz"] == mcp_server.app.state.settings.personal.timezone
        meal = ok(await call(session, "log_meal", description="ramen", meal_type="dinner",
                             eaten_at="2031-01-05 19:00", tz="Asia/Tokyo"))  # fmt: skip
        assert meal["eaten_at"] == "2031-01-05T19:00:00+09:00"
        event = ok(await call(session, "create_event", title="Sumo", starts_at="2031-01-06 15:00",
                              tz="Asia/Tokyo"))  # fmt: skip
        assert event["starts_at"] == "2031-01-06T15:00:00+09:00"
        refused(await call(session, "create_task", title="x", tz="Mars/Olympus"), "tz", "IANA")
        refused(await call(session, "log_meal", description="x", meal_type="lunch", tz=""), "tz")
