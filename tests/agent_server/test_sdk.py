"""The real `langgraph-sdk` clients (async and sync) and `RemoteGraph` against a real API
process: assistants, threads, streamed / waited / background runs, state and history, cancel,
double texting, interrupts, forks, webhooks, ownership, and `/chat` sessions as threads."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import redis
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from tests.agent_server.agents import STEPS
from tests.agent_server.conftest import KEY_A, KEY_B, Receiver, wait_for
from tests.support.processes import ApiProcess

pytestmark = pytest.mark.slow


def chat_input(text: str, agent: str = "chat") -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": text}], "target_agent": agent}


def started(store: redis.Redis, thread_id: str, step: str, times: int = 1) -> bool:
    return int(store.get(f"sy-test:steps:{thread_id}:{step}") or 0) >= times


def test_a_search_page_of_hundreds_of_threads_is_answered(server: ApiProcess) -> None:
    """A page of the largest size reads every thread's state without taking every Redis
    connection (it answered 503 "Too many connections" for a page of a few hundred)."""
    client: Any = get_sync_client(url=server.url, api_key=KEY_B)
    made = {client.threads.create(metadata={"page-test": True})["thread_id"] for _ in range(400)}
    found = client.threads.search(metadata={"page-test": True}, limit=1000)
    assert {t["thread_id"] for t in found} == made
    for thread_id in made:
        client.threads.delete(thread_id)


# --- assistants and server info -------------------------------------------------------------
def test_info_and_assistants(server: ApiProcess) -> None:
    assert httpx.get(f"{server.url}/info", timeout=60).json()["flags"]["assistants"] is True
    assert httpx.get(f"{server.url}/ok", timeout=60).json() == {"ok": True}
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    found = client.assistants.search(graph_id="switchyard", limit=100)
    names = {a["name"] for a in found}
    assert {"switchyard", "chat", "approval", "steps"} <= names
    graph = client.assistants.get("switchyard")
    assert graph["graph_id"] == "switchyard" and graph["metadata"]["created_by"] == "system"
    assert client.assistants.get(graph["assistant_id"])["name"] == "switchyard"
    assert client.assistants.count(graph_id="switchyard") == len(found)
    drawn = client.assistants.get_graph("switchyard", xray=True)
    ids = {node["id"] for node in drawn["nodes"]}
    assert {"route", "finalize", "approval:ask", "steps:step_3"} <= ids
    schemas = client.assistants.get_schemas("switchyard")
    assert "messages" in schemas["input_schema"]["properties"]
    assert "retrieval_top_k" in str(schemas["context_schema"])  # the agents' per-run options
    subgraphs = client.assistants.get_subgraphs("switchyard")
    assert {"chat", "approval", "steps"} <= set(subgraphs)
    with pytest.raises(NotFoundError):
        client.assistants.get("no-such-assistant")


# --- threads and a streamed chat run ---------------------------------------------------------
async def test_stream_a_chat_run_then_read_state_and_history(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread = await client.threads.create(metadata={"purpose": "stream-test"})
    thread_id = thread["thread_id"]
    assert thread["status"] == "idle" and thread["metadata"]["purpose"] == "stream-test"
    events = [
        part
        async for part in client.runs.stream(
            thread_id,
            "switchyard",
            input=chat_input("hello there"),
            stream_mode=["values", "messages-tuple"],
        )
    ]
    kinds = [part.event for part in events]
    assert kinds[0] == "metadata" and events[0].data["run_id"]
    assert kinds[-1] == "end"
    tokens = [
        part.data[0]["content"]
        for part in events
        if part.event == "messages" and part.data[0]["type"] == "AIMessageChunk"
    ]
    assert "".join(tokens).split() == ["one", "two", "three", "four"], tokens
    final = [part.data for part in events if part.event == "values"][-1]
    assert [m["type"] for m in final["messages"]] == ["human", "ai"]
    assert final["messages"][-1]["content"] == "one two three four"

    state = await client.threads.get_state(thread_id)
    assert state["values"]["messages"][-1]["content"] == "one two three four"
    assert state["next"] == [] and state["checkpoint"]["thread_id"] == thread_id
    history = await client.threads.get_history(thread_id, limit=100)
    # a turn is four checkpoints: its input, ingest (routes too), the agent (ends the turn), end
    assert len(history) == 4 and history[0]["checkpoint"] == state["checkpoint"]
    run_id = events[0].data["run_id"]
    assert {h["metadata"].get("run_id") for h in history} == {run_id}
    older = await client.threads.get_state(
        thread_id, checkpoint_id=history[-1]["checkpoint"]["checkpoint_id"]
    )
    assert older["values"].get("messages", []) == [] or len(older["values"]["messages"]) == 1

    again = await client.threads.get(thread_id)
    assert again["status"] == "idle" and again["values"]["messages"][-1]["type"] == "ai"
    search = await client.threads.search(metadata={"purpose": "stream-test"})
    assert [t["thread_id"] for t in search] == [thread_id]
    assert await client.threads.count(metadata={"purpose": "stream-test"}) == 1
    run = await client.runs.get(thread_id, run_id)
    assert run["status"] == "success" and run["assistant_id"] == thread["metadata"]["assistant_id"]


def test_sync_client_waits_for_a_run_and_updates_state(server: ApiProcess) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread = client.threads.create()
    output = client.runs.wait(thread["thread_id"], "chat", input=chat_input("hi"))
    assert isinstance(output, dict) and output["messages"][-1]["content"] == "one two three four"
    # an agent's assistant goes straight to the agent (no routing)
    assert output["route"]["agent"] == "chat" and output["route"]["method"] == "explicit"
    updated = client.threads.update_state(
        thread["thread_id"], {"answer": "edited by hand"}, as_node="finalize"
    )
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["answer"] == "edited by hand"
    assert state["checkpoint"]["checkpoint_id"] == updated["checkpoint"]["checkpoint_id"]
    copied = client.threads.copy(thread["thread_id"])
    assert copied["thread_id"] != thread["thread_id"]
    assert client.threads.get_state(copied["thread_id"])["values"]["answer"] == "edited by hand"
    stateless = client.runs.wait(None, "switchyard", input=chat_input("stateless please"))
    assert stateless["messages"][-1]["content"] == "one two three four"


# --- background runs, join, cancel ----------------------------------------------------------
def test_background_run_join_and_list(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "steps", input=chat_input("run the steps", "steps"))
    assert run["status"] in ("pending", "running") and run["thread_id"] == thread_id
    output = client.runs.join(thread_id, run["run_id"])
    assert output["answer"] == "step_1 step_2 step_3 step_4"
    assert client.runs.get(thread_id, run["run_id"])["status"] == "success"
    assert [r["run_id"] for r in client.runs.list(thread_id)] == [run["run_id"]]
    assert all(started(store, thread_id, step) for step in ("step_1", "step_4"))


def test_cancel_a_running_run(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    store.set("sy-test:hold:step_2", "1")
    run = client.runs.create(thread_id, "steps", input=chat_input("steps", "steps"))
    wait_for(lambda: started(store, thread_id, "step_2"), what="step_2 to start")
    assert client.threads.get(thread_id)["status"] == "busy"
    client.runs.cancel(thread_id, run["run_id"], wait=True)
    assert client.runs.get(thread_id, run["run_id"])["status"] == "interrupted"
    thread = client.threads.get(thread_id)
    assert thread["status"] == "interrupted"  # stopped with steps still to run
    store.delete("sy-test:hold:step_2")
    assert not started(store, thread_id, "step_3")


# --- double texting -------------------------------------------------------------------------
def _held_run(client: Any, store: redis.Redis) -> tuple[str, str]:
    thread_id = client.threads.create()["thread_id"]
    store.set("sy-test:hold:step_2", "1")
    run = client.runs.create(thread_id, "steps", input=chat_input("first", "steps"))
    wait_for(lambda: started(store, thread_id, "step_2"), what="the first run to hold")
    return thread_id, run["run_id"]


def test_double_text_reject(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    with pytest.raises(ConflictError):
        client.runs.create(
            thread_id, "steps", input=chat_input("second", "steps"), multitask_strategy="reject"
        )
    store.delete("sy-test:hold:step_2")
    assert client.runs.join(thread_id, first)["answer"].endswith("step_4")


def test_double_text_enqueue(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    second = client.runs.create(
        thread_id, "steps", input=chat_input("second", "steps"), multitask_strategy="enqueue"
    )
    assert client.runs.get(thread_id, second["run_id"])["status"] == "pending"
    store.delete("sy-test:hold:step_2")
    client.runs.join(thread_id, second["run_id"])
    runs = {r["run_id"]: r["status"] for r in client.runs.list(thread_id)}
    assert runs == {first: "success", second["run_id"]: "success"}
    assert started(store, thread_id, "step_4", times=2)
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["content"] for m in messages if m["type"] == "human"] == ["first", "second"]


def test_double_text_interrupt(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    second = client.runs.create(
        thread_id, "steps", input=chat_input("second", "steps"), multitask_strategy="interrupt"
    )
    wait_for(lambda: client.runs.get(thread_id, first)["status"] == "interrupted")
    store.delete("sy-test:hold:step_2")
    output = client.runs.join(thread_id, second["run_id"])
    assert output["answer"] == "step_1 step_2 step_3 step_4"
    history = client.threads.get_history(thread_id, limit=100)
    # the interrupted run's checkpoints stay
    assert first in {h["metadata"].get("run_id") for h in history}
    human = [m["content"] for m in output["messages"] if m["type"] == "human"]
    assert human == ["first", "second"]


def test_double_text_rollback(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    second = client.runs.create(
        thread_id, "steps", input=chat_input("second", "steps"), multitask_strategy="rollback"
    )
    wait_for(lambda: _gone(client, thread_id, first), what="the first run to be rolled back")
    store.delete("sy-test:hold:step_2")
    output = client.runs.join(thread_id, second["run_id"])
    human = [m["content"] for m in output["messages"] if m["type"] == "human"]
    assert human == ["second"]  # as if the first run never happened
    history = client.threads.get_history(thread_id, limit=100)
    assert first not in {h["metadata"].get("run_id") for h in history}
    assert [r["run_id"] for r in client.runs.list(thread_id)] == [second["run_id"]]


def _gone(client: Any, thread_id: str, run_id: str) -> bool:
    try:
        client.runs.get(thread_id, run_id)
    except NotFoundError:
        return True
    return False


# --- interrupts, forks ----------------------------------------------------------------------
def test_interrupt_and_resume(server: ApiProcess) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    output = client.runs.wait(thread_id, "approval", input=chat_input("deploy it", "approval"))
    (pending,) = output["__interrupt__"]
    assert pending["value"] == {"question": "Approve?", "proposal": "do: deploy it"}
    thread = client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    assert [i["id"] for ints in thread["interrupts"].values() for i in ints] == [pending["id"]]
    state = client.threads.get_state(thread_id)
    assert state["next"] == ["approval"] and state["interrupts"][0]["id"] == pending["id"]
    resumed = client.runs.wait(thread_id, "approval", command={"resume": "yes"})
    assert resumed["answer"] == "do: deploy it -> yes"
    assert client.threads.get(thread_id)["status"] == "idle"


def test_remote_graph_streams_interrupts_and_resumes(server: ApiProcess) -> None:
    remote = RemoteGraph("switchyard", url=server.url, api_key=KEY_A)
    sdk: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = sdk.threads.create()["thread_id"]
    config: Any = {"configurable": {"thread_id": thread_id}}
    chunks = list(remote.stream(chat_input("ship", "approval"), config, stream_mode="updates"))
    assert any("__interrupt__" in chunk for chunk in chunks)
    snapshot = remote.get_state(config)
    assert snapshot.next == ("approval",) and snapshot.interrupts[0].value["proposal"] == "do: ship"
    final = remote.invoke(Command(resume="approved"), config)
    assert final["answer"] == "do: ship -> approved"
    history = list(remote.get_state_history(config, limit=50))
    assert history[0].values["answer"] == "do: ship -> approved" and len(history) == 4


async def test_fork_from_a_checkpoint(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, "chat", input=chat_input("first question"))
    after_first = (await client.threads.get_state(thread_id))["checkpoint"]
    await client.runs.wait(thread_id, "chat", input=chat_input("second question"))
    forked = await client.runs.wait(
        thread_id, "chat", input=chat_input("another second"), checkpoint=after_first
    )
    human = [m["content"] for m in forked["messages"] if m["type"] == "human"]
    assert human == ["first question", "another second"]
    head = await client.threads.get_state(thread_id)
    assert [m["content"] for m in head["values"]["messages"] if m["type"] == "human"] == human
    history = await client.threads.get_history(thread_id, limit=200)
    # the original second turn is still in the history, on its own branch
    texts = {m["content"] for h in history for m in h["values"].get("messages", [])}
    assert "second question" in texts


# --- resumable streams, webhooks, ownership ---------------------------------------------------
async def test_resumable_stream_replays_after_last_event_id(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread_id = (await client.threads.create())["thread_id"]
    first = [
        part
        async for part in client.runs.stream(
            thread_id,
            "chat",
            input=chat_input("resumable"),
            stream_mode=["values", "updates"],
            stream_resumable=True,
        )
    ]
    run_id = first[0].data["run_id"]
    assert all(part.id for part in first[:-1])
    replay = [
        part async for part in client.runs.join_stream(thread_id, run_id, last_event_id=first[2].id)
    ]
    assert [p.event for p in replay] == [p.event for p in first[3:]]
    everything = [
        part async for part in client.runs.join_stream(thread_id, run_id, last_event_id="-1")
    ]
    assert [p.event for p in everything] == [p.event for p in first]


def test_webhook_is_posted_when_the_run_ends(server: ApiProcess, receiver: Receiver) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    run = client.runs.create(thread_id, "chat", input=chat_input("hook me"), webhook=receiver.url)
    client.runs.join(thread_id, run["run_id"])
    (body,) = wait_for(lambda: receiver.bodies, what="the webhook")
    assert body["run_id"] == run["run_id"] and body["status"] == "success"
    assert body["values"]["messages"][-1]["content"] == "one two three four"
    assert KEY_A not in json.dumps(body)
    with pytest.raises(Exception, match="non-public address"):
        client.runs.create(thread_id, "chat", input=chat_input("x"), webhook="http://10.1.2.3/")


def test_another_keys_threads_and_runs_are_not_found(server: ApiProcess) -> None:
    mine: Any = get_sync_client(url=server.url, api_key=KEY_A)
    theirs: Any = get_sync_client(url=server.url, api_key=KEY_B)
    thread_id = mine.threads.create(metadata={"owner-test": True})["thread_id"]
    run = mine.runs.create(thread_id, "chat", input=chat_input("private"))
    mine.runs.join(thread_id, run["run_id"])
    for call in (
        lambda: theirs.threads.get(thread_id),
        lambda: theirs.threads.get_state(thread_id),
        lambda: theirs.threads.get_history(thread_id),
        lambda: theirs.threads.update(thread_id, metadata={"x": 1}),
        lambda: theirs.threads.delete(thread_id),
        lambda: theirs.runs.get(thread_id, run["run_id"]),
        lambda: theirs.runs.list(thread_id),
        lambda: theirs.runs.create(thread_id, "chat", input=chat_input("intrude")),
        lambda: theirs.runs.cancel(thread_id, run["run_id"]),
    ):
        with pytest.raises(NotFoundError):
            call()
    assert theirs.threads.search(metadata={"owner-test": True}) == []
    assert [t["thread_id"] for t in mine.threads.search(metadata={"owner-test": True})] == [
        thread_id
    ]
    # another key's id is the caller's own, fresh: never "taken" (409), nothing of the other's
    fresh = theirs.threads.create(thread_id=thread_id)
    assert fresh["thread_id"] == thread_id and fresh["values"] == {}
    assert "owner-test" not in fresh["metadata"]
    theirs.threads.delete(thread_id)
    assert mine.threads.get(thread_id)["metadata"]["owner-test"] is True


def test_a_chat_session_is_a_thread(server: ApiProcess) -> None:
    headers = {"X-API-Key": KEY_A}
    chat = httpx.post(
        f"{server.url}/chat",
        json={"message": "hello from chat", "agent": "chat"},
        headers=headers,
        timeout=60,
    ).json()
    session = chat["session_id"]
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread = client.threads.get(session)
    assert thread["values"]["messages"][0]["content"] == "hello from chat"
    assert session in {t["thread_id"] for t in client.threads.search(limit=1000)}
    client.runs.wait(session, "chat", input=chat_input("and from the SDK"))
    again = httpx.post(
        f"{server.url}/chat",
        json={"message": "back in chat", "session_id": session, "agent": "chat"},
        headers=headers,
        timeout=60,
    ).json()
    assert again["turn"] == 3
    created = client.threads.create()["thread_id"]
    via_chat = httpx.post(
        f"{server.url}/chat",
        json={"message": "a thread from the SDK", "session_id": created, "agent": "chat"},
        headers=headers,
        timeout=60,
    )
    assert via_chat.status_code == 200 and via_chat.json()["session_id"] == created
    summary = httpx.get(f"{server.url}/session/{created}", headers=headers, timeout=60).json()
    assert summary["turns"] == 1


# --- failures, stateless runs, the thread's stream ------------------------------------------
async def test_a_failed_run_reports_its_error(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread_id = (await client.threads.create())["thread_id"]
    parts = [
        part
        async for part in client.runs.stream(
            thread_id, "chat", input=chat_input("too deep"), config={"recursion_limit": 2}
        )
    ]
    assert parts[0].event == "metadata" and parts[-1].event == "error"
    assert parts[-1].data["error"] == "GraphRecursionError"
    run = (await client.runs.list(thread_id))[0]
    assert run["status"] == "error"
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "error" and thread["error"]
    with pytest.raises(Exception, match="GraphRecursionError"):
        await client.runs.wait(
            thread_id, "chat", input=chat_input("x"), config={"recursion_limit": 2}
        )
    with pytest.raises(httpx.HTTPStatusError) as refused:  # runs.wait raises httpx's own
        await client.runs.wait(
            thread_id, "chat", input=chat_input("x"), context={"retrieval_top_k": -1}
        )
    assert refused.value.response.status_code == 422
    with pytest.raises(UnprocessableEntityError, match="unknown keys"):
        await client.runs.create(thread_id, "chat", input={"messages": [], "evil": 1})


async def test_stateless_runs_and_batches(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    parts = [
        part
        async for part in client.runs.stream(
            None, "chat", input=chat_input("no thread"), stream_mode="values"
        )
    ]
    assert parts[-1].event == "end"
    assert parts[-2].data["messages"][-1]["content"] == "one two three four"
    batch = await client.runs.create_batch(
        [{"assistant_id": "chat", "input": chat_input(f"batch {i}")} for i in range(2)]
    )
    assert len(batch) == 2 and len({r["thread_id"] for r in batch}) == 2


def test_thread_stream_follows_the_threads_runs(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    second = client.runs.create(thread_id, "steps", input=chat_input("second", "steps"))
    stream = client.threads.join_stream(thread_id, stream_mode=["values"])
    store.delete("sy-test:hold:step_2")
    parts = list(stream)
    runs = [p.data["run_id"] for p in parts if p.event == "metadata"]
    assert runs == [second["run_id"]]  # the first was running already: its new events only
    assert parts[-1].event == "end" and any(p.event == "values" for p in parts)
    assert client.runs.get(thread_id, first)["status"] == "success"


def test_cancel_a_pending_run(server: ApiProcess, store: redis.Redis) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id, first = _held_run(client, store)
    queued = client.runs.create(thread_id, "steps", input=chat_input("queued", "steps"))
    client.runs.cancel(thread_id, queued["run_id"])
    assert client.runs.get(thread_id, queued["run_id"])["status"] == "interrupted"
    store.delete("sy-test:hold:step_2")
    client.runs.join(thread_id, first)
    messages = client.threads.get_state(thread_id)["values"]["messages"]
    assert [m["content"] for m in messages if m["type"] == "human"] == ["first"]


def test_every_sse_frame_carries_json(server: ApiProcess) -> None:
    """The JS SDK (1.8, what agent-chat-ui ships) parses every `data:` as JSON, `end`'s too."""
    headers = {"X-API-Key": KEY_A}
    thread = httpx.post(f"{server.url}/threads", json={}, headers=headers, timeout=60).json()
    body = {"assistant_id": "chat", "input": chat_input("frames"), "stream_mode": ["values"]}
    with httpx.stream(
        "POST",
        f"{server.url}/threads/{thread['thread_id']}/runs/stream",
        json=body,
        headers=headers,
        timeout=60,
    ) as response:
        assert response.headers["content-location"].endswith(response.headers["location"][:-7])
        lines = [line for line in response.iter_lines() if line.startswith(("event:", "data:"))]
    events = [line.split(":", 1)[1].strip() for line in lines if line.startswith("event:")]
    data = [json.loads(line.split(":", 1)[1]) for line in lines if line.startswith("data:")]
    assert events[0] == "metadata" and events[-1] == "end" and data[-1] is None
    assert len(events) == len(data)


