"""Each personal tool called directly (as a ToolNode calls it) against real Postgres and both
vector backends; semantic search with the bundled MiniLM; owner scoping through the tools."""

from __future__ import annotations

import uuid
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from psycopg_pool import AsyncConnectionPool

from tests.personal.conftest import fresh_database, make_service, new_pool
from tests.personal.support import NOW
from tools.embedded import EmbeddedPostgres
from tools.personal.context import PersonalContext
from tools.personal.event_tools import event_tools
from tools.personal.food_tools import food_tools
from tools.personal.service import PersonalService
from tools.personal.task_tools import task_tools

TOOLS: dict[str, BaseTool] = {
    t.name + ("" if t.name != "send_daily_summary" else f":{i}"): t
    for i, factory in enumerate((task_tools, food_tools, event_tools))
    for t in factory()
}


async def call(
    name: str, ctx: PersonalContext, state: dict[str, Any] | None = None, **args: Any
) -> ToolMessage:
    """Invoke a tool with an injected runtime; returns its ToolMessage (the Command's)."""
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    runtime = ToolRuntime(
        state=state or {},
        context=ctx,
        config={},
        stream_writer=lambda _: None,
        tool_call_id=call_id,
        store=None,
    )
    out = await TOOLS[name].ainvoke(
        {"type": "tool_call", "id": call_id, "name": name, "args": {**args, "runtime": runtime}}
    )
    assert isinstance(out, Command)
    [message] = out.update["messages"]  # type: ignore[index]
    return message


def ctx_for(service: PersonalService, user: str) -> PersonalContext:
    return PersonalContext(user_id=user, service=service, timezone="Europe/Berlin", now=NOW)


async def test_task_tools_round_trip(service: PersonalService, user: str) -> None:
    ctx = ctx_for(service, user)
    made = await call(
        "create_task", ctx, title="Renew passport", due="next Friday at 9", tags=["admin"]
    )
    task_id = made.artifact["items"][0]["id"]
    assert made.artifact["items"][0]["due_at"] == "2025-03-14T09:00:00+01:00"
    listed = await call("list_tasks", ctx, due="this week")
    assert [i["id"] for i in listed.artifact["items"]] == [task_id]
    changed = await call("update_task", ctx, task_id=task_id, priority="high", due="Monday 8:00")
    assert changed.artifact["items"][0]["due_at"] == "2025-03-17T08:00:00+01:00"
    done = await call("complete_task", ctx, match="passport")
    assert done.artifact["items"][0]["status"] == "done"
    bad = await call("update_task", ctx, task_id=task_id, due="the twelfth of never")
    assert bad.status == "error" and "could not read" in str(bad.content)
    gone = await call("delete_task", ctx, task_id=task_id)
    assert gone.artifact["action"] == "deleted"
    again = await call("delete_task", ctx, task_id=task_id)
    assert again.status == "error" and "Not found" in str(again.content)


async def test_food_and_event_tools(service: PersonalService, user: str) -> None:
    ctx = ctx_for(service, user)
    meal = await call(
        "log_meal",
        ctx,
        description="lentil soup",
        meal_type="lunch",
        eaten_at="yesterday 13:00",
        calories=450,
        protein_g=20,
    )
    assert meal.artifact["items"][0]["eaten_at"] == "2025-03-11T13:00:00+01:00"
    totals = await call("nutrition_totals", ctx, period="yesterday")
    assert totals.artifact["totals"]["calories"] == 450
    fixed = await call("update_meal", ctx, meal_id=meal.artifact["items"][0]["id"], calories=500)
    assert fixed.artifact["items"][0]["calories"] == 500
    event = await call(
        "create_event",
        ctx,
        title="Lunch with Sam",
        starts="Thursday 12:30",
        location="Rosa's",
        attendees=["Sam"],
    )
    assert event.artifact["items"][0]["ends_at"] == "2025-03-13T13:30:00+01:00"
    moved = await call("update_event", ctx, match="lunch with sam", starts="Friday 13:00")
    assert moved.artifact["items"][0]["ends_at"] == "2025-03-14T14:00:00+01:00"
    shown = await call("list_events", ctx, attendee="sam")
    assert len(shown.artifact["items"]) == 1
    invalid = await call("create_event", ctx, title="x", starts="Friday 10:00", ends="Friday 09:00")
    assert invalid.status == "error"


