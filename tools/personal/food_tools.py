"""The food agent's tools: log, list, update and delete meals, nutrition totals, semantic and
hybrid search, and the daily-summary webhook. `food_tools()` makes the agent's list."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from langchain.tools import tool
from langchain_core.tools import BaseTool
from langgraph.types import Command
from pydantic import BaseModel, Field

from tools.personal.context import Domain
from tools.personal.format import totals_text
from tools.personal.models import MAX_LIST_ITEMS, MealCreate, MealFilter, MealType, MealUpdate
from tools.personal.toolkit import (
    Runtime,
    SummaryArgs,
    ctx_of,
    guarded,
    item_reply,
    list_reply,
    make_remember_tool,
    make_transfer_tool,
    moment,
    reply,
    send_event,
)
from tools.personal.toolkit import period as read_period

DOMAIN: Domain = "food"

#: When a meal of each type is taken to be eaten when no time is given (hour, minute).
MEAL_TIMES: dict[str, tuple[int, int]] = {
    "breakfast": (8, 0),
    "lunch": (12, 30),
    "dinner": (19, 0),
}


def default_meal_time(meal_type: str, day: datetime, now: datetime) -> datetime:
    """The usual time of `meal_type` on `day`'s date, never later than `now`; a snack is now."""
    hour, minute = MEAL_TIMES.get(meal_type, (now.hour, now.minute))
    moment_ = day.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return min(moment_, now) if moment_.date() == now.date() else moment_


class LogMealArgs(BaseModel):
    description: str = Field(min_length=1, max_length=200, description="What was eaten.")
    meal_type: MealType = Field(description="breakfast, lunch, dinner or snack.")
    eaten_at: str | None = Field(
        None, max_length=200, description="When (ISO 8601 or words); default: the usual time today."
    )
    items: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    calories: int | None = Field(None, ge=0, le=20_000)
    protein_g: float | None = Field(None, ge=0, le=2_000)
    carbs_g: float | None = Field(None, ge=0, le=2_000)
    fat_g: float | None = Field(None, ge=0, le=2_000)


