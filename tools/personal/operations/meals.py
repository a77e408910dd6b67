"""The meal operations: log, list, change and delete meals, nutrition totals, semantic and
hybrid search, and the daily-summary webhook of the owner's food diary."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import AliasChoices, AwareDatetime, BaseModel, Field

from tools.operations import Arguments, OperationContext
from tools.personal.models import (
    MAX_LIST_ITEMS,
    Meal,
    MealCreate,
    MealFilter,
    MealType,
    MealUpdate,
    NutritionTotals,
)
from tools.personal.operations.common import (
    DayArgs,
    Limit,
    Listing,
    Offset,
    Sent,
    Zone,
    changes,
    clock,
    engine,
    get_operation,
    moment,
    period,
    personal,
    refusals,
    search_operation,
    send_webhook,
    zoned,
)

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


class LogMeal(Arguments):
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
    tz: Zone = None


@personal()
async def log_meal(ctx: OperationContext, args: LogMeal) -> Meal:
    """Log a meal the user ate, with calories and macros when known."""
    ctx = zoned(ctx, args.tz)
    with refusals():
        now = clock(ctx)
        when = moment(args.eaten_at, ctx, prefer="past")
        data = MealCreate(
            eaten_at=when or default_meal_time(args.meal_type, now, now),
            **args.model_dump(exclude={"eaten_at", "tz"}),
        )
        return await engine(ctx).create_meal(ctx.owner, data, tz=ctx.timezone)


class MealId(Arguments):
    meal_id: int = Field(ge=1, le=2**62, description="The meal's id (#n in lists).")


get_meal = get_operation("meal", Meal, MealId)


class ListMeals(Arguments):
    """The filters of a meal list; the defaults are GET /meals's (newest first, a page of
    PERSONAL_PAGE_SIZE): the route passes only what its caller gave."""

    eaten: str | None = Field(
        None, max_length=100, description="Period: 'today', 'yesterday', 'this week', a date."
    )
    meal_type: list[MealType] | None = None
    min_calories: int | None = Field(None, ge=0, le=20_000)
    max_calories: int | None = Field(None, ge=0, le=20_000)
    text: str | None = Field(
        None,
        max_length=200,
        validation_alias=AliasChoices("text", "q"),  # GET /meals's ?q= too
        description="Description or items contain this.",
    )
    eaten_from: AwareDatetime | None = Field(None, description="Eaten at or after (ISO 8601).")
    eaten_to: AwareDatetime | None = Field(None, description="Eaten before (ISO 8601).")
    newest_first: bool = Field(True, description="The latest meals first (default).")
    limit: Limit = None
    offset: Offset = 0


@personal(read_only=True)
async def list_meals(ctx: OperationContext, args: ListMeals) -> Listing[Meal]:
    """List the user's meals with structured filters (period, meal type, calories)."""
    with refusals():
        flt: dict[str, Any] = {
            "meal_type": args.meal_type or None,
            "min_calories": args.min_calories,
            "max_calories": args.max_calories,
            "text": args.text,
            "eaten_from": args.eaten_from,
            "eaten_to": args.eaten_to,
        }
        parts: list[str] = []
        if span := period(args.eaten, ctx, prefer="past"):
            flt.update(eaten_from=span.start, eaten_to=span.end)
            parts.append(f"eaten {span.label}")
        if args.meal_type:
            parts.insert(0, "of type " + "/".join(args.meal_type))
        if args.max_calories is not None:
            parts.append(f"under {args.max_calories} kcal")
        page = await engine(ctx).list_meals(
            ctx.owner,
            MealFilter(**flt),
            limit=args.limit,
            offset=args.offset,
            newest_first=args.newest_first,
        )
        return Listing[Meal].of_page("meal", " ".join(parts) or "logged", page)


class UpdateMeal(MealId):
    """The fields given are changed."""

    description: str | None = Field(None, min_length=1, max_length=200)
    meal_type: MealType | None = None
    eaten_at: str | None = Field(None, max_length=200)
    items: list[str] | None = Field(None, max_length=MAX_LIST_ITEMS)
    calories: int | None = Field(None, ge=0, le=20_000)
    protein_g: float | None = Field(None, ge=0, le=2_000)
    carbs_g: float | None = Field(None, ge=0, le=2_000)
    fat_g: float | None = Field(None, ge=0, le=2_000)
    clear: list[
        Literal[
            "description",
            "meal_type",
            "eaten_at",
            "items",
            "calories",
            "protein_g",
            "carbs_g",
            "fat_g",
        ]
    ] = Field(default_factory=list, max_length=8, description="Fields to empty, e.g. ['fat_g'].")


