"""The deterministic interpreter on the request table (tests/personal/cases.py): every request
makes exactly the expected tool calls (or handoff) and leaves the expected rows, against a
Postgres with pgvector."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from agents.personal.context import PersonalAgentResult, PersonalContext
from agents.personal.spec import run_personal_agent
from tests.personal.cases import (
    CASES,
    SEED_EVENTS,
    SEED_MEALS,
    SEED_TASKS,
    Case,
    Gone,
    ListRef,
    Row,
    SeedRef,
    Shown,
    Totals,
)
from tests.personal.support import NOW
from tools.personal.models import EventCreate, Kind, MealCreate, TaskCreate
from tools.personal.service import PersonalService

run_event_agent = partial(run_personal_agent, "event")
run_food_agent = partial(run_personal_agent, "food")
run_task_agent = partial(run_personal_agent, "task")

RUNNERS = {"task": run_task_agent, "food": run_food_agent, "event": run_event_agent}


async def seed(service: PersonalService, user: str) -> dict[str, int]:
    """The table's rows for `user`; returns {title: id}."""
    ids: dict[str, int] = {}
    tz = "Europe/Berlin"
    for title, due, priority, tags, status in SEED_TASKS:
        task = await service.create_task(
            user,
            TaskCreate(
                title=title,
                due_at=datetime.fromisoformat(due) if due else None,
                priority=priority,
                tags=tags,
            ),
            tz=tz,
        )
        ids[title] = task.id
        if status == "done":
            await service.complete_task(user, task.id)
            async with service.pool.connection() as conn:
                await conn.execute(
                    "UPDATE personal.tasks SET completed_at = %s WHERE user_id = %s AND id = %s",
                    (datetime.fromisoformat("2025-03-11T18:00:00+01:00"), user, task.id),
                )
    for meal_type, eaten, description, calories, protein in SEED_MEALS:
        meal = await service.create_meal(
            user,
            MealCreate(
                eaten_at=datetime.fromisoformat(eaten),
                meal_type=meal_type,
                description=description,
                calories=calories,
                protein_g=protein,
            ),
            tz=tz,
        )
        ids[description] = meal.id
    for title, starts, location, attendees, notes in SEED_EVENTS:
        event = await service.create_event(
            user,
            EventCreate(
                title=title,
                starts_at=datetime.fromisoformat(starts),
                location=location,
                attendees=attendees,
                notes=notes,
            ),
            tz=tz,
        )
        ids[title] = event.id
    return ids


def resolve(value: Any, listed: list[dict[str, Any]], ids: dict[str, int]) -> Any:
    if isinstance(value, ListRef):
        return listed[value.n - 1 if value.n > 0 else len(listed) + value.n]["id"]
    if isinstance(value, SeedRef):
        return ids[value.title]
    return value


def _field(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


async def check(
    case: Case, result: PersonalAgentResult, service: PersonalService, user: str
) -> None:
    for expected in case.checks:
        if isinstance(expected, Row | Gone):
            kind: Kind = {"task": "task", "food": "meal", "event": "event"}[expected.kind]  # type: ignore[assignment]
            items = (await service.list_items(user, kind, limit=100)).items
            rows = [item.model_dump() for item in items]
            if isinstance(expected, Row):
                matching = [
                    r
                    for r in rows
                    if all(_field(r.get(k)) == v for k, v in expected.fields.items())
                ]
                assert len(matching) == 1, (expected, rows)
            else:
                names = [r.get("title") or r.get("description") for r in rows]
                assert expected.title not in names
        elif isinstance(expected, Shown):
            listed = [d for d in result.data if d.get("action") == "list"][-1]["items"]
            titles = tuple(i.get("title") or i.get("description") for i in listed)
            if expected.exact:
                assert titles == expected.titles
            else:
                assert titles[: len(expected.titles)] == expected.titles, titles
        elif isinstance(expected, Totals):
            totals = [d for d in result.data if d.get("action") == "totals"][-1]["totals"]
            assert (totals["calories"], totals["meals"]) == (expected.calories, expected.meals)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.agent}:{c.text[:40]}" for c in CASES])
async def test_request(case: Case, service: PersonalService, user: str) -> None:
    ids = await seed(service, user)
    ctx = PersonalContext(
        user_id=user,
        service=service,
        timezone="Europe/Berlin",
        now=NOW,
        memory=InMemoryStore(),
    )
    run = RUNNERS[case.agent]
    domain_context: dict[str, Any] = {}
    for text in case.setup:
        domain_context = (await run(text, context=ctx, domain_context=domain_context)).context
    result = await run(case.text, context=ctx, domain_context=domain_context)
    listed = domain_context.get("last_list") or []
    expected = [
        (name, {k: resolve(v, listed, ids) for k, v in args.items()}) for name, args in case.calls
    ]
    assert [(c.name, c.args) for c in result.tool_calls] == expected
    assert result.handoff.target_agent == case.handoff
    assert result.method == "interpreter"
    if case.calls and not case.text.startswith(("send", "announce")):
        assert all(c.ok for c in result.tool_calls), result.answer
    await check(case, result, service, user)


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 60
    assert {c.agent for c in CASES} == {"task", "food", "event"}
