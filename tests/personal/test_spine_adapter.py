"""The personal agents' adapter to the root graph (agents/personal/turn.py): the handoff
decision recorded in state and read back, the follow-up carried over, the answer written."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from agents.personal.context import HandoffDecision, PersonalAgentResult
from agents.personal.turn import answer_of, carried_over, incoming_handoff, own_context

TO_EVENT = HandoffDecision(
    should_handoff=True,
    target_agent="event",
    reason="calendar entries belong to the event agent (domain shift from task)",
    context={"from": "task", "subject": "Call mom", "done": "Created task #2: Call mom"},
)


def state(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)], **extra}


def test_the_decision_is_read_back_only_on_a_handoff_turn_naming_this_agent() -> None:
    contexts = {"task": {"handoff": TO_EVENT.model_dump(), "last_turn": 1}}
    route = {"method": "handoff", "reason": TO_EVENT.reason}
    assert incoming_handoff("event", state("x", agent_contexts=contexts, route=route)) == TO_EVENT
    # routed otherwise (a stale decision of an earlier turn), or to another agent: none
    keyword = {**route, "method": "keyword"}
    assert incoming_handoff("event", state("x", agent_contexts=contexts, route=keyword)) is None
    stale = {**route, "reason": "meals and nutrition belong to the food agent"}
    assert incoming_handoff("event", state("x", agent_contexts=contexts, route=stale)) is None
    assert incoming_handoff("food", state("x", agent_contexts=contexts, route=route)) is None


def test_a_follow_up_about_it_carries_the_previous_turns_item_over() -> None:
    item = {"id": 1, "label": "Renew my passport", "title": "Renew my passport",
            "when": "2025-03-14T09:00:00+01:00"}  # fmt: skip
    contexts = {"task": {"last_item": item, "last_turn": 3}, "event": {"last_turn": 2}}
    found = carried_over(
        "event", state("please also put it on my calendar", agent_contexts=contexts)
    )
    assert found is not None and found.target_agent == "event"
    assert found.context == {"from": "task", "request": "put it on my calendar",
                             "subject": "Renew my passport", "when": item["when"]}  # fmt: skip
    # the task agent's own request, an older item, or no "it": nothing carried over
    for text, kept in (
        ("remind me to call Bob and put it on my calendar", contexts),
        ("please also put it on my calendar", {**contexts, "event": {"last_turn": 4}}),
        ("what's on my calendar tomorrow?", contexts),
    ):
        assert carried_over("event", state(text, agent_contexts=kept)) is None, text


def test_the_answer_records_the_decision_for_the_spine_and_the_next_agent() -> None:
    result = PersonalAgentResult(
        agent="task", answer="Created task #2: Call mom", method="interpreter",
        handoff=TO_EVENT.model_copy(update={"context": {"from": "task"}}),
        context={"last_item": {"id": 2}},
    )  # fmt: skip
    update = answer_of("task", result, None)
    answer = update["agent_answers"]["task"]
    assert answer["handoff_to"] == "event" and answer["handoff_reason"] == TO_EVENT.reason
    recorded = update["agent_contexts"]["task"]["handoff"]
    assert recorded == answer["data"]["handoff"]
    assert recorded["context"]["done"] == "Created task #2: Call mom"
    # the receiving agent's answer starts with what the first one did
    done = PersonalAgentResult(agent="event", answer="Created event #5", method="interpreter")
    reply = answer_of("event", done, TO_EVENT)["agent_answers"]["event"]
    assert reply["answer"] == "Created task #2: Call mom\nCreated event #5"
    assert reply["handoff_to"] is None and reply["data"]["handed_over"]["context"]["from"] == "task"


def test_the_agent_gets_its_own_context_without_the_spines_bookkeeping() -> None:
    kept = {"event": {"last_list": [], "turns_handled": 3, "last_turn": 5, "handoff": {}}}
    assert own_context("event", {"agent_contexts": kept}) == {"last_list": []}
