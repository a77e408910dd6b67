"""The deterministic request interpreters of the personal agents (used when no chat model is
configured): a request becomes a `Plan` of calls to the agent's own tools, a handoff decided by
the domain-shift check, or a short help reply.

    plan = interpret("task", "remind me to renew my passport next Friday at 9", situation)

A request with several parts ("remind me to call Bob tomorrow and also put it on my calendar")
is split into clauses: the agent's own clauses become tool calls, and the first clause of
another domain becomes the handoff (its text is the `request` the next agent works on).
"""

from __future__ import annotations

from collections.abc import Callable

from agents.personal.context import Domain
from agents.personal.interpret.common import (
    Plan,
    PlannedCall,
    Situation,
    clauses,
    reminder_lead,
)
from agents.personal.interpret.event import interpret_event
from agents.personal.interpret.food import interpret_food
from agents.personal.interpret.shift import best_domain, domain_scores, shift_check
from agents.personal.interpret.task import interpret_task

__all__ = [
    "Plan",
    "PlannedCall",
    "Situation",
    "best_domain",
    "domain_scores",
    "interpret",
    "shift_check",
]

INTERPRETERS: dict[Domain, Callable[[str, Situation], Plan]] = {
    "task": interpret_task,
    "food": interpret_food,
    "event": interpret_event,
}


def interpret(domain: Domain, text: str, situation: Situation) -> Plan:
    """The plan of `domain`'s agent for the request `text`."""
    parts = clauses(text) or [text]
    plan = Plan()
    own = INTERPRETERS[domain]
    for index, part in enumerate(parts):
        # "remind me an hour before" is a reminder of this item, not a request for the tasks
        own_words = reminder_lead(part)[1]
        handoff = shift_check(domain, own_words) if situation.incoming is None or index else None
        if handoff is not None:
            # "; " keeps the clauses apart, so the next agent splits the rest the same way
            handoff.context["request"] = "; ".join(parts[index:])
            plan.handoff = handoff
            break
        step = own(part, situation)
        plan.calls.extend(step.calls)
        if step.reply and not step.calls:
            plan.reply = step.reply
            if index == 0 and len(parts) > 1:
                continue
            break
    if plan.calls or plan.handoff:
        plan.reply = None if plan.calls else plan.reply
    return plan
