"""Accuracy of the personal agents' deterministic interpreter (the no-model path).

    python -m bench.personal_interpreter [--show-misses]

Two sets, interpreter only (no database: a request counts as right when its tool calls, with
their arguments, and its handoff target are exactly the expected ones):

- the request table of tests/personal/cases.py (the tests also check the rows it leaves);
  anchor: 100%, the tests require every request to pass;
- a held-out set below, paraphrases written before the interpreter was run on them and not
  tuned on afterwards: what a user who does not know the phrasing would get.

"Now" is Wednesday 12 March 2025, 10:00 Europe/Berlin; "the second one" refers to a shown list
of ids 101, 102, ...
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from agents.personal.context import Domain
from agents.personal.interpret import Situation, interpret
from tests.personal.cases import CASES, Case, ListRef, SeedRef
from tests.personal.support import NOW

LISTED = [{"id": 100 + n, "label": f"item {n}", "title": f"item {n}"} for n in range(1, 8)]

T, F, E = "task", "food", "event"
HELD_OUT: list[Case] = [
    Case(T, "remind me to pay the electricity bill on Monday",
         [("create_task", {"title": "Pay the electricity bill", "due": "2025-03-17T09:00:00+01:00"})]),  # noqa: E501
    Case(T, "add a reminder to call the bank tomorrow at 11",
         [("create_task", {"title": "Call the bank", "due": "2025-03-13T11:00:00+01:00"})]),
    Case(T, "I have to renew my gym membership by the end of the month",
         [("create_task", {"title": "Renew my gym membership", "due": "2025-03-31T09:00:00+02:00"})]),  # noqa: E501
    Case(T, "what's due today?", [("list_tasks", {"due": "today"})]),
    Case(T, "which tasks are due next week?", [("list_tasks", {"due": "next week"})]),
    Case(T, "show me everything tagged home", [("list_tasks", {"tags": ["home"]})]),
    Case(T, "tick off the first one", [("complete_task", {"task_id": ListRef(1)})], setup=("list",)),  # noqa: E501
    Case(T, "I'm done with the second one", [("complete_task", {"task_id": ListRef(2)})],
         setup=("list",)),
    Case(T, "push the third one to next Friday",
         [("update_task", {"task_id": ListRef(3), "due": "2025-03-14T09:00:00+01:00"})],
         setup=("list",)),
    Case(T, "get rid of the last one", [("delete_task", {"task_id": ListRef(-1)})], setup=("list",)),  # noqa: E501
    Case(T, "find tasks related to moving", [("search_tasks", {"query": "moving"})]),
    Case(T, "any overdue tasks?", [("list_tasks", {"overdue": True})]),
    Case(T, "put my dentist appointment on the calendar", [], handoff=E),
    Case(F, "I just had a bowl of ramen for dinner",
         [("log_meal", {"description": "bowl of ramen", "meal_type": "dinner",
                        "eaten_at": "2025-03-12T10:00:00+01:00"})]),
    Case(F, "breakfast was two boiled eggs, 160 kcal",
         [("log_meal", {"description": "two boiled eggs", "meal_type": "breakfast",
                        "eaten_at": "2025-03-12T08:00:00+01:00", "calories": 160})]),
    Case(F, "what did I eat on Monday?", [("list_meals", {"eaten": "on monday"})]),
    Case(F, "list everything I ate this week", [("list_meals", {"eaten": "this week"})]),
    Case(F, "calories yesterday", [("nutrition_totals", {"period": "yesterday"})]),
    Case(F, "what's my calorie intake this week?", [("nutrition_totals", {"period": "this week"})]),
    Case(F, "show me meals similar to pizza", [("search_meals", {"query": "pizza"})]),
    Case(F, "light lunches under 500 calories",
         [("hybrid_search_meals", {"query": "light", "meal_type": ["lunch"], "max_calories": 500})]),  # noqa: E501
    Case(F, "remove the first one", [("delete_meal", {"meal_id": ListRef(1)})], setup=("list",)),
    Case(F, "add a meeting with Tom on Friday", [], handoff=E),
    Case(E, "dinner with my parents on Sunday at 6pm",
         [("create_event", {"title": "Dinner with my parents", "starts": "2025-03-16T18:00:00+01:00",  # noqa: E501
                            "attendees": ["my parents"]})]),
    Case(E, "schedule a call with Lisa tomorrow at 3pm",
         [("create_event", {"title": "Call with Lisa", "starts": "2025-03-13T15:00:00+01:00",
                            "attendees": ["Lisa"]})]),
    Case(E, "put the school play on my calendar for Thursday at 6pm",
         [("create_event", {"title": "School play", "starts": "2025-03-13T18:00:00+01:00"})]),
    Case(E, "am I free tomorrow?", [("list_events", {"starts": "tomorrow"})]),
    Case(E, "what's on my agenda this week?", [("list_events", {"starts": "this week"})]),
    Case(E, "when is my next meeting?", [("list_events", {"upcoming": True})]),
    Case(E, "reschedule the first one to Monday at 10",
         [("update_event", {"event_id": ListRef(1), "starts": "2025-03-17T10:00:00+01:00"})],
         setup=("list",)),
    Case(E, "delete the second one", [("delete_event", {"event_id": ListRef(2)})], setup=("list",)),
    Case(E, "events with Sam next week", [("list_events", {"starts": "next week", "attendee": "Sam"})]),  # noqa: E501
    Case(E, "remind me to buy a gift for the party", [], handoff=T),
    Case(E, "I ate a salad for lunch", [], handoff=F),
]  # fmt: skip


def expected_calls(case: Case) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, args in case.calls:
        resolved = {}
        for key, value in args.items():
            if isinstance(value, ListRef):
                value = LISTED[value.n - 1 if value.n > 0 else len(LISTED) + value.n]["id"]
            elif isinstance(value, SeedRef):
                value = None  # the bench has no seeded rows; such a case cannot match
            resolved[key] = value
        out.append((name, resolved))
    return out


def judge(case: Case) -> tuple[bool, str]:
    context = {"last_list": LISTED} if case.setup else {}
    situation = Situation(now=NOW, tz="Europe/Berlin", domain_context=context)
    plan = interpret(case.agent, case.text, situation)  # type: ignore[arg-type]
    got = [(c.name, c.args) for c in plan.calls]
    target: Domain | None = plan.handoff.target_agent if plan.handoff else None
    ok = got == expected_calls(case) and target == case.handoff
    return ok, f"got {got} handoff={target}"


def report(name: str, cases: list[Case], anchor: str, show: bool) -> None:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses: list[str] = []
    start = time.perf_counter()
    for case in cases:
        ok, detail = judge(case)
        total[case.agent] += 1
        right[case.agent] += ok
        if not ok:
            misses.append(f"  [{case.agent}] {case.text!r}: {detail}")
    ms = (time.perf_counter() - start) * 1000 / max(1, len(cases))
    n, k = sum(total.values()), sum(right.values())
    per = ", ".join(f"{d} {right[d]}/{total[d]}" for d in ("task", "food", "event"))
    print(f"{name}: {k}/{n} = {100 * k / n:.1f}% ({per}); {ms:.2f} ms/request   [anchor: {anchor}]")
    if show and misses:
        print("\n".join(misses))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show-misses", action="store_true", help="print each wrong request")
    args = parser.parse_args()
    interpret("task", "warm up dateparser tomorrow", Situation(now=NOW, tz="Europe/Berlin"))
    report("request table", CASES, "100% (required by tests/personal)", args.show_misses)
    report("held-out paraphrases", HELD_OUT, "none yet (first measurement)", args.show_misses)


if __name__ == "__main__":
    main()