@personal()
async def update_meal(ctx: OperationContext, args: UpdateMeal) -> Meal:
    """Correct a logged meal (description, type, time, items, calories, macros)."""
    with refusals():
        dates = {"eaten_at": "eaten_at"}
        found = changes(args, ctx, keys={"meal_id"}, dates=dates, prefer="past")
        if not found:
            raise ValueError("nothing to change")
        return await engine(ctx).update_meal(ctx.owner, args.meal_id, MealUpdate(**found))


@personal()
async def delete_meal(ctx: OperationContext, args: MealId) -> Meal:
    """Delete a logged meal."""
    with refusals():
        return await engine(ctx).delete_meal(ctx.owner, args.meal_id)


class TotalsArgs(Arguments):
    period: str = Field(
        "today", max_length=100, description="'today', 'yesterday', 'this week', 'last 7 days'."
    )


class Totals(BaseModel):
    """The nutrition totals of a period, and the period's words."""

    label: str
    totals: NutritionTotals


@personal(read_only=True)
async def nutrition_totals(ctx: OperationContext, args: TotalsArgs) -> Totals:
    """Total calories, protein, carbs and fat of the meals in a day or a week."""
    with refusals():
        span = period(args.period, ctx, prefer="past")
        assert span is not None
        totals = await engine(ctx).nutrition_totals(
            ctx.owner, span.start, span.end, tz=ctx.timezone
        )
        return Totals(label=span.label, totals=totals)


search_meals = search_operation(
    "meal",
    Meal,
    description="Find the user's meals by meaning ('meals like the curry I had last week').",
    query_help="What the meals were like.",
    label="like",
)


class HybridSearchMeals(Arguments):
    query: str = Field(min_length=1, max_length=500, description="What the meals are like.")
    meal_type: list[MealType] | None = None
    eaten: str | None = Field(None, max_length=100, description="Within this period.")
    min_calories: int | None = Field(None, ge=0, le=20_000)
    max_calories: int | None = Field(None, ge=0, le=20_000)
    limit: int = Field(10, ge=1, le=100)


@personal(read_only=True)
async def hybrid_search_meals(ctx: OperationContext, args: HybridSearchMeals) -> Listing[Meal]:
    """Filter meals (type, period, calories), then rank them by meaning
    ('healthy dinners under 600 kcal')."""
    with refusals():
        flt: dict[str, Any] = {
            "meal_type": args.meal_type or None,
            "min_calories": args.min_calories,
            "max_calories": args.max_calories,
        }
        if span := period(args.eaten, ctx, prefer="past"):
            flt.update(eaten_from=span.start, eaten_to=span.end)
        hits = await engine(ctx).hybrid_search(
            ctx.owner, "meal", args.query, MealFilter(**flt), limit=args.limit
        )
        under = f" under {args.max_calories} kcal" if args.max_calories else ""
        return Listing[Meal].of_hits("meal", f"like '{args.query}'{under}", hits)


@personal()
async def send_food_summary(ctx: OperationContext, args: DayArgs) -> Sent:
    """Send a 'daily summary' webhook with the day's meals and nutrition totals."""
    with refusals():
        span = period(args.day, ctx, prefer="past")
        assert span is not None
        end = span.start + timedelta(days=1)
        service = engine(ctx)
        totals = await service.nutrition_totals(ctx.owner, span.start, end, tz=ctx.timezone)
        meals = await service.list_meals(
            ctx.owner, MealFilter(eaten_from=span.start, eaten_to=end), limit=100
        )
        data = {
            "domain": "food",
            "day": span.start.date().isoformat(),
            "totals": totals.model_dump(mode="json"),
            "meals": [m.model_dump(mode="json") for m in meals.items],
        }
        return await send_webhook(ctx, "daily.summary", data, f"the food summary of {span.label}")


MEAL_OPERATIONS = (
    log_meal,
    get_meal,
    list_meals,
    update_meal,
    delete_meal,
    nutrition_totals,
    search_meals,
    hybrid_search_meals,
    send_food_summary,
)
