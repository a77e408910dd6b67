"""The food agent's deterministic interpreter: meal logs, meal lists and nutrition totals."""

from __future__ import annotations

import re

from agents.personal.interpret.common import (
    Plan,
    Situation,
    reference,
    remove_spans,
    strip_filler,
    tidy_title,
)
from tools.personal.dates import find_range, find_when
from tools.personal.operations.meals import default_meal_time

HELP = (
    "I can log meals ('I had oatmeal with banana for breakfast, about 350 kcal'), show what "
    "you ate ('what did I eat yesterday?'), add up calories and macros for a day or a week, "
    "and find meals by what they were like ('meals like the curry I had last week')."
)

_I = re.IGNORECASE
_MEAL = r"(?P<meal>breakfast|lunch|dinner|supper|brunch|a snack|snack|dessert)"
_MEAL_WORDS = {"supper": "dinner", "brunch": "lunch", "a snack": "snack", "dessert": "snack"}
_KCAL = re.compile(
    r",?\s*(?:(?:about|around|approx(?:imately)?|roughly|~|maybe|ca\.?)\s*)?(?P<n>\d{1,5})\s*"
    r"(?:kcal|calories|cals?|kilocalories)\b",
    _I,
)
_MACRO = re.compile(
    r",?\s*(?:(?P<n1>\d{1,4}(?:\.\d+)?)\s*g(?:rams?)?\s+(?:of\s+)?(?P<m1>protein|carbs?|carbohydrates|fat)"  # noqa: E501
    r"|(?P<m2>protein|carbs?|carbohydrates|fat)\s*:?\s*(?P<n2>\d{1,4}(?:\.\d+)?)\s*g(?:rams?)?\b)",
    _I,
)
_LOG = (
    re.compile(rf"^(?:for|at)\s+{_MEAL}(?:\s+\w+day|\s+today|\s+yesterday)?,?\s+(?:i|we)\s+(?:had|ate)\s+(?P<food>.+)$", _I),  # noqa: E501
    re.compile(rf"^(?P<when>\w+day'?s?|today'?s|yesterday'?s|this morning'?s|tonight'?s)?\s*{_MEAL}\s*(?:was|were|:)\s*(?P<food>.+)$", _I),  # noqa: E501
    re.compile(rf"^(?:i|we)\s+(?:just\s+)?(?:had|ate|have eaten|'ve had|'ve eaten|eaten)\s+(?P<food>.+?)\s+(?:for|as)\s+{_MEAL}\b(?P<tail>.*)$", _I),  # noqa: E501
    re.compile(rf"^(?:log|add|record)\s+(?P<food>.+?)\s+(?:for|as)\s+{_MEAL}\b(?P<tail>.*)$", _I),
    re.compile(r"^(?:i|we)\s+(?:just\s+)?(?:had|ate|have eaten|'ve had|'ve eaten)\s+(?P<food>.+)$", _I),  # noqa: E501
    re.compile(r"^(?:log|record)\s+(?:a\s+meal:?\s*)?(?P<food>.+)$", _I),
)  # fmt: skip
_TOTALS = re.compile(
    r"\bhow (?:many|much)\b.*\b(?:calories|kcal|protein|carbs?|fat)\b|\b(?:nutrition|calorie|macro)s?\s*"  # noqa: E501
    r"(?:totals?|count|summary|intake)?\b|\btotals?\b|\bintake\b",
    _I,
)
_QUERY = re.compile(
    r"\bwhat did i (?:eat|have)\b|\bwhat have i eaten\b|\b(?:show|list)\b|\bmy meals\b|\bmeals\b"
    r"|\bdinners\b|\blunches\b|\bbreakfasts\b|\bsnacks\b|\bwhat was my\b",
    _I,
)
_LIKE = re.compile(r"\b(?:like|similar to|such as)\s+(?P<q>.+)$", _I)
_UNDER = re.compile(
    r"\b(?:under|below|less than|at most|<)\s*(?P<n>\d{2,5})\s*(?:kcal|calories|cal)?\b", _I
)
_OVER = re.compile(
    r"\b(?:over|above|more than|at least|>)\s*(?P<n>\d{2,5})\s*(?:kcal|calories|cal)?\b", _I
)
_REMEMBER = re.compile(
    r"^(?:remember|note|keep in mind)\s+that\s+(?P<fact>.+)$|^(?P<diet>i(?:'m| am) (?:a )?(?:vegetarian|vegan|pescatarian|lactose[- ]intolerant|gluten[- ]free|allergic to .+))$",  # noqa: E501
    _I,
)  # fmt: skip


def _meal_type(word: str | None, hour: int) -> str:
    if word:
        return _MEAL_WORDS.get(word.lower(), word.lower())
    if hour < 11:
        return "breakfast"
    if hour < 15:
        return "lunch"
    if hour < 17:
        return "snack"
    return "dinner"


def _numbers(text: str) -> tuple[dict[str, float | int], list[tuple[int, int]]]:
    values: dict[str, float | int] = {}
    spans: list[tuple[int, int]] = []
    if kcal := _KCAL.search(text):
        values["calories"] = int(kcal.group("n"))
        spans.append(kcal.span())
    for macro in _MACRO.finditer(text):
        name = (macro.group("m1") or macro.group("m2")).lower()
        number = float(macro.group("n1") or macro.group("n2"))
        key = "protein_g" if name == "protein" else "fat_g" if name == "fat" else "carbs_g"
        values[key] = int(number) if number.is_integer() else number
        spans.append(macro.span())
    return values, spans