def test_a_stream_with_on_disconnect_cancel_stops_its_run(
    server: ApiProcess, store: redis.Redis
) -> None:
    headers = {"X-API-Key": KEY_A}
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    thread_id = client.threads.create()["thread_id"]
    store.set("sy-test:hold:step_2", "1")
    body = {
        "assistant_id": "steps",
        "input": chat_input("leave", "steps"),
        "on_disconnect": "cancel",
    }
    url = f"{server.url}/threads/{thread_id}/runs/stream"
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
        run_id = response.headers["content-location"].rsplit("/", 1)[1]
        wait_for(lambda: started(store, thread_id, "step_2"), what="the run to hold")
    # the client is gone: the run is cancelled
    wait_for(lambda: client.runs.get(thread_id, run_id)["status"] == "interrupted")
    store.delete("sy-test:hold:step_2")
    assert not started(store, thread_id, "step_3")


async def test_every_stream_mode_with_subgraphs(server: ApiProcess) -> None:
    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread_id = (await client.threads.create())["thread_id"]
    modes = ["values", "updates", "custom", "debug", "tasks", "checkpoints", "messages-tuple"]
    parts = [
        part
        async for part in client.runs.stream(
            thread_id, "switchyard", input=chat_input("all modes"), stream_mode=modes,
            stream_subgraphs=True,
        )
    ]  # fmt: skip
    kinds = {part.event.split("|")[0] for part in parts}
    assert set(modes) - {"messages-tuple", "custom"} | {"messages", "metadata", "end"} <= kinds
    assert any(p.event.startswith("updates|chat:") for p in parts)  # the agent's own steps
    assert any(p.event.startswith("messages|chat:") for p in parts)
    legacy = [
        part.event
        async for part in client.runs.stream(
            thread_id, "chat", input=chat_input("legacy messages"), stream_mode="messages"
        )
    ]
    assert {"messages/metadata", "messages/partial", "messages/complete"} <= set(legacy)


