"""`PlainChatCompletions` sends what the SDK's own `create` sends, without its body transform."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from tools.providers.openai_client import PlainChatCompletions, plain_completions, plain_json
from tools.providers.openai_client import transform_free as sdk_transform_free

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "hi"},
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class Decision(BaseModel):
    agent: str
    confidence: float


def _model(seen: list[httpx.Request], *, plain: bool) -> ChatOpenAI:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=COMPLETION)

    model = ChatOpenAI(
        model="m",
        base_url="http://llm.test/v1",
        api_key="sk-test",
        max_retries=0,
        http_async_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
    )
    if plain:
        plain_completions(model)
        assert isinstance(model.async_client, PlainChatCompletions)
    return model


CONVERSATION = [
    SystemMessage("You route messages."),
    HumanMessage("hello"),
    AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "x"}, "id": "call_1"}]),
    ToolMessage("found", tool_call_id="call_1"),
    HumanMessage([{"type": "text", "text": "and now?"}]),
]
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}


async def _requests(plain: bool) -> list[httpx.Request]:
    seen: list[httpx.Request] = []
    model = _model(seen, plain=plain)
    await model.ainvoke(CONVERSATION)
    await model.bind_tools([TOOL], tool_choice="lookup").ainvoke(CONVERSATION)
    await model.with_structured_output(Decision, method="function_calling").ainvoke("route")
    await model.ainvoke("hi", stop=["\n"], extra_headers={"x-test": "1"})
    return seen


def _view(request: httpx.Request) -> tuple[str, str, dict[str, str], Any]:
    headers = {k: v for k, v in request.headers.items() if k != "content-length"}
    return request.method, str(request.url), headers, json.loads(request.content)


async def test_plain_requests_are_the_sdks() -> None:
    sdk, plain = await _requests(plain=False), await _requests(plain=True)
    assert len(sdk) == len(plain) == 4
    assert [_view(r) for r in plain] == [_view(r) for r in sdk]


def test_the_sdk_declares_no_alias_or_format_for_chat_params() -> None:
    # if an SDK upgrade adds one, the transform is no identity any more and must run
    assert sdk_transform_free()


def test_only_plain_json_skips_the_transform() -> None:
    assert plain_json({"a": [1, 2.0, "x", None, True, {"b": []}]})
    assert not plain_json({"a": (1, 2)})
    assert not plain_json({"a": Decision(agent="chat", confidence=1.0)})
    assert not plain_json({1: "x"})


async def test_a_chat_openai_body_takes_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    async def sdk_create(self: Any, **params: Any) -> Any:
        raise AssertionError("the SDK's transform ran")

    monkeypatch.setattr("openai.resources.chat.completions.AsyncCompletions.create", sdk_create)
    assert len(await _requests(plain=True)) == 4
