"""Each personal tool called directly (as a ToolNode calls it) against real Postgres with
pgvector; semantic search with the bundled MiniLM; owner scoping through the tools; without
pgvector, the search tools answer an error naming the fix."""

from __future__ import annotations

import uuid
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command
from psycopg_pool import AsyncConnectionPool

from agents.personal.context import DOMAINS, PersonalContext
from agents.personal.tools import agent_tools
from tests.personal.conftest import make_service, new_pool
from tests.personal.support import NOW
from tools.personal.service import PersonalService

TOOLS: dict[str, BaseTool] = {
    t.name + ("" if t.name != "send_daily_summary" else f":{i}"): t
    for i, name in enumerate(DOMAINS)
    for t in agent_tools(name)
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
    pgvector_db: str, minilm: Any, user: str
) -> None:
    # Vectors of another size than the shared test database's: a database of their own.
    pool: AsyncConnectionPool = new_pool(pgvector_db)
    await pool.open()
    service = await make_service(pool, minilm)
    ctx = ctx_for(service, user)
    for title, priority in [
        ("Submit the 2024 income tax declaration", "normal"),
        ("Book a moving truck for the relocation", "high"),
        ("Pack the kitchen into boxes", "high"),
        ("Buy flowers for mum", "high"),
    ]:
        await call("create_task", ctx, title=title, priority=priority)
    tax = await call("search_tasks", ctx, query="tasks about the tax return", limit=1)
    assert tax.artifact["items"][0]["title"].startswith("Submit the 2024 income tax")
    move = await call(
        "hybrid_search_tasks",
        ctx,
        query="the move to the new flat",
        min_priority="high",
        limit=3,
    )
    titles = [i["title"] for i in move.artifact["items"]]
    assert titles[-1] == "Buy flowers for mum", titles
    assert "Submit the 2024 income tax declaration" not in titles
    for text, kcal, kind in [
        ("chicken tikka masala curry with rice", 800, "dinner"),
        ("steamed vegetables with tofu", 420, "dinner"),
        ("cheeseburger and fries", 1100, "dinner"),
        ("green salad with quinoa", 380, "lunch"),
    ]:
        await call("log_meal", ctx, description=text, meal_type=kind, calories=kcal)
    curry = await call("search_meals", ctx, query="the curry", limit=1)
    assert "curry" in curry.artifact["items"][0]["description"]
    healthy = await call(
        "hybrid_search_meals", ctx, query="healthy", meal_type=["dinner"], max_calories=600
    )
    assert [i["description"] for i in healthy.artifact["items"]] == ["steamed vegetables with tofu"]
    await pool.close()


async def test_without_pgvector_items_work_and_the_search_tools_name_the_fix(
    service_without_pgvector: PersonalService, user: str
) -> None:
    """The machine's Postgres 15 has no pgvector: items are stored, listed, filtered, changed
    and deleted as usual, and every semantic or hybrid search answers the model an error that
    names the fix (instead of failing the turn)."""
    service = service_without_pgvector
    assert service.semantic_search_off and "pgvector" in service.semantic_search_off
    ctx = ctx_for(service, user)
    made = await call("create_task", ctx, title="File the tax return", priority="high")
    task_id = made.artifact["items"][0]["id"]
    await call("create_task", ctx, title="Buy flowers for mum")
    listed = await call("list_tasks", ctx, text="tax")
    assert [i["id"] for i in listed.artifact["items"]] == [task_id]
    done = await call("complete_task", ctx, match="tax return")
    assert done.artifact["items"][0]["status"] == "done"
    meal = await call("log_meal", ctx, description="lentil soup", meal_type="lunch", calories=450)
    assert meal.status == "success"
    event = await call("create_event", ctx, title="Dentist", starts="Friday 15:00")
    assert event.status == "success"
    searches: list[tuple[str, dict[str, Any]]] = [
        ("search_tasks", {"query": "taxes"}),
        ("hybrid_search_tasks", {"query": "taxes", "min_priority": "high"}),
        ("search_meals", {"query": "soup"}),
        ("hybrid_search_meals", {"query": "soup", "meal_type": ["lunch"]}),
        ("search_events", {"query": "teeth"}),
        ("hybrid_search_events", {"query": "teeth", "starts": "this week"}),
    ]
    for name, args in searches:
        refused = await call(name, ctx, **args)
        text = str(refused.content)
        assert refused.status == "error", name
        assert text.startswith("Error: Semantic search of tasks, meals and events is off"), text
        assert "pgvector" in text and "DATABASE_URL" in text, text
    gone = await call("delete_task", ctx, task_id=task_id)
    assert gone.artifact["action"] == "deleted"
    assert [t.title for t in (await service.list_tasks(user)).items] == ["Buy flowers for mum"]