def test_thread_admin(server: ApiProcess) -> None:
    client: Any = get_sync_client(url=server.url, api_key=KEY_A)
    seeded = client.threads.create(
        metadata={"admin": 1},
        supersteps=[
            {
                "updates": [
                    {
                        "values": {"messages": [{"type": "human", "content": "seed"}]},
                        "as_node": "ingest",
                    }
                ]
            },
            {"updates": [{"values": {"answer": "seeded"}, "as_node": "finalize"}]},
        ],
    )
    thread_id = seeded["thread_id"]
    assert seeded["values"]["answer"] == "seeded"
    assert client.threads.create(thread_id=thread_id, if_exists="do_nothing")["thread_id"] == (
        thread_id
    )
    patched = client.threads.update(thread_id, metadata={"admin": 2, "more": True})
    assert patched["metadata"]["admin"] == 2 and patched["metadata"]["graph_id"] == "switchyard"
    assert len(client.threads.get_history(thread_id, limit=100)) >= 2
    assert client.threads.prune([thread_id], strategy="keep_latest")["pruned_count"] == 1
    assert len(client.threads.get_history(thread_id, limit=100)) == 1
    assert client.threads.get_state(thread_id)["values"]["answer"] == "seeded"
    client.threads.delete(thread_id)
    with pytest.raises(NotFoundError):
        client.threads.get(thread_id)
    with pytest.raises(UnprocessableEntityError, match="unknown nodes"):
        client.threads.create(supersteps=[{"updates": [{"values": {}, "as_node": "nope"}]}])


