"""The engine against real Postgres with pgvector: CRUD, filters, pages, search, hybrid search,
totals, migrations and the row/vector consistency; and without pgvector: everything but search."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from pydantic import ValidationError

from tests.personal.support import BERLIN, NOW
from tools.personal.migrations import MIGRATIONS, migrate
from tools.personal.models import (
    EventCreate,
    EventFilter,
    EventUpdate,
    MealCreate,
    MealFilter,
    MealUpdate,
    TaskCreate,
    TaskFilter,
    TaskUpdate,
)
from tools.personal.service import InvalidItem, NotFound, PersonalService, SemanticSearchOff


async def test_migrations_are_idempotent_and_safe_concurrently(postgres_url: str) -> None:
    results = await asyncio.gather(*(migrate(postgres_url) for _ in range(4)))
    # Whatever ran first applied everything; the others found it done.
    assert sum(len(r) for r in results) <= len(MIGRATIONS)
    assert await migrate(postgres_url) == []


async def test_task_crud_keeps_zone_and_vectors(service: PersonalService, user: str) -> None:
    due = datetime(2025, 3, 14, 9, 0, tzinfo=BERLIN)
    task = await service.create_task(
        user,
        TaskCreate(title="Renew passport", due_at=due, tags=["#Admin", "admin"]),
        tz="Europe/Berlin",
    )
    assert task.due_at == due and task.due_at.utcoffset() == timedelta(hours=1)
    assert task.tags == ["admin"] and task.status == "open" and task.tz == "Europe/Berlin"
    assert await service.index.item_ids(user, "task") == {task.id}

    done = await service.complete_task(user, task.id)
    assert done.status == "done" and done.completed_at is not None
    again = await service.complete_task(user, task.id)
    assert again.completed_at == done.completed_at
    reopened = await service.update_task(user, task.id, TaskUpdate(status="open", title="Renew ID"))
    assert reopened.completed_at is None and reopened.title == "Renew ID"
    hits = await service.search(user, "task", "renew id")
    assert [h.item.id for h in hits] == [task.id]

    deleted = await service.delete_task(user, task.id)
    assert deleted.id == task.id
    assert await service.index.item_ids(user, "task") == set()
    with pytest.raises(NotFound):
        await service.get_task(user, task.id)


async def test_task_filters_and_pages(service: PersonalService, user: str) -> None:
    for day in range(5):
        await service.create_task(
            user,
            TaskCreate(
                title=f"task {day}",
                due_at=NOW + timedelta(days=day),
                priority="high" if day % 2 else "low",
                tags=["move"] if day < 2 else [],
            ),
        )
    await service.create_task(user, TaskCreate(title="someday"))
    page = await service.list_tasks(user, limit=2)
    assert [t.title for t in page.items] == ["task 0", "task 1"]
    assert page.total == 6 and page.next_offset == 2
    last = await service.list_tasks(user, limit=2, offset=4)
    assert [t.title for t in last.items] == ["task 4", "someday"] and last.next_offset is None
    empty = await service.list_tasks(user, limit=2, offset=10)
    assert empty.items == [] and empty.total == 6

    high = await service.list_tasks(user, TaskFilter(min_priority="high"))
    assert [t.title for t in high.items] == ["task 1", "task 3"]
    window = TaskFilter(due_from=NOW + timedelta(days=1), due_to=NOW + timedelta(days=3))
    assert [t.title for t in (await service.list_tasks(user, window)).items] == ["task 1", "task 2"]
    tagged = await service.list_tasks(user, TaskFilter(tags=["move"]))
    assert {t.title for t in tagged.items} == {"task 0", "task 1"}
    like = await service.list_tasks(user, TaskFilter(text="100%_"))
    assert like.items == []  # LIKE wildcards in input are literal
    with pytest.raises(ValueError, match="limit"):
        await service.list_tasks(user, limit=10_000)


async def test_meals_and_totals(service: PersonalService, user: str) -> None:
    breakfast = await service.create_meal(
        user,
        MealCreate(
            eaten_at=NOW.replace(hour=8),
            meal_type="breakfast",
            description="oatmeal with banana",
            items=["oatmeal", "banana"],
            calories=350,
            protein_g=10,
        ),
        tz="Europe/Berlin",
    )
    await service.create_meal(
        user,
        MealCreate(
            eaten_at=NOW.replace(hour=19),
            meal_type="dinner",
            description="vegetable curry",
            calories=650,
            fat_g=20.5,
        ),
        tz="Europe/Berlin",
    )
    await service.create_meal(
        user,
        MealCreate(
            eaten_at=NOW - timedelta(days=1), meal_type="dinner", description="pizza", calories=900
        ),
    )
    day = NOW.replace(hour=0)
    totals = await service.nutrition_totals(user, day, day + timedelta(days=1), tz="Europe/Berlin")
    assert (totals.meals, totals.calories, totals.protein_g, totals.fat_g) == (2, 1000, 10, 20.5)
    week = await service.nutrition_totals(
        user, day - timedelta(days=3), day + timedelta(days=1), tz="Europe/Berlin"
    )
    assert week.by_day == {"2025-03-11": 900, "2025-03-12": 1000}

    light = await service.list_meals(user, MealFilter(meal_type=["dinner"], max_calories=700))
    assert [m.description for m in light.items] == ["vegetable curry"]
    changed = await service.update_meal(user, breakfast.id, MealUpdate(calories=400))
    assert changed.calories == 400 and changed.items == ["oatmeal", "banana"]
    with pytest.raises(ValidationError):
        MealCreate.model_validate({"eaten_at": NOW, "meal_type": "brunch", "description": "x"})
    with pytest.raises(ValidationError):
        MealCreate(eaten_at=NOW.replace(tzinfo=None), meal_type="lunch", description="x")


async def test_events_keep_duration_and_validate(service: PersonalService, user: str) -> None:
    start = datetime(2025, 3, 13, 12, 30, tzinfo=BERLIN)
    event = await service.create_event(
        user,
        EventCreate(title="Lunch with Sam", starts_at=start, location="Rosa's", attendees=["Sam"]),
        tz="Europe/Berlin",
    )
    assert event.ends_at == start + timedelta(hours=1)
    moved = await service.update_event(
        user, event.id, EventUpdate(starts_at=start + timedelta(days=1))
    )
    assert moved.ends_at is not None and moved.ends_at - moved.starts_at == timedelta(hours=1)
    with pytest.raises(InvalidItem):
        await service.update_event(user, event.id, EventUpdate(ends_at=start - timedelta(days=3)))
    assert (await service.get_event(user, event.id)).starts_at == start + timedelta(days=1)
    with_sam = await service.list_events(user, EventFilter(attendee="sam"))
    assert [e.id for e in with_sam.items] == [event.id]
    with pytest.raises(ValidationError):
        EventCreate(title="x", starts_at=start, ends_at=start)


async def test_hybrid_filters_then_ranks_and_folds_duplicates(
    service: PersonalService, user: str
) -> None:
    for title, priority in [
        ("book the moving van", "high"),
        ("pack boxes for the move", "high"),
        ("pack boxes for the move", "high"),
        ("call the moving company", "low"),
        ("file the tax return", "high"),
    ]:
        await service.create_task(user, TaskCreate(title=title, priority=priority))
    hits = await service.hybrid_search(user, "task", "the move", TaskFilter(min_priority="high"))
    titles = [h.item.title for h in hits]
    assert titles[0] == "pack boxes for the move"
    assert titles.count("pack boxes for the move") == 1 and hits[0].duplicates == 1
    assert "call the moving company" not in titles  # the filter comes first
    assert all(h.item.priority == "high" for h in hits)
    assert await service.hybrid_search(user, "task", "move", TaskFilter(tags=["nothing"])) == []


async def test_without_pgvector_rows_work_and_search_is_off(
    service_without_pgvector: PersonalService, user: str
) -> None:
    service = service_without_pgvector
    task = await service.create_task(user, TaskCreate(title="Renew passport", tags=["admin"]))
    assert (await service.list_tasks(user, TaskFilter(text="passport"))).total == 1
    changed = await service.update_task(user, task.id, TaskUpdate(title="Renew ID"))
    assert changed.title == "Renew ID"
    assert await service.index.item_ids(user, "task") == set()
    searches = (
        service.search(user, "task", "passport"),
        service.hybrid_search(user, "task", "passport", TaskFilter(tags=["admin"])),
        service.reindex(user),
    )
    for search in searches:
        with pytest.raises(SemanticSearchOff) as refused:
            await search
        assert refused.value.status == 503 and "pgvector" in str(refused.value)
    assert (await service.delete_task(user, task.id)).id == task.id
