"""A scripted, deterministic chat model for node-logic tests, which records what it was asked.

Answers come from `script` (consumed in order) or, when given, from `responder(messages, schema)`
— use the responder where calls run in parallel and their order is not fixed. A script item may
be a `str` (the answer text), an `AIMessage`, a `dict` / pydantic object (a structured answer),
or an `Exception` (raised, to exercise failure paths). The model supports `bind_tools` and
`with_structured_output`, and streams its text word by word.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field

ScriptItem = Any
Responder = Callable[[list[BaseMessage], Any], ScriptItem]


@dataclass
class FixedFactory:
    """Stands in for `LLMFactory`: hands out one model (or none) for every role."""

    model: BaseChatModel | None
    provider: str = "scripted"

    def get_llm(self, role: str = "chat") -> BaseChatModel | None:
        return self.model


class ScriptExhausted(AssertionError):
    """The code under test asked the model more often than the test scripted."""


class ScriptedChatModel(BaseChatModel):
    """A chat model whose answers are scripted by the test."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[ScriptItem] = Field(default_factory=list)
    responder: Responder | None = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    structured_calls: list[str] = Field(default_factory=list)
    bound_tools: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": "scripted"}

    # --- answers ---------------------------------------------------------------------------
    def _next(self, messages: list[BaseMessage], schema: Any) -> ScriptItem:
        self.calls.append(list(messages))
        if self.responder is not None:
            item = self.responder(list(messages), schema)
        elif self.script:
            item = self.script.pop(0)
        else:
            raise ScriptExhausted(
                f"ScriptedChatModel was called {len(self.calls)} times; the script ran out"
            )
        if isinstance(item, BaseException):
            raise item
        return item

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        item = self._next(messages, None)
        return ChatResult(generations=[ChatGeneration(message=_as_message(item))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = _as_message(self._next(messages, None))
        text = message.content if isinstance(message.content, str) else ""
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == 0 else f" {word}"
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        if message.tool_calls:
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": c["name"],
                            "args": json.dumps(c["args"]),
                            "id": c["id"],
                            "index": i,
                        }
                        for i, c in enumerate(message.tool_calls)
                    ],
                )
            )

    # --- tools and structured output -------------------------------------------------------
    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.bound_tools.append(names)
        return self.bind(tools=names)

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, Any]:
        name = getattr(schema, "__name__", str(schema))

        def run(value: LanguageModelInput) -> Any:
            self.structured_calls.append(name)
            messages = self._convert_input(value).to_messages()
            parsed = _as_structured(self._next(messages, schema), schema)
            if include_raw:
                return {"raw": AIMessage(content=""), "parsed": parsed, "parsing_error": None}
            return parsed

        return RunnableLambda(run, name=f"scripted_structured_{name}")


def _as_message(item: ScriptItem) -> AIMessage:
    if isinstance(item, AIMessage):
        return item
    if isinstance(item, BaseModel):
        return AIMessage(content=item.model_dump_json())
    if isinstance(item, dict):
        return AIMessage(content=json.dumps(item))
    return AIMessage(content=str(item))


def _as_structured(item: ScriptItem, schema: Any) -> Any:
    if isinstance(item, AIMessage):
        item = item.tool_calls[0]["args"] if item.tool_calls else item.content
    if isinstance(item, str):
        item = json.loads(item)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return item if isinstance(item, schema) else schema.model_validate(item)
    return item