# --- one run path: one progress event, two wires ----------------------------------------------
async def test_a_progress_event_is_the_same_through_chat_and_an_agent_server_run(
    server: ApiProcess,
) -> None:
    """What a node writes to the stream writer is one internal event (app.runs.events): /chat
    sends it as ``progress`` {agent, data}, an Agent Server run as ``custom`` (the data as
    written, ``custom|<namespace>`` from inside an agent's subgraph)."""
    expected = [{"step": step, "started": True} for step in STEPS]
    chat: list[tuple[str, Any]] = []
    kind = "message"
    with httpx.stream(
        "POST",
        f"{server.url}/chat/stream",
        json={"message": "run the steps", "agent": "steps"},
        headers={"X-API-Key": KEY_A},
        timeout=60,
    ) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                chat.append((kind, json.loads(line.split(":", 1)[1])))
    progress = [data for kind, data in chat if kind == "progress"]
    assert [p["data"] for p in progress] == expected
    assert {p["agent"] for p in progress} == {"steps"}
    assert chat[-1][0] == "answer"

    client: Any = get_client(url=server.url, api_key=KEY_A)
    thread_id = (await client.threads.create())["thread_id"]
    parts = [
        part
        async for part in client.runs.stream(
            thread_id, "steps", input=chat_input("run the steps", "steps"),
            stream_mode="custom", stream_subgraphs=True,
        )
    ]  # fmt: skip
    custom = [part for part in parts if part.event.split("|")[0] == "custom"]
    assert [part.data for part in custom] == expected
    assert all(part.event.startswith("custom|steps:") for part in custom)
    assert parts[-1].event == "end"
