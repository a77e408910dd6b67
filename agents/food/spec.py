"""The food agent's registration: its card (what the router knows of it) and its spec."""

from __future__ import annotations

from agents.contract.personal import personal_spec
from agents.contract.spec import AgentSpec
from agents.food.agent import DEFINITION

DESCRIPTION = (
    "The user's own food diary: logs what the user ate (breakfast, lunch, dinner, snacks) with "
    "calories and macros, lists meals eaten, sums calories, protein, carbs and fat for a day or "
    "a week, finds similar meals, and sends the daily food summary."
)

#: Routing keywords (whole words, two distinct ones route a message here).
KEYWORDS = (
    "i had",
    "i ate",
    "ate",
    "eaten",
    "for breakfast",
    "for lunch",
    "for dinner",
    "breakfast",
    "dinner",
    "snack",
    "meal",
    "meals",
    "calories",
    "calorie",
    "kcal",
    "protein",
    "carbs",
    "fat",
    "macros",
    "nutrition",
    "food diary",
    "food log",
    "my macros",
    "my calories",
)

EXAMPLES = (
    "I had oatmeal with banana for breakfast, about 350 kcal",
    "What did I eat yesterday?",
    "How many calories did I have this week?",
    "Log a chicken salad for lunch, 520 calories",
    "Meals like the burrito I had last week",
    "Show my healthy dinners under 600 kcal",
)


def food_agent() -> AgentSpec:
    """The food agent (the user's food diary and nutrition)."""
    return personal_spec(DEFINITION, description=DESCRIPTION, keywords=KEYWORDS, examples=EXAMPLES)
