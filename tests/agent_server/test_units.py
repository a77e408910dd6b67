"""Fast checks of the Agent Server layer's pieces: input validation (property-based), webhook
URL checks, the stream-event mapping, CORS for Studio's page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessageChunk

from app.agent_server.inputs import graph_input, messages_of
from app.api import create_app
from app.runs.events import EventMapper
from app.runs.spec import RunSpec
from app.runs.webhooks import WebhookRejected, check_webhook_url
from config import Settings

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
message_like = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["human", "user", "ai", "assistant", "system", "tool", "x"]),
        "content": st.text(max_size=50)
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()})),
    },
    optional={"id": st.text(max_size=200) | st.integers(), "name": st.text(max_size=80)},
)


@settings(max_examples=300, deadline=None)
@given(
    raw=json_values
    | st.dictionaries(
        st.sampled_from(
            ["messages", "user_id", "target_agent", "agent_input", "session_id", "other"]
        ),
        json_values | st.lists(message_like, max_size=5),
    )
)  # noqa: E501
def test_any_input_is_accepted_as_graph_input_or_refused_with_422(raw: Any) -> None:
    try:
        out = graph_input(
            raw,
            thread_id="thread-0001",
            user_id="anonymous",
            agents=["chat", "knowledge"],
            target_agent=None,
            max_chars=40,
        )
    except HTTPException as exc:
        assert exc.status_code == 422 and exc.detail
        return
    if out is None:
        assert raw is None
        return
    assert out["session_id"] == "thread-0001"  # never the caller's
    assert set(out) <= {"messages", "user_id", "session_id", "target_agent", "agent_input"}
    for message in out.get("messages", []):
        assert message["type"] in ("human", "ai", "system")
        assert isinstance(message["content"], str) and len(message["content"]) <= 40
        assert isinstance(message["id"], str) and 0 < len(message["id"]) <= 128


def test_content_blocks_become_text() -> None:
    (message,) = messages_of(
        {
            "type": "human",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        max_chars=100,
    )
    assert message["content"] == "a\nb" and message["type"] == "human"
    with pytest.raises(HTTPException, match="only text content"):
        messages_of({"role": "user", "content": [{"type": "image_url"}]}, max_chars=100)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "http:// or https://"),
        ("http://user:secret@example.com/", "credentials"),
        ("http://10.1.2.3/hook", "non-public"),
        ("http://127.0.0.1:9/hook", "non-public"),
        ("http://169.254.169.254/latest", "non-public"),
        ("http://[::1]/hook", "non-public"),
        ("http:///nohost", "no host"),
        ("http://example.com:99999/", "invalid port"),
    ],
)
async def test_webhook_urls_that_are_refused(url: str, reason: str) -> None:
    settings = Settings(_env_file=None)
    with pytest.raises(WebhookRejected, match=reason):
        await check_webhook_url(url, settings)


async def test_an_allowed_host_may_be_private() -> None:
    settings = Settings(_env_file=None, webhook_allowed_hosts="127.0.0.1")
    await check_webhook_url("http://127.0.0.1:8080/hook", settings)


def test_answer_tokens_stream_without_subgraphs_other_tokens_do_not() -> None:
    mapper = EventMapper(
        RunSpec(kind="agent", stream_modes=["messages-tuple", "values"]),
        lambda agent, node: (agent, node) == ("chat", "chat"),
    )
    token = AIMessageChunk(content="hi", id="m1")
    assert mapper.events(("chat:1",), "messages", (token, {"langgraph_node": "chat"}))
    assert not mapper.events(("knowledge:1",), "messages", (token, {"langgraph_node": "grade"}))
    assert not mapper.events(("chat:1",), "values", {"x": 1})  # subgraph values: no
    assert mapper.events((), "values", {"x": 1}) == [("values", '{"x":1}')]
    assert mapper.modes == ["values", "messages"]
    nested = EventMapper(
        RunSpec(kind="agent", stream_modes=["updates"], subgraphs=True), lambda a, n: True
    )
    assert nested.events(("chat:1",), "updates", {"n": {}}) == [("updates|chat:1", '{"n":{}}')]


def test_subgraph_values_are_never_presented_as_the_threads_state() -> None:
    """The JS SDK takes every ``values|<ns>`` event as the thread's state: an agent's working
    state (no conversation) must not reach it, with ``stream_subgraphs`` either."""
    mapper = EventMapper(
        RunSpec(kind="agent", stream_modes=["values", "updates"], subgraphs=True),
        lambda a, n: True,
    )
    assert mapper.events(("analytics:1",), "values", {"agent_answers": {}}) == []
    assert mapper.events(("analytics:1", "answer_with_plan:2"), "values", {"messages": []}) == []
    assert mapper.events((), "values", {"messages": []}) == [("values", '{"messages":[]}')]
    assert mapper.events(("analytics:1",), "updates", {"n": {}}) == [
        ("updates|analytics:1", '{"n":{}}')
    ]


def test_legacy_messages_mode_completes_each_streamed_message_once() -> None:
    """Tokens of the older ``messages`` mode end in one ``messages/complete`` per message, also
    when LangGraph never sends the message whole (it was streamed under the same id)."""
    mapper = EventMapper(RunSpec(kind="agent", stream_modes=["messages"]), lambda a, n: True)
    meta = {"langgraph_node": "chat"}
    names = [
        e for e, _ in mapper.events((), "messages", (AIMessageChunk(content="a", id="m1"), meta))
    ]
    names += [
        e for e, _ in mapper.events((), "messages", (AIMessageChunk(content="b", id="m1"), meta))
    ]
    assert names == ["messages/metadata", "messages/partial", "messages/partial"]
    (complete,) = mapper.finish()
    assert complete[0] == "messages/complete" and '"content":"ab"' in complete[1]
    assert mapper.finish() == []
    last = AIMessageChunk(content="c", id="m2", chunk_position="last")
    assert [e for e, _ in mapper.events((), "messages", (last, meta))][-1] == "messages/complete"
    assert mapper.finish() == []


def test_cors_lets_studio_read_run_locations(make_settings: Callable[..., Settings]) -> None:
    studio = "https://smith.langchain.com"
    with TestClient(create_app(make_settings(cors_origins=studio))) as client:
        preflight = client.options(
            "/threads/search",
            headers={
                "Origin": studio,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Private-Network": "true",
            },
        )
        assert preflight.headers["access-control-allow-origin"] == studio
        assert preflight.headers["access-control-allow-private-network"] == "true"
        info = client.get("/info", headers={"Origin": studio})
        exposed = info.headers["access-control-expose-headers"].lower()
        assert "content-location" in exposed and "location" in exposed
