"""The OpenAI SDK's async chat-completions client without its per-request body transform.

`AsyncCompletions.create` runs every request body through the SDK's `_transform`: a walk of
the body against the `CompletionCreateParams` TypedDicts that renames aliased keys and formats
dates and files. Chat-completion params declare no alias and no format (`transform_free`
checks it, and a test holds the SDK to it), so for a body of plain JSON values (what
`ChatOpenAI` sends: dicts, lists, strings, numbers) the transform returns its input minus the
omitted values. It still walks each message once per member of the message union and each
tool's schema, which cost about a quarter of a chat turn's main-thread time (two model calls
a turn). :class:`PlainChatCompletions` sends such bodies as they are; anything else (a
pydantic model, a tuple, a file) goes through the SDK's own `create`.
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any

import openai
from openai._base_client import make_request_options
from openai._utils import is_given
from openai._utils._transform import PropertyInfo
from openai.resources.chat.completions import AsyncCompletions
from openai.resources.chat.completions.completions import validate_response_format
from openai.types.chat import ChatCompletion, ChatCompletionChunk, completion_create_params

__all__ = ["PlainChatCompletions", "plain_completions", "plain_json", "transform_free"]

_SCALARS = (str, int, float, bool, type(None))
#: The arguments of `create` that are request options, not body fields.
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


def plain_json(value: Any) -> bool:
    """Whether ``value`` is made of dicts with string keys, lists and JSON scalars only."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json(v) for v in value)
    return False


def _annotations_free(tp: Any, seen: set[int]) -> bool:
    if id(tp) in seen:
        return True
    seen.add(id(tp))
    if typing.get_origin(tp) is typing.Annotated:
        base, *extras = typing.get_args(tp)
        for extra in extras:
            if isinstance(extra, PropertyInfo) and (extra.alias or extra.format):
                return False
        return _annotations_free(base, seen)
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return all(_annotations_free(h, seen) for h in hints.values())
    return all(_annotations_free(arg, seen) for arg in typing.get_args(tp))


@cache
def transform_free() -> bool:
    """Whether the SDK's chat-completion params declare no key alias and no value format
    anywhere (then its transform of a plain-JSON body is the body minus omitted values)."""
    return all(
        _annotations_free(params, set())
        for params in (
            completion_create_params.CompletionCreateParamsNonStreaming,
            completion_create_params.CompletionCreateParamsStreaming,
        )
    )


class PlainChatCompletions(AsyncCompletions):
    """`chat.completions` whose `create` sends a plain-JSON body as it is (see the module)."""

    async def create(self, **params: Any) -> Any:
        body = {k: v for k, v in params.items() if k not in _OPTIONS}
        if not transform_free() or "messages" not in body or "model" not in body:
            return await super().create(**params)
        body = {k: v for k, v in body.items() if is_given(v)}
        if not plain_json(body):
            return await super().create(**params)
        validate_response_format(body.get("response_format", openai.omit))
        # the same options and call as the SDK's own `create`
        options = make_request_options(
            extra_headers=params.get("extra_headers"),
            extra_query=params.get("extra_query"),
            extra_body=params.get("extra_body"),
            timeout=params.get("timeout", openai.NOT_GIVEN),
            security={"bearer_auth": True},
        )
        return await self._post(
            "/chat/completions",
            body=body,
            options=options,
            cast_to=ChatCompletion,
            stream=bool(body.get("stream") or False),
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )


def plain_completions(model: Any) -> None:
    """Give a `ChatOpenAI` the :class:`PlainChatCompletions` of its own async client (the
    client it built from its settings: base URL, key, headers, HTTP client)."""
    model.async_client = PlainChatCompletions(model.root_async_client)
