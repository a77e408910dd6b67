"""The personal agents with a model: the real `langchain-openai` client against the stub OpenAI
server, with scripted tool calls. Checks the tools each agent offers, the context section of
the prompt, the transfer tool's handoff, and long-term facts in LangGraph's Postgres store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from functools import partial
from typing import Any

import httpx
import pytest
from langchain_openai import ChatOpenAI
from langgraph.store.postgres import AsyncPostgresStore

from agents.personal.context import PersonalContext
from agents.personal.spec import build_personal_agent, run_personal_agent
from tests.personal.support import BERLIN, NOW
from tests.support.stub_openai import StubOpenAI, StubReply
from tools.personal.service import PersonalService

build_event_agent = partial(build_personal_agent, "event")
build_food_agent = partial(build_personal_agent, "food")
build_task_agent = partial(build_personal_agent, "task")
run_event_agent = partial(run_personal_agent, "event")
run_task_agent = partial(run_personal_agent, "task")


def model(stub: StubOpenAI) -> ChatOpenAI:
    # An HTTP client of this test's event loop (the default one is shared across loops).
    return ChatOpenAI(
        base_url=stub.base_url,
        api_key="sk-t",
        model="stub-model",
        max_retries=0,
        http_async_client=httpx.AsyncClient(),
    )


def script(*replies: StubReply) -> Any:
    """A responder answering the n-th model call of a turn with the n-th reply."""

    def respond(request: dict[str, Any]) -> StubReply:
        messages = request["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        return replies[min(step, len(replies) - 1)]

    return respond


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


def tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def ctx(service: PersonalService, user: str, **extra: Any) -> PersonalContext:
    return PersonalContext(
        user_id=user, service=service, timezone="Europe/Berlin", now=NOW, **extra
    )


async def test_each_agent_offers_only_its_own_tools(
    stub_openai: StubOpenAI, service: PersonalService, user: str
) -> None:
    stub_openai.responder = script(StubReply(content="ok"))
    llm = model(stub_openai)
    seen = {}
    for name, build in (
        ("task", build_task_agent),
        ("food", build_food_agent),
        ("event", build_event_agent),
    ):
        agent = build(llm)
        assert build(llm) is agent  # created once, reused
        result = await agent.run("hello", context=ctx(service, user))
        assert result.method == "llm" and result.answer == "ok"
        seen[name] = tool_names(stub_openai.requests[-1])
    assert {"create_task", "complete_task", "transfer_to_event"} <= seen["task"]
    assert {"log_meal", "nutrition_totals", "transfer_to_task"} <= seen["food"]
    assert {"create_event", "announce_event", "transfer_to_food"} <= seen["event"]
    assert not seen["task"] & {"log_meal", "create_event", "transfer_to_task"}
    assert not seen["food"] & {"create_task", "create_event", "transfer_to_food"}
    for request in stub_openai.requests:
        for tool in request["tools"]:
            assert "runtime" not in tool["function"]["parameters"].get("properties", {})
            assert "user_id" not in tool["function"]["parameters"].get("properties", {})


async def test_model_creates_a_task_with_a_natural_date(
    stub_openai: StubOpenAI, service: PersonalService, user: str
) -> None:
    stub_openai.responder = script(
        StubReply(
            tool_calls=[
                (
                    "create_task",
                    {"title": "Renew my passport", "due": "next Friday at 9", "priority": "high"},
                )
            ]
        ),
        StubReply(content="Done: I will remind you on Friday at 9."),
    )
    result = await run_task_agent(
        "remind me to renew my passport next Friday at 9",
        context=ctx(service, user),
        model=model(stub_openai),
    )
    assert result.answer == "Done: I will remind you on Friday at 9."
    assert [(c.name, c.ok) for c in result.tool_calls] == [("create_task", True)]
    [task] = (await service.list_tasks(user)).items
    assert (task.title, task.due_at, task.priority) == (
        "Renew my passport",
        datetime(2025, 3, 14, 9, tzinfo=BERLIN),
        "high",
    )
    assert result.context["last_item"]["id"] == task.id
    assert "task agent" in system_text(stub_openai.requests[0])


async def test_context_section_lets_the_model_resolve_the_second_one(
    stub_openai: StubOpenAI, service: PersonalService, user: str
) -> None:
    llm = model(stub_openai)
    for title in ("Pay rent", "Call Bob"):
        await run_task_agent(f"remind me to {title} tomorrow", context=ctx(service, user))
    shown = await run_task_agent("what's due tomorrow?", context=ctx(service, user))
    second = shown.context["last_list"][1]["id"]
    stub_openai.responder = script(
        StubReply(tool_calls=[("complete_task", {"task_id": second})]),
        StubReply(content="Marked it done."),
    )
    result = await run_task_agent(
        "mark the second one done",
        context=ctx(service, user),
        model=llm,
        domain_context=shown.context,
    )
    prompt = system_text(stub_openai.requests[0])
    assert "## Context" in prompt and f"2. #{second}" in prompt
    assert (await service.get_task(user, second)).status == "done"
    assert result.tool_calls[0].ok


async def test_transfer_tool_hands_off_and_the_event_agent_continues(
    stub_openai: StubOpenAI, service: PersonalService, user: str
) -> None:
    llm = model(stub_openai)
    stub_openai.responder = script(
        StubReply(
            tool_calls=[
                ("create_task", {"title": "Renew my passport", "due": "2025-03-14T09:00:00+01:00"})
            ]
        ),
        StubReply(
            tool_calls=[
                (
                    "transfer_to_event",
                    {"reason": "calendar entry", "request": "put it on my calendar"},
                )
            ]
        ),
        StubReply(content="should never be asked"),
    )
    first = await run_task_agent(
        "remind me to renew my passport next Friday at 9 and put it on my calendar",
        context=ctx(service, user),
        model=llm,
    )
    assert [c.name for c in first.tool_calls] == ["create_task", "transfer_to_event"]
    assert len(stub_openai.requests) == 2  # the transfer ends the task agent's turn
    assert first.handoff.should_handoff and first.handoff.target_agent == "event"
    assert first.handoff.context["subject"] == "Renew my passport"
    assert first.handoff.context["when"] == "2025-03-14T09:00:00+01:00"

    stub_openai.reset()
    stub_openai.responder = script(
        StubReply(
            tool_calls=[
                (
                    "create_event",
                    {"title": "Renew my passport", "starts": "2025-03-14T09:00:00+01:00"},
                )
            ]
        ),
        StubReply(content="It is on your calendar."),
    )
    second = await run_event_agent(
        "remind me to renew my passport next Friday at 9 and put it on my calendar",
        context=ctx(service, user),
        model=llm,
        handoff=first.handoff,
    )
    assert "Handed over by the task agent" in system_text(stub_openai.requests[0])
    assert second.answer == "It is on your calendar." and not second.handoff.should_handoff
    [event] = (await service.list_events(user)).items
    assert event.title == "Renew my passport" and event.starts_at.hour == 9


async def test_a_transfer_back_to_the_sender_is_refused(
    stub_openai: StubOpenAI, service: PersonalService, user: str
) -> None:
    first = await run_task_agent("what's on my calendar tomorrow?", context=ctx(service, user))
    assert first.handoff.target_agent == "event"
    stub_openai.responder = script(
        StubReply(tool_calls=[("transfer_to_task", {"reason": "not mine"})]),
    )
    back = await run_event_agent(
        "what's on my calendar tomorrow?",
        context=ctx(service, user),
        model=model(stub_openai),
        handoff=first.handoff,
    )
    assert not back.handoff.should_handoff and "refused" in back.handoff.reason


@pytest.fixture
async def pg_store(postgres_url: str) -> AsyncIterator[AsyncPostgresStore]:
    async with AsyncPostgresStore.from_conn_string(postgres_url) as store:
        await store.setup()
        yield store


async def test_facts_live_in_the_postgres_store_across_sessions(
    stub_openai: StubOpenAI,
    service: PersonalService,
    user: str,
    pg_store: AsyncPostgresStore,
) -> None:
    llm = model(stub_openai)
    stub_openai.responder = script(
        StubReply(tool_calls=[("remember_fact", {"fact": "is vegetarian"})]),
        StubReply(content="Noted."),
    )
    await build_food_agent(llm).run(
        "I'm vegetarian, remember that", context=ctx(service, user, memory=pg_store)
    )
    # A later session of the same user, with another agent: the fact is in its prompt.
    stub_openai.reset()
    stub_openai.responder = script(StubReply(content="ok"))
    await run_event_agent("hello", context=ctx(service, user, memory=pg_store), model=llm)
    assert "Known facts about the user: is vegetarian" in system_text(stub_openai.requests[0])
    # Another user does not see it.
    stub_openai.reset()
    await run_event_agent("hello", context=ctx(service, user + "-2", memory=pg_store), model=llm)
    assert "vegetarian" not in system_text(stub_openai.requests[0])
