"""The request table of the deterministic interpreter: requests, the tool calls they must make,
and the rows (or answers) they must leave. Used by tests/personal/test_interpreter_table.py
(against Postgres) and by bench/personal_interpreter.py (accuracy of the calls alone).

"Now" is Wednesday 12 March 2025, 10:00 in Europe/Berlin. Every case runs for a fresh user
holding `SEED`; `setup` requests run first (e.g. a list, so "the second one" means something).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Seeded rows: (title, due ISO or None, priority, tags, status).
SEED_TASKS: list[tuple[str, str | None, str, list[str], str]] = [
    ("Pay rent", "2025-03-14T09:00:00+01:00", "high", ["home"], "open"),
    ("Book the moving van", "2025-03-13T09:00:00+01:00", "high", ["move"], "open"),
    ("Call the moving company", "2025-03-17T09:00:00+01:00", "low", ["move"], "open"),
    ("File the tax return", "2025-04-15T09:00:00+02:00", "urgent", ["admin"], "open"),
    ("Renew library card", "2025-03-10T09:00:00+01:00", "normal", [], "open"),
    ("Buy birthday gift", None, "normal", [], "open"),
    ("Clean the garage", "2025-03-11T09:00:00+01:00", "normal", ["home"], "done"),
]
#: (meal_type, eaten ISO, description, calories, protein_g)
SEED_MEALS: list[tuple[str, str, str, int, float | None]] = [
    ("breakfast", "2025-03-12T08:00:00+01:00", "oatmeal with banana", 350, 10),
    ("snack", "2025-03-12T09:30:00+01:00", "apple", 80, None),
    ("lunch", "2025-03-11T12:30:00+01:00", "chicken salad", 520, 35),
    ("dinner", "2025-03-11T19:00:00+01:00", "vegetable curry with rice", 700, 18),
    ("dinner", "2025-03-10T19:30:00+01:00", "grilled salmon with vegetables", 550, 40),
    ("dinner", "2025-03-09T20:00:00+01:00", "pizza margherita", 900, 30),
]
#: (title, starts ISO, location, attendees, notes)
SEED_EVENTS: list[tuple[str, str, str, list[str], str]] = [
    ("Team meeting", "2025-03-13T10:00:00+01:00", "", ["Anna", "Ben"], "weekly status"),
    ("Lunch with Sara", "2025-03-13T12:30:00+01:00", "Rosa's", ["Sara"], ""),
    ("Dentist", "2025-03-14T15:00:00+01:00", "", [], ""),
    ("Budget planning", "2025-03-18T14:00:00+01:00", "", ["Anna"], "budget for the move"),
    ("PyCon conference", "2025-03-26T09:00:00+01:00", "Berlin", [], "talks"),
]


@dataclass(frozen=True)
class ListRef:
    """The id of item `n` (1-based) of the last list shown by the setup requests."""

    n: int


@dataclass(frozen=True)
class SeedRef:
    """The id of the seeded row with this title."""

    title: str


@dataclass(frozen=True)
class Row:
    """After the case, exactly one row of `kind` has these field values (datetimes as ISO)."""

    kind: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Gone:
    """After the case, no row of `kind` has this title/description."""

    kind: str
    title: str


@dataclass(frozen=True)
class Shown:
    """The case's (last) list shows these titles/descriptions, in this order (`exact`), or
    starts with them (a ranked search)."""

    titles: tuple[str, ...]
    exact: bool = True


@dataclass(frozen=True)
class Totals:
    """The nutrition totals the case reports."""

    calories: int
    meals: int


Check = Row | Gone | Shown | Totals


@dataclass(frozen=True)
class Case:
    """One request of the table."""

    agent: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    checks: tuple[Check, ...] = ()
    handoff: str | None = None
    setup: tuple[str, ...] = ()
    tags: tuple[str, ...] = field(default=())


T, F, E = "task", "food", "event"
BERLIN_WEEK = ("Renew library card", "Book the moving van", "Pay rent")

# fmt: off
CASES: list[Case] = [
    # --- task: create -----------------------------------------------------------------------
    Case(T, "remind me to renew my passport next Friday at 9",
         [("create_task", {"title": "Renew my passport", "due": "2025-03-14T09:00:00+01:00"})],
         (Row(T, {"title": "Renew my passport", "due_at": "2025-03-14T09:00:00+01:00"}),)),
    Case(T, "add a task: file the insurance claim by April 15, high priority",
         [("create_task", {"title": "File the insurance claim",
                           "due": "2025-04-15T09:00:00+02:00", "priority": "high"})],
         (Row(T, {"title": "File the insurance claim", "priority": "high",
                  "due_at": "2025-04-15T09:00:00+02:00"}),)),
    Case(T, "I need to call the plumber tomorrow",
         [("create_task", {"title": "Call the plumber", "due": "2025-03-13T09:00:00+01:00"})],
         (Row(T, {"title": "Call the plumber"}),)),
    Case(T, "todo: buy moving boxes #move",
         [("create_task", {"title": "Buy moving boxes", "tags": ["move"]})],
         (Row(T, {"title": "Buy moving boxes", "tags": ["move"], "due_at": None}),)),
    Case(T, "remind me to water the plants on Saturday at 10am",
         [("create_task", {"title": "Water the plants", "due": "2025-03-15T10:00:00+01:00"})],
         (Row(T, {"title": "Water the plants", "due_at": "2025-03-15T10:00:00+01:00"}),)),
    Case(T, "don't forget to send the invoice in 3 days, urgent",
         [("create_task", {"title": "Send the invoice", "due": "2025-03-15T09:00:00+01:00",
                           "priority": "urgent"})],
         (Row(T, {"title": "Send the invoice", "priority": "urgent"}),)),
    Case(T, "please remind me to pick up the dry cleaning at 5pm",
         [("create_task", {"title": "Pick up the dry cleaning",
                           "due": "2025-03-12T17:00:00+01:00"})],
         (Row(T, {"title": "Pick up the dry cleaning", "due_at": "2025-03-12T17:00:00+01:00"}),)),
    Case(T, "add call grandma to my to-do list",
         [("create_task", {"title": "Call grandma"})],
         (Row(T, {"title": "Call grandma", "status": "open"}),)),
    Case(T, "new task: renew the car insurance on March 31 #admin #car",
         [("create_task", {"title": "Renew the car insurance",
                           "due": "2025-03-31T09:00:00+02:00", "tags": ["admin", "car"]})],
         (Row(T, {"title": "Renew the car insurance", "tags": ["admin", "car"]}),)),
    Case(T, "I have to book flights next week, low priority",
         [("create_task", {"title": "Book flights", "due": "2025-03-17T09:00:00+01:00",
                           "priority": "low"})],
         (Row(T, {"title": "Book flights", "priority": "low"}),)),
    # --- task: lists ------------------------------------------------------------------------
    Case(T, "what's due this week?", [("list_tasks", {"due": "this week"})],
         (Shown(("Renew library card", "Book the moving van", "Pay rent")),)),
    Case(T, "what's on my to-do list?", [("list_tasks", {})],
         (Shown(("Renew library card", "Book the moving van", "Pay rent",
                 "Call the moving company", "File the tax return", "Buy birthday gift")),)),
    Case(T, "show my high-priority tasks", [("list_tasks", {"min_priority": "high"})],
         (Shown(("Book the moving van", "Pay rent", "File the tax return")),)),
    Case(T, "list tasks tagged move", [("list_tasks", {"tags": ["move"]})],
         (Shown(("Book the moving van", "Call the moving company")),)),
    Case(T, "what tasks are overdue?", [("list_tasks", {"overdue": True})],
         (Shown(("Renew library card",)),)),
    Case(T, "what's due tomorrow?", [("list_tasks", {"due": "tomorrow"})],
         (Shown(("Book the moving van",)),)),
    Case(T, "what do I have to do next week?", [("list_tasks", {"due": "next week"})],
         (Shown(("Call the moving company",)),)),
    Case(T, "what did I finish yesterday?",
         [("list_tasks", {"status": ["done"], "completed": "yesterday"})],
         (Shown(("Clean the garage",)),)),
    Case(T, "tasks about the tax return", [("search_tasks", {"query": "the tax return"})],
         tags=("semantic",)),
    Case(T, "high-priority tasks about the move",
         [("hybrid_search_tasks", {"query": "the move", "min_priority": "high"})],
         (Shown(("Book the moving van",), exact=False),)),
    Case(T, "show me urgent tasks", [("list_tasks", {"min_priority": "urgent"})],
         (Shown(("File the tax return",)),)),
    # --- task: changes ----------------------------------------------------------------------
    Case(T, "mark the second one done", [("complete_task", {"task_id": ListRef(2)})],
         (Row(T, {"title": "Book the moving van", "status": "done"}),),
         setup=("what's due this week?",)),
    Case(T, "mark 'buy birthday gift' as done", [("complete_task", {"match": "buy birthday gift"})],
         (Row(T, {"title": "Buy birthday gift", "status": "done"}),)),
    Case(T, "delete the first one", [("delete_task", {"task_id": ListRef(1)})],
         (Gone(T, "Renew library card"),), setup=("what's due this week?",)),
    Case(T, "I finished the third one", [("complete_task", {"task_id": ListRef(3)})],
         (Row(T, {"title": "Pay rent", "status": "done"}),), setup=("what's due this week?",)),
    Case(T, "move the first one to Monday",
         [("update_task", {"task_id": ListRef(1), "due": "2025-03-17T09:00:00+01:00"})],
         (Row(T, {"title": "Renew library card", "due_at": "2025-03-17T09:00:00+01:00"}),),
         setup=("what's due this week?",)),
    Case(T, "make the second one urgent", [("update_task", {"task_id": ListRef(2),
                                                            "priority": "urgent"})],
         (Row(T, {"title": "Book the moving van", "priority": "urgent"}),),
         setup=("what's due this week?",)),
    Case(T, "rename the last one to Pay March rent",
         [("update_task", {"task_id": ListRef(-1), "title": "Pay March rent"})],
         (Row(T, {"title": "Pay March rent"}),), setup=("what's due this week?",)),
    Case(T, "remove the task about the library card",
         [("delete_task", {"match": "library card"})], (Gone(T, "Renew library card"),)),
    # --- task: webhooks, memory, handoffs ---------------------------------------------------
    Case(T, "send me a reminder for the first one", [("send_task_reminder", {"task_id": ListRef(1)})],  # noqa: E501
         setup=("what's due this week?",)),
    Case(T, "send my daily summary", [("send_daily_summary", {"day": "today"})]),
    Case(T, "remember that I work 9-5 in Berlin", [("remember_fact", {"fact": "I work 9-5 in Berlin"})]),  # noqa: E501
    Case(T, "also put it on my calendar", [], handoff=E),
    Case(T, "I had a sandwich for lunch", [], handoff=F),
    Case(T, "remind me to call mom tomorrow at 6pm and also put it on my calendar",
         [("create_task", {"title": "Call mom", "due": "2025-03-13T18:00:00+01:00"})],
         (Row(T, {"title": "Call mom", "due_at": "2025-03-13T18:00:00+01:00"}),), handoff=E),
    Case(T, "how many calories did I eat today?", [], handoff=F),
    Case(T, "what's on my calendar tomorrow?", [], handoff=E),
    # --- food: logs -------------------------------------------------------------------------
    Case(F, "I had porridge with berries for breakfast, about 350 kcal",
         [("log_meal", {"description": "porridge with berries", "meal_type": "breakfast",
                        "eaten_at": "2025-03-12T08:00:00+01:00", "items": ["porridge", "berries"],
                        "calories": 350})],
         (Row(F, {"description": "porridge with berries", "calories": 350,
                  "eaten_at": "2025-03-12T08:00:00+01:00", "items": ["porridge", "berries"]}),)),
    Case(F, "for lunch I ate a chicken wrap, 520 calories, 35g protein",
         [("log_meal", {"description": "chicken wrap", "meal_type": "lunch",
                        "eaten_at": "2025-03-12T10:00:00+01:00", "calories": 520,
                        "protein_g": 35})],
         (Row(F, {"description": "chicken wrap", "meal_type": "lunch", "protein_g": 35.0}),)),
    Case(F, "yesterday's dinner was a mushroom risotto, 650 kcal",
         [("log_meal", {"description": "mushroom risotto", "meal_type": "dinner",
                        "eaten_at": "2025-03-11T19:00:00+01:00", "calories": 650})],
         (Row(F, {"description": "mushroom risotto", "eaten_at": "2025-03-11T19:00:00+01:00"}),)),
    Case(F, "snack: a banana",
         [("log_meal", {"description": "banana", "meal_type": "snack",
                        "eaten_at": "2025-03-12T10:00:00+01:00"})],
         (Row(F, {"description": "banana", "meal_type": "snack"}),)),
    Case(F, "I ate scrambled eggs and toast for breakfast",
         [("log_meal", {"description": "scrambled eggs and toast", "meal_type": "breakfast",
                        "eaten_at": "2025-03-12T08:00:00+01:00",
                        "items": ["scrambled eggs", "toast"]})],
         (Row(F, {"description": "scrambled eggs and toast", "items": ["scrambled eggs", "toast"]}),)),  # noqa: E501
    Case(F, "log a protein shake as a snack, 200 kcal, 30 g protein",
         [("log_meal", {"description": "protein shake", "meal_type": "snack",
                        "eaten_at": "2025-03-12T10:00:00+01:00", "calories": 200,
                        "protein_g": 30})],
         (Row(F, {"description": "protein shake", "calories": 200}),)),
    Case(F, "I had pasta for dinner on Monday, around 800 calories",
         [("log_meal", {"description": "pasta", "meal_type": "dinner",
                        "eaten_at": "2025-03-10T19:00:00+01:00", "calories": 800})],
         (Row(F, {"description": "pasta", "eaten_at": "2025-03-10T19:00:00+01:00"}),)),
    Case(F, "we had sushi for lunch yesterday",
         [("log_meal", {"description": "sushi", "meal_type": "lunch",
                        "eaten_at": "2025-03-11T12:30:00+01:00"})],
         (Row(F, {"description": "sushi", "eaten_at": "2025-03-11T12:30:00+01:00"}),)),
    # --- food: lists, totals, search --------------------------------------------------------
    Case(F, "what did I eat yesterday?", [("list_meals", {"eaten": "yesterday"})],
         (Shown(("chicken salad", "vegetable curry with rice")),)),
    Case(F, "what did I have for breakfast today?",
         [("list_meals", {"eaten": "today", "meal_type": ["breakfast"]})],
         (Shown(("oatmeal with banana",)),)),
    Case(F, "how many calories did I eat today?", [("nutrition_totals", {"period": "today"})],
         (Totals(430, 2),)),
    Case(F, "nutrition totals for this week", [("nutrition_totals", {"period": "this week"})],
         (Totals(2200, 5),)),
    Case(F, "how much protein did I have yesterday?",
         [("nutrition_totals", {"period": "yesterday"})], (Totals(1220, 2),)),
    Case(F, "show my dinners this week", [("list_meals", {"eaten": "this week",
                                                         "meal_type": ["dinner"]})],
         (Shown(("grilled salmon with vegetables", "vegetable curry with rice")),)),
    Case(F, "meals like the curry I had last week", [("search_meals", {"query": "the curry"})],
         tags=("semantic",)),
    Case(F, "healthy dinners under 600 kcal",
         [("hybrid_search_meals", {"query": "healthy", "meal_type": ["dinner"],
                                   "max_calories": 600})],
         (Shown(("grilled salmon with vegetables",)),)),
    Case(F, "meals under 400 kcal", [("list_meals", {"max_calories": 400})],
         (Shown(("oatmeal with banana", "apple")),)),
    Case(F, "delete the second one", [("delete_meal", {"meal_id": ListRef(2)})],
         (Gone(F, "vegetable curry with rice"),), setup=("what did I eat yesterday?",)),
    Case(F, "change the calories of the first one to 400",
         [("update_meal", {"meal_id": ListRef(1), "calories": 400})],
         (Row(F, {"description": "chicken salad", "calories": 400}),),
         setup=("what did I eat yesterday?",)),
    Case(F, "I'm vegetarian", [("remember_fact", {"fact": "I'm vegetarian"})]),
    Case(F, "send my daily summary", [("send_daily_summary", {"day": "today"})]),
    Case(F, "remind me to buy groceries", [], handoff=T),
    Case(F, "dinner with Anna on Friday at 7pm", [], handoff=E),
    # --- event: create ----------------------------------------------------------------------
    Case(E, "lunch with Sam on Thursday 12:30 at Rosa's",
         [("create_event", {"title": "Lunch with Sam", "starts": "2025-03-13T12:30:00+01:00",
                            "location": "Rosa's", "attendees": ["Sam"]})],
         (Row(E, {"title": "Lunch with Sam", "location": "Rosa's",
                  "starts_at": "2025-03-13T12:30:00+01:00",
                  "ends_at": "2025-03-13T13:30:00+01:00"}),),
    ),
    Case(E, "schedule a dentist appointment on March 20 at 3pm",
         [("create_event", {"title": "Dentist appointment",
                            "starts": "2025-03-20T15:00:00+01:00"})],
         (Row(E, {"title": "Dentist appointment", "starts_at": "2025-03-20T15:00:00+01:00"}),)),
    Case(E, "meeting with Anna and Ben tomorrow from 10 to 11",
         [("create_event", {"title": "Meeting with Anna and Ben",
                            "starts": "2025-03-13T10:00:00+01:00",
                            "ends": "2025-03-13T11:00:00+01:00", "attendees": ["Anna", "Ben"]})],
         (Row(E, {"title": "Meeting with Anna and Ben", "attendees": ["Anna", "Ben"],
                  "ends_at": "2025-03-13T11:00:00+01:00"}),)),
    Case(E, "coffee with Maria on Monday at 9:30",
         [("create_event", {"title": "Coffee with Maria", "starts": "2025-03-17T09:30:00+01:00",
                            "attendees": ["Maria"]})],
         (Row(E, {"title": "Coffee with Maria", "starts_at": "2025-03-17T09:30:00+01:00"}),)),
    Case(E, "add yoga class to my calendar on Saturday at 8am for 90 minutes",
         [("create_event", {"title": "Yoga class", "starts": "2025-03-15T08:00:00+01:00",
                            "ends": "2025-03-15T09:30:00+01:00"})],
         (Row(E, {"title": "Yoga class", "ends_at": "2025-03-15T09:30:00+01:00"}),)),
    Case(E, "book a haircut next Tuesday at 4pm",
         [("create_event", {"title": "Haircut", "starts": "2025-03-18T16:00:00+01:00"})],
         (Row(E, {"title": "Haircut"}),)),
    Case(E, "dinner with Anna on Friday at 7pm",
         [("create_event", {"title": "Dinner with Anna", "starts": "2025-03-14T19:00:00+01:00",
                            "attendees": ["Anna"]})],
         (Row(E, {"title": "Dinner with Anna", "starts_at": "2025-03-14T19:00:00+01:00"}),)),
    # --- event: lists and search ------------------------------------------------------------
    Case(E, "what's on my calendar tomorrow?", [("list_events", {"starts": "tomorrow"})],
         (Shown(("Team meeting", "Lunch with Sara")),)),
    Case(E, "what's on next week?", [("list_events", {"starts": "next week"})],
         (Shown(("Budget planning",)),)),
    Case(E, "what do I have on Friday?", [("list_events", {"starts": "on friday"})],
         (Shown(("Dentist",)),)),
    Case(E, "meetings with Anna", [("list_events", {"attendee": "Anna"})],
         (Shown(("Team meeting", "Budget planning")),)),
    Case(E, "events about the conference", [("search_events", {"query": "the conference"})],
         tags=("semantic",)),
    Case(E, "meetings with Anna next week about the budget",
         [("hybrid_search_events", {"query": "the budget", "starts": "next week",
                                    "attendee": "Anna"})],
         (Shown(("Budget planning",), exact=False),)),
    Case(E, "show my upcoming events", [("list_events", {"upcoming": True})],
         (Shown(("Team meeting", "Lunch with Sara", "Dentist", "Budget planning",
                 "PyCon conference")),)),
    # --- event: changes ---------------------------------------------------------------------
    Case(E, "cancel the first one", [("delete_event", {"event_id": ListRef(1)})],
         (Gone(E, "Team meeting"),), setup=("what's on my calendar tomorrow?",)),
    Case(E, "move the second one to Friday at 2pm",
         [("update_event", {"event_id": ListRef(2), "starts": "2025-03-14T14:00:00+01:00"})],
         (Row(E, {"title": "Lunch with Sara", "starts_at": "2025-03-14T14:00:00+01:00",
                  "ends_at": "2025-03-14T15:00:00+01:00"}),),
         setup=("what's on my calendar tomorrow?",)),
    Case(E, "cancel the dentist", [("delete_event", {"match": "dentist"})], (Gone(E, "Dentist"),)),
    Case(E, "announce the first one", [("announce_event", {"event_id": ListRef(1)})],
         setup=("what's on my calendar tomorrow?",)),
    Case(E, "add a task to prepare slides", [], handoff=T),
    Case(E, "I had a burger for lunch", [], handoff=F),
]
# fmt: on
