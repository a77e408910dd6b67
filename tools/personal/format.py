"""One-line descriptions of tasks, meals and events, as the agents show them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tools.personal.models import Event, Meal, NutritionTotals, Task


def when(value: datetime | None, now: datetime | None = None) -> str:
    """`Fri 14 Mar 09:00` (the year only when it is not the current one)."""
    if value is None:
        return ""
    text = value.strftime("%a %d %b")
    if now is not None and value.year != now.year:
        text += value.strftime(" %Y")
    if value.hour or value.minute:
        text += value.strftime(" %H:%M")
    return text


def describe(item: Task | Meal | Event, now: datetime | None = None) -> str:
    """A one-line description of an item."""
    if isinstance(item, Task):
        parts = [item.title]
        if item.due_at:
            parts.append(f"due {when(item.due_at, now)}")
        if item.priority not in ("normal",):
            parts.append(item.priority)
        if item.status != "open":
            parts.append(item.status)
        if item.tags:
            parts.append(" ".join(f"#{t}" for t in item.tags))
        return " — ".join(parts)
    if isinstance(item, Meal):
        text = f"{item.meal_type} {when(item.eaten_at, now)}: {item.description}"
        if item.calories is not None:
            text += f" ({item.calories} kcal)"
        return text
    text = f"{item.title} — {when(item.starts_at, now)}"
    if item.ends_at:
        text += f"–{item.ends_at.strftime('%H:%M')}"
    if item.location:
        text += f" at {item.location}"
    if item.attendees:
        text += f" with {', '.join(item.attendees)}"
    return text


def numbered(items: list[Any], now: datetime | None = None) -> str:
    """A numbered list (1-based, as "the second one" refers to it)."""
    return "\n".join(f"{i}. {describe(item, now)}" for i, item in enumerate(items, start=1))


def totals_text(totals: NutritionTotals, label: str) -> str:
    """`Today: 1000 kcal from 2 meals (protein 10 g, carbs 0 g, fat 20.5 g).`"""
    text = (
        f"{label[:1].upper()}{label[1:]}: {totals.calories} kcal from {totals.meals} meal"
        f"{'s' if totals.meals != 1 else ''} (protein {totals.protein_g:g} g, carbs "
        f"{totals.carbs_g:g} g, fat {totals.fat_g:g} g)."
    )
    if len(totals.by_day) > 1:
        text += " Per day: " + ", ".join(f"{d} {k} kcal" for d, k in totals.by_day.items()) + "."
    return text