async def test_tools_never_touch_another_users_rows(service: PersonalService, user: str) -> None:
    mine, theirs = ctx_for(service, user), ctx_for(service, user + "-other")
    secret = await call("create_task", theirs, title="Secret plan about the tax return")
    their_id = secret.artifact["items"][0]["id"]
    meal = await call("log_meal", theirs, description="secret cake", meal_type="snack")
    event = await call("create_event", theirs, title="Secret date", starts="tomorrow 20:00")
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("update_task", {"task_id": their_id, "title": "pwned"}),
        ("complete_task", {"task_id": their_id}),
        ("delete_task", {"task_id": their_id}),
        ("complete_task", {"match": "secret plan"}),
        ("update_meal", {"meal_id": meal.artifact["items"][0]["id"], "calories": 1}),
        ("delete_meal", {"meal_id": meal.artifact["items"][0]["id"]}),
        ("delete_event", {"event_id": event.artifact["items"][0]["id"]}),
        ("update_event", {"match": "secret date", "title": "pwned"}),
        ("announce_event", {"event_id": event.artifact["items"][0]["id"]}),
    ]
    for name, args in attempts:
        result = await call(name, mine, **args)
        assert result.status == "error", (name, result.content)
    reads: list[tuple[str, dict[str, Any]]] = [
        ("list_tasks", {"status": ["open", "done"]}),
        ("search_tasks", {"query": "secret plan tax return"}),
        ("hybrid_search_tasks", {"query": "secret plan"}),
        ("list_meals", {}),
        ("search_meals", {"query": "cake"}),
        ("list_events", {}),
        ("search_events", {"query": "secret date"}),
    ]
    for name, args in reads:
        result = await call(name, mine, **args)
        assert result.artifact["items"] == [], name
    assert (await service.get_task(user + "-other", their_id)).title.startswith("Secret plan")


async def test_semantic_and_hybrid_search_with_minilm(
    postgres_url: str, embedded_server: EmbeddedPostgres, minilm: Any, user: str
) -> None:
    # Vectors of another size than the shared test database's: a database of their own.
    for backend, url in (("qdrant", postgres_url), ("pgvector", fresh_database(embedded_server))):
        pool: AsyncConnectionPool = new_pool(url)
        await pool.open()
        service = await make_service(backend, pool, minilm)
        ctx = ctx_for(service, f"{user}-{backend}")
        for title, priority in [
            ("Submit the 2024 income tax declaration", "normal"),
            ("Book a moving truck for the relocation", "high"),
            ("Pack the kitchen into boxes", "high"),
            ("Buy flowers for mum", "high"),
        ]:
            await call("create_task", ctx, title=title, priority=priority)
        tax = await call("search_tasks", ctx, query="tasks about the tax return", limit=1)
        assert tax.artifact["items"][0]["title"].startswith("Submit the 2024 income tax"), backend
        move = await call(
            "hybrid_search_tasks",
            ctx,
            query="the move to the new flat",
            min_priority="high",
            limit=3,
        )
        titles = [i["title"] for i in move.artifact["items"]]
        assert titles[-1] == "Buy flowers for mum", (backend, titles)
        assert "Submit the 2024 income tax declaration" not in titles
        for text, kcal, kind in [
            ("chicken tikka masala curry with rice", 800, "dinner"),
            ("steamed vegetables with tofu", 420, "dinner"),
            ("cheeseburger and fries", 1100, "dinner"),
            ("green salad with quinoa", 380, "lunch"),
        ]:
            await call("log_meal", ctx, description=text, meal_type=kind, calories=kcal)
        curry = await call("search_meals", ctx, query="the curry", limit=1)
        assert "curry" in curry.artifact["items"][0]["description"], backend
        healthy = await call(
            "hybrid_search_meals", ctx, query="healthy", meal_type=["dinner"], max_calories=600
        )
        assert [i["description"] for i in healthy.artifact["items"]] == [
            "steamed vegetables with tofu"
        ]
        await pool.close()