@tool(args_schema=LogMealArgs)
async def log_meal(
    description: str,
    meal_type: MealType,
    eaten_at: str | None = None,
    items: list[str] | None = None,
    calories: int | None = None,
    protein_g: float | None = None,
    carbs_g: float | None = None,
    fat_g: float | None = None,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Log a meal the user ate, with calories and macros when known."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        now = ctx.clock()
        when = moment(eaten_at, ctx, prefer="past") or default_meal_time(meal_type, now, now)
        meal = await ctx.service.create_meal(
            ctx.user_id,
            MealCreate(
                eaten_at=when,
                meal_type=meal_type,
                description=description,
                items=items or [],
                calories=calories,
                protein_g=protein_g,
                carbs_g=carbs_g,
                fat_g=fat_g,
            ),
            tz=ctx.timezone,
        )
        return item_reply(runtime, "logged", "meal", meal, now)

    return await guarded(runtime, work())


class ListMealsArgs(BaseModel):
    eaten: str | None = Field(
        None, max_length=100, description="Period: 'today', 'yesterday', 'this week', a date."
    )
    meal_type: list[MealType] | None = None
    min_calories: int | None = Field(None, ge=0, le=20_000)
    max_calories: int | None = Field(None, ge=0, le=20_000)
    text: str | None = Field(None, max_length=200, description="Description or items contain this.")
    limit: int = Field(20, ge=1, le=100)
    offset: int = Field(0, ge=0, le=100_000)


@tool(args_schema=ListMealsArgs)
async def list_meals(
    eaten: str | None = None,
    meal_type: list[MealType] | None = None,
    min_calories: int | None = None,
    max_calories: int | None = None,
    text: str | None = None,
    limit: int = 20,
    offset: int = 0,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """List the user's meals with structured filters (period, meal type, calories)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        flt: dict[str, Any] = {
            "meal_type": meal_type or None,
            "min_calories": min_calories,
            "max_calories": max_calories,
            "text": text,
        }
        parts: list[str] = []
        if span := read_period(eaten, ctx, prefer="past"):
            flt.update(eaten_from=span.start, eaten_to=span.end)
            parts.append(f"eaten {span.label}")
        if meal_type:
            parts.insert(0, "of type " + "/".join(meal_type))
        if max_calories is not None:
            parts.append(f"under {max_calories} kcal")
        page = await ctx.service.list_meals(
            ctx.user_id, MealFilter(**flt), limit=limit, offset=offset
        )
        return list_reply(
            runtime,
            "meal",
            page.items,
            ctx.clock(),
            label=" ".join(parts) or "logged",
            total=page.total,
        )

    return await guarded(runtime, work())


class UpdateMealArgs(BaseModel):
    meal_id: int = Field(ge=1, description="The meal's id (#n in lists).")
    description: str | None = Field(None, min_length=1, max_length=200)
    meal_type: MealType | None = None
    eaten_at: str | None = Field(None, max_length=200)
    items: list[str] | None = Field(None, max_length=MAX_LIST_ITEMS)
    calories: int | None = Field(None, ge=0, le=20_000)
    protein_g: float | None = Field(None, ge=0, le=2_000)
    carbs_g: float | None = Field(None, ge=0, le=2_000)
    fat_g: float | None = Field(None, ge=0, le=2_000)


@tool(args_schema=UpdateMealArgs)
async def update_meal(
    meal_id: int,
    description: str | None = None,
    meal_type: MealType | None = None,
    eaten_at: str | None = None,
    items: list[str] | None = None,
    calories: int | None = None,
    protein_g: float | None = None,
    carbs_g: float | None = None,
    fat_g: float | None = None,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Correct a logged meal (description, type, time, items, calories, macros)."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "description": description,
                "meal_type": meal_type,
                "items": items,
                "calories": calories,
                "protein_g": protein_g,
                "carbs_g": carbs_g,
                "fat_g": fat_g,
            }.items()
            if v is not None
        }
        if eaten_at is not None:
            changes["eaten_at"] = moment(eaten_at, ctx, prefer="past")
        if not changes:
            raise ValueError("nothing to change")
        meal = await ctx.service.update_meal(ctx.user_id, meal_id, MealUpdate(**changes))
        return item_reply(runtime, "updated", "meal", meal, ctx.clock())

    return await guarded(runtime, work())


class MealIdArgs(BaseModel):
    meal_id: int = Field(ge=1, description="The meal's id (#n in lists).")


@tool(args_schema=MealIdArgs)
async def delete_meal(meal_id: int, *, runtime: Runtime) -> Command[Any]:
    """Delete a logged meal."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        meal = await ctx.service.delete_meal(ctx.user_id, meal_id)
        return item_reply(runtime, "deleted", "meal", meal, ctx.clock())

    return await guarded(runtime, work())


class TotalsArgs(BaseModel):
    period: str = Field(
        "today", max_length=100, description="'today', 'yesterday', 'this week', 'last 7 days'."
    )


@tool(args_schema=TotalsArgs)
async def nutrition_totals(period: str = "today", *, runtime: Runtime) -> Command[Any]:
    """Total calories, protein, carbs and fat of the meals in a day or a week."""
    span_text = period

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        span = read_period(span_text, ctx, prefer="past")
        assert span is not None
        totals = await ctx.service.nutrition_totals(
            ctx.user_id, span.start, span.end, tz=ctx.timezone
        )
        return reply(
            runtime,
            totals_text(totals, span.label),
            data={
                "action": "totals",
                "kind": "meal",
                "label": span.label,
                "totals": totals.model_dump(mode="json"),
            },
            context={"last_totals": {"label": span.label, "calories": totals.calories}},
        )

    return await guarded(runtime, work())


class SearchMealsArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the meals were like.")
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=SearchMealsArgs)
async def search_meals(query: str, limit: int = 10, *, runtime: Runtime) -> Command[Any]:
    """Find the user's meals by meaning ('meals like the curry I had last week')."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        hits = await ctx.service.search(ctx.user_id, "meal", query, limit=limit)
        return list_reply(
            runtime,
            "meal",
            [h.item for h in hits],
            ctx.clock(),
            label=f"like '{query}'",
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


class HybridMealsArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="What the meals are like.")
    meal_type: list[MealType] | None = None
    eaten: str | None = Field(None, max_length=100, description="Within this period.")
    min_calories: int | None = Field(None, ge=0, le=20_000)
    max_calories: int | None = Field(None, ge=0, le=20_000)
    limit: int = Field(10, ge=1, le=100)


@tool(args_schema=HybridMealsArgs)
async def hybrid_search_meals(
    query: str,
    meal_type: list[MealType] | None = None,
    eaten: str | None = None,
    min_calories: int | None = None,
    max_calories: int | None = None,
    limit: int = 10,
    *,
    runtime: Runtime,
) -> Command[Any]:
    """Filter meals (type, period, calories), then rank them by meaning
    ('healthy dinners under 600 kcal')."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        flt: dict[str, Any] = {
            "meal_type": meal_type or None,
            "min_calories": min_calories,
            "max_calories": max_calories,
        }
        if span := read_period(eaten, ctx, prefer="past"):
            flt.update(eaten_from=span.start, eaten_to=span.end)
        hits = await ctx.service.hybrid_search(
            ctx.user_id, "meal", query, MealFilter(**flt), limit=limit
        )
        label = f"like '{query}'" + (f" under {max_calories} kcal" if max_calories else "")
        return list_reply(
            runtime,
            "meal",
            [h.item for h in hits],
            ctx.clock(),
            label=label,
            scores=[h.score for h in hits],
        )

    return await guarded(runtime, work())


@tool("send_daily_summary", args_schema=SummaryArgs)
async def send_food_summary(day: str = "today", *, runtime: Runtime) -> Command[Any]:
    """Send a 'daily summary' webhook with the day's meals and nutrition totals."""

    async def work() -> Command[Any]:
        ctx = ctx_of(runtime)
        span = read_period(day, ctx, prefer="past")
        assert span is not None
        end = span.start + timedelta(days=1)
        totals = await ctx.service.nutrition_totals(ctx.user_id, span.start, end, tz=ctx.timezone)
        meals = await ctx.service.list_meals(
            ctx.user_id, MealFilter(eaten_from=span.start, eaten_to=end), limit=100
        )
        data = {
            "domain": "food",
            "day": span.start.date().isoformat(),
            "totals": totals.model_dump(mode="json"),
            "meals": [m.model_dump(mode="json") for m in meals.items],
        }
        return await send_event(runtime, "daily.summary", data, f"the food summary of {span.label}")

    return await guarded(runtime, work())


def food_tools(*, transfers: bool = True) -> list[BaseTool]:
    """The food agent's tools (with transfer tools to the task and event agents)."""
    tools: list[BaseTool] = [
        log_meal,
        list_meals,
        update_meal,
        delete_meal,
        nutrition_totals,
        search_meals,
        hybrid_search_meals,
        send_food_summary,
        make_remember_tool(),
    ]
    if transfers:
        tools += [make_transfer_tool(DOMAIN, "task"), make_transfer_tool(DOMAIN, "event")]
    return tools
