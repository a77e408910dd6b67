"""A multi-turn conversation without a model: the task agent creates a task, hands "also put it
on my calendar" off to the event agent (the test plays the root graph's handoff path), which
creates the event; user isolation across the agents; "mark the second one done"."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from agents.personal.context import PersonalContext
from agents.personal.spec import run_personal_agent
from tests.personal.support import BERLIN, NOW
from tools.personal.service import PersonalService

run_event_agent = partial(run_personal_agent, "event")
run_food_agent = partial(run_personal_agent, "food")
run_task_agent = partial(run_personal_agent, "task")


def context(service: PersonalService, user: str) -> PersonalContext:
    return PersonalContext(user_id=user, service=service, timezone="Europe/Berlin", now=NOW)


async def test_task_then_handoff_to_event(service: PersonalService, user: str) -> None:
    ctx = context(service, user)
    transcript: list[str] = []
    contexts: dict[str, dict] = {}

    first = await run_task_agent("remind me to renew my passport next Friday at 9", context=ctx)
    transcript += ["user: remind me to renew my passport next Friday at 9", f"task: {first.answer}"]
    contexts["task"] = first.context
    assert [c.name for c in first.tool_calls] == ["create_task"]
    assert not first.handoff.should_handoff

    second = await run_task_agent(
        "also put it on my calendar", context=ctx, domain_context=contexts["task"]
    )
    transcript += ["user: also put it on my calendar", f"task: {second.answer}"]
    assert second.tool_calls == []
    assert second.handoff.should_handoff and second.handoff.target_agent == "event"
    assert second.handoff.context["subject"] == "Renew my passport"
    contexts["task"] = second.context

    third = await run_event_agent(
        "also put it on my calendar",
        context=ctx,
        domain_context=contexts.get("event"),
        handoff=second.handoff,
    )
    transcript += [f"event (handoff: {second.handoff.reason}): {third.answer}"]
    assert [c.name for c in third.tool_calls] == ["create_event"]
    assert not third.handoff.should_handoff
    events = (await service.list_events(user)).items
    assert [(e.title, e.starts_at) for e in events] == [
        ("Renew my passport", datetime(2025, 3, 14, 9, 0, tzinfo=BERLIN))
    ]
    tasks = (await service.list_tasks(user)).items
    assert [(t.title, t.due_at) for t in tasks] == [
        ("Renew my passport", datetime(2025, 3, 14, 9, 0, tzinfo=BERLIN))
    ]
    print("\n".join(transcript))


async def test_compound_request_creates_then_hands_off(service: PersonalService, user: str) -> None:
    ctx = context(service, user)
    result = await run_task_agent(
        "remind me to call mom tomorrow at 6pm and also put it on my calendar", context=ctx
    )
    assert [c.name for c in result.tool_calls] == ["create_task"]
    assert result.handoff.target_agent == "event"
    assert result.handoff.context["request"] == "put it on my calendar"
    event = await run_event_agent("remind me ...", context=ctx, handoff=result.handoff)
    assert [c.name for c in event.tool_calls] == ["create_event"]
    [created] = (await service.list_events(user)).items
    assert created.title == "Call mom" and created.starts_at.hour == 18


async def test_no_ping_pong(service: PersonalService, user: str) -> None:
    ctx = context(service, user)
    first = await run_food_agent("remind me to buy groceries", context=ctx)
    assert first.handoff.target_agent == "task"
    # The task agent hands nothing back to food, whatever the words.
    back = await run_task_agent("remind me to buy groceries", context=ctx, handoff=first.handoff)
    assert [c.name for c in back.tool_calls] == ["create_task"]
    assert not back.handoff.should_handoff


async def test_mark_the_second_one_done_uses_the_last_list(
    service: PersonalService, user: str
) -> None:
    ctx = context(service, user)
    for text in (
        "remind me to pay rent on Friday",
        "remind me to call Bob tomorrow",
        "remind me to water plants on Thursday",
    ):
        await run_task_agent(text, context=ctx)
    shown = await run_task_agent("what's due this week?", context=ctx)
    assert "1." in shown.answer and "3." in shown.answer
    done = await run_task_agent(
        "mark the second one done", context=ctx, domain_context=shown.context
    )
    assert done.tool_calls[0].args == {"task_id": shown.context["last_list"][1]["id"]}
    finished = await service.get_task(user, shown.context["last_list"][1]["id"])
    assert finished.title == "Water plants" and finished.status == "done"


async def test_another_users_ids_are_not_found(service: PersonalService, user: str) -> None:
    mine = context(service, user)
    theirs = context(service, user + "-other")
    created = await run_task_agent("remind me to file taxes tomorrow", context=theirs)
    their_id = created.context["last_item"]["id"]
    for text in (
        f"mark #{their_id} done",
        f"delete task {their_id}",
        f"send a reminder for #{their_id}",
    ):
        result = await run_task_agent(text, context=mine)
        assert result.tool_calls and not any(c.ok for c in result.tool_calls), text
    steal = await run_task_agent(
        "what's due this week?", context=mine, domain_context=created.context
    )
    assert steal.context["last_list"] == []
    task = await service.get_task(user + "-other", their_id)
    assert task.status == "open"
