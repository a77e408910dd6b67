"""A personal operation is defined once: the agent's tool and the REST route answer with the
same result for the same owner's data (both call the operation)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.personal.context import PersonalContext
from app.operations import context_for
from app.security import Caller
from config import Settings
from main import create_app
from tests.personal.test_tools import call
from tools.operations import OperationContext, OperationRegistry
from tools.personal.operations import OPERATIONS
from tools.personal.service import PersonalService


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[tuple[TestClient, dict[str, str]]]:
    key = f"key-{uuid.uuid4().hex}"
    settings = make_settings(personal_timezone="Europe/Berlin", api_keys=key)
    with TestClient(create_app(settings)) as test_client:
        yield test_client, {"Authorization": f"Bearer {key}"}


def test_operations_are_registered_once_with_schemas() -> None:
    registry = OperationRegistry(OPERATIONS)
    assert len(registry.of("personal")) == len(OPERATIONS) == 28
    for op in OPERATIONS:
        assert op.input_schema()["type"] == "object" and op.output_schema()
    assert {"create_task", "log_meal", "create_event", "search_tasks"} <= {
        o.name for o in OPERATIONS
    }


def test_operations_take_the_rest_bodys_field_names() -> None:
    """MCP clients are shown the REST body's names (``due_at``, ``starts_at``, ...); the agents'
    model still sees the short names, and both are accepted."""
    registry = OperationRegistry(OPERATIONS)
    shown = {
        name: registry.get(name).input_schema()["properties"]
        for name in ("create_task", "update_task", "create_event", "update_event")
    }
    assert "due_at" in shown["create_task"] and "due" not in shown["create_task"]
    assert "due_at" in shown["update_task"]
    for name in ("create_event", "update_event"):
        assert {"starts_at", "ends_at"} <= set(shown[name]) and "starts" not in shown[name]
    assert registry.get("create_event").input_schema()["required"] == ["title", "starts_at"]
    for name, rest, short in (
        ("create_task", {"title": "x", "due_at": "tomorrow"}, {"title": "x", "due": "tomorrow"}),
        ("create_event", {"title": "x", "starts_at": "9:00", "ends_at": "10:00"},
         {"title": "x", "starts": "9:00", "ends": "10:00"}),
        ("update_task", {"task_id": 1, "due_at": "today"}, {"task_id": 1, "due": "today"}),
        ("list_tasks", {"q": "tax", "tag": ["home"]}, {"text": "tax", "tags": ["home"]}),
        ("list_meals", {"q": "oats"}, {"text": "oats"}),
        ("list_events", {"q": "dentist"}, {"text": "dentist"}),
    ):  # fmt: skip
        op = registry.get(name)
        assert op.parse(rest) == op.parse(short), name

    def never_called(runtime: Any) -> OperationContext:
        raise AssertionError("only the schema is read")

    model_sees: Any = registry.get("create_event").as_tool(never_called).tool_call_schema
    assert {"starts", "ends"} <= set(model_sees.model_json_schema()["properties"])


def test_a_result_is_the_same_as_a_tool_and_as_a_route(
    client: tuple[TestClient, dict[str, str]],
) -> None:
    http, key = client
    made = http.post("/tasks", json={"title": "File the tax return"}, headers=key)
    assert made.status_code == 201, made.text
    owner = made.json()["user_id"]
    http.post("/events", json={"title": "Dentist", "starts_at": "2030-05-02T15:00:00+02:00"},
              headers=key)  # fmt: skip
    service = http.app.state.services.agents.engine(PersonalService)  # type: ignore[attr-defined]
    ctx = PersonalContext(user_id=owner, service=service, timezone="Europe/Berlin")
    portal = http.portal
    assert portal is not None

    def tool(name: str, **args: Any) -> Any:
        async def run() -> Any:
            return await call(name, ctx, **args)

        return portal.call(run)

    routes = {
        "list_tasks": http.get("/tasks", headers=key).json()["items"],
        "list_events": http.get("/events", headers=key).json()["items"],
    }
    tools = {
        "list_tasks": tool("list_tasks", status=None).artifact["items"],
        "list_events": tool("list_events").artifact["items"],
    }
    assert routes == tools
    assert [t["title"] for t in routes["list_tasks"]] == ["File the tax return"]
    assert [e["title"] for e in routes["list_events"]] == ["Dentist"]
    # a change made by the tool is what the route reads back, and the reverse
    done = tool("complete_task", match="tax return").artifact["items"][0]
    assert http.get(f"/tasks/{done['id']}", headers=key).json() == done
    moved = http.patch(f"/tasks/{done['id']}", json={"priority": "high"}, headers=key).json()
    assert tool("list_tasks", status=["done"]).artifact["items"] == [moved]


def test_a_route_or_mcp_call_reads_dates_with_the_settings_zone_and_hour(
    make_settings: Callable[..., Settings],
) -> None:
    """Outside an agent (a route, an MCP call) nobody pins the zone or the hour a bare date
    means: they are PERSONAL_TIMEZONE and PERSONAL_DEFAULT_HOUR, as in the agents."""
    settings = make_settings(personal_timezone="Europe/Berlin", personal_default_hour=7)
    with TestClient(create_app(settings)) as test_client:
        services: Any = test_client.app.state.services  # type: ignore[attr-defined]
        ctx = context_for(Caller(owner=f"tz-{uuid.uuid4().hex}", client="test"), services)
        assert ctx.timezone == "Europe/Berlin"
        create = services.operations.get("create_task")
        portal: Any = test_client.portal
        task = portal.call(create, ctx, {"title": "file taxes", "due": "March 14, 2030"})
    due = task.due_at
    assert (due.hour, due.utcoffset().total_seconds()) == (7, 3600)