def _items(description: str) -> list[str]:
    parts = re.split(r",\s*|\s+with\s+|\s+and\s+|\s*\+\s*|\s*&\s*", description, flags=_I)
    out = []
    for part in parts:
        item = re.sub(r"^(?:a|an|some|the|two|three|\d+)\s+", "", part.strip(), flags=_I)
        if item:
            out.append(item.lower())
    return out if len(out) > 1 else []


def _log(match: re.Match[str], text: str, situation: Situation, plan: Plan) -> Plan:
    groups = match.groupdict()
    food = groups.get("food") or ""
    tail = groups.get("tail") or ""
    numbers, spans = _numbers(food + " " + tail)
    body = remove_spans(food + " " + tail, spans)
    when = find_when(text, tz=situation.tz, now=situation.now, prefer="past")
    if when:
        # Drop the date words from the description ("yesterday", "at 8").
        lowered = body
        for start, end in when.spans:
            lowered = lowered.replace(text[start:end].strip(), " ")
        body = " ".join(lowered.split())
    description = tidy_title(re.sub(r"^(?:a|an|some)\s+", "", body.strip(" ,."), flags=_I))
    description = description[:1].lower() + description[1:]
    if not description:
        plan.reply = "What did you eat?"
        return plan
    day = when.start if when else situation.now
    meal_type = _meal_type(
        groups.get("meal"), (when.start if when and when.has_time else situation.now).hour
    )
    if when and when.has_time:
        eaten = when.start
    else:
        eaten = default_meal_time(meal_type, day, situation.now)
    return plan.call(
        "log_meal",
        description=description,
        meal_type=meal_type,
        eaten_at=eaten.isoformat(),
        items=_items(description) or None,
        **numbers,
    )


_PLURALS = {
    "breakfast": "breakfast", "breakfasts": "breakfast", "lunch": "lunch", "lunches": "lunch",
    "dinner": "dinner", "dinners": "dinner", "supper": "dinner", "suppers": "dinner",
    "snack": "snack", "snacks": "snack",
}  # fmt: skip


def _meal_filter(text: str) -> list[str] | None:
    words = re.findall(r"\b(breakfasts?|lunch(?:es)?|dinners?|suppers?|snacks?)\b", text, _I)
    found = sorted({_PLURALS[word.lower()] for word in words})
    return found or None


def interpret_food(text: str, situation: Situation) -> Plan:
    """The plan for one food-domain request."""
    plan = Plan()
    clean = strip_filler(text)
    if fact := _REMEMBER.match(clean):
        return plan.call("remember_fact", fact=fact.group("fact") or fact.group("diet"))
    if re.search(r"\bsend\b", clean, _I) and re.search(r"\bsummary\b|\breport\b", clean, _I):
        span = find_range(clean, tz=situation.tz, now=situation.now, prefer="past")
        return plan.call("send_daily_summary", day=span.label if span else "today")
    if re.search(r"\b(?:delete|remove|drop|undo)\b", clean, _I):
        ref = reference(clean, situation)
        if ref is None or ref.problem or ref.item_id is None:
            plan.reply = (
                ref.problem if ref else None
            ) or "Which meal? Ask for a list first, then say 'the second one'."
            return plan
        return plan.call("delete_meal", meal_id=ref.item_id)
    if re.search(r"\b(?:change|update|correct|fix|set)\b", clean, _I):
        ref = reference(clean, situation)
        numbers, _ = _numbers(clean)
        if not numbers and (to := re.search(r"\bto\s+(?P<n>\d{2,5})\b", clean)):
            numbers = {"calories": int(to.group("n"))}
        if ref and ref.item_id and numbers:
            return plan.call("update_meal", meal_id=ref.item_id, **numbers)
    if _TOTALS.search(clean) and not re.search(r"\b(?:i|we) (?:had|ate)\b", clean, _I):
        span = find_range(clean, tz=situation.tz, now=situation.now, prefer="past")
        return plan.call("nutrition_totals", period=span.label if span else "today")
    for pattern in _LOG:
        if match := pattern.match(clean):
            if pattern is _LOG[4] and re.match(
                r"^(?:i|we)\s+had\s+(?:a\s+)?(?:meeting|call)\b", clean, _I
            ):
                break
            return _log(match, clean, situation, plan)
    like = _LIKE.search(clean)
    under, over = _UNDER.search(clean), _OVER.search(clean)
    meal_types = _meal_filter(clean)
    span = find_range(clean, tz=situation.tz, now=situation.now, prefer="past")
    if like:
        query = re.sub(
            r"\s+(?:that\s+|which\s+)?(?:i|we)\s+(?:had|ate)\b.*$", "", like.group("q"), flags=_I
        )
        return plan.call("search_meals", query=query.strip(" ?.") or like.group("q").strip(" ?."))
    adjective = re.search(
        r"\b(healthy|light|vegetarian|vegan|spicy|sweet|high[- ]protein|low[- ]carb|heavy)\b",
        clean,
        _I,
    )
    if adjective and (meal_types or under or over):
        return plan.call(
            "hybrid_search_meals",
            query=adjective.group(1).lower(),
            meal_type=meal_types,
            eaten=span.label if span else None,
            max_calories=int(under.group("n")) if under else None,
            min_calories=int(over.group("n")) if over else None,
        )
    if _QUERY.search(clean) or span or under or over:
        asked_for = re.search(r"\bfor\s+" + _MEAL, clean, _I)
        if asked_for:
            meal_types = [_meal_type(asked_for.group("meal"), 0)]
        return plan.call(
            "list_meals",
            eaten=span.label if span else None,
            meal_type=meal_types,
            max_calories=int(under.group("n")) if under else None,
            min_calories=int(over.group("n")) if over else None,
        )
    plan.reply = HELP
    return plan
