"""An OpenAI-compatible stub server: tests and benchmarks drive the real `langchain-openai` client.

It serves `GET /v1/models` and `POST /v1/chat/completions` (plain, streaming, tool calls) over
real HTTP, with configurable latency, scripted error statuses, and call counting. What it answers
comes from a responder: `responder(request_json) -> str | dict | StubReply`. A `str` is the
assistant's text; a `dict` is the arguments of a tool call to the requested (or first) tool, which
is how `with_structured_output(..., method="function_calling")` gets its object.

Run in-process with `StubOpenAI().start()` (a thread), or standalone:
`python -m tests.support.stub_openai --port 8999 --latency 0.2`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.servers import free_port, wait_for_port


@dataclass
class StubReply:
    """A full reply: text content and/or tool calls (name, arguments)."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


Responder = Callable[[dict[str, Any]], "str | dict[str, Any] | StubReply"]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(str(part.get("text", "")) for part in content)
            return str(content or "")
    return ""


def echo_responder(request: dict[str, Any]) -> str:
    """Default answer: a deterministic echo of the last user message."""
    return f"stub answer: {last_user_text(request)[:200]}"


def _forced_tool(request: dict[str, Any]) -> str | None:
    tools = request.get("tools") or []
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name"))
    if tools and choice in ("required", "any"):
        return str(tools[0]["function"]["name"])
    return None


def _normalise(request: dict[str, Any], answer: str | dict[str, Any] | StubReply) -> StubReply:
    if isinstance(answer, StubReply):
        return answer
    if isinstance(answer, dict):
        name = _forced_tool(request) or (request.get("tools") or [{}])[0].get("function", {}).get(
            "name", "tool"
        )
        return StubReply(tool_calls=[(str(name), answer)])
    return StubReply(content=answer)


def _tokens(text: str) -> int:
    return max(1, len(text.split()))


class StubOpenAI:
    """The stub server. Thread-safe counters; settings may change between requests."""

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        latency: float = 0.0,
        port: int | None = None,
        model: str = "stub-model",
    ) -> None:
        self.responder = responder
        self.latency = latency
        self.port = port or free_port()
        self.model = model
        self.errors: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.calls = 0
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # --- control -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fail_next(self, *statuses: int) -> None:
        """Answer the next requests with these HTTP statuses, in order, then normally."""
        with self._lock:
            self.errors.extend(statuses)

    def reset(self) -> None:
        with self._lock:
            self.calls = 0
            self.requests.clear()
            self.errors.clear()

    def start(self) -> StubOpenAI:
        config = uvicorn.Config(
            self.app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP ----------------------------------------------------------------------------
    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/_stub/stats", self._stats, methods=["GET"]),
                Route("/_stub/reset", self._reset, methods=["POST"]),
            ]
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    async def _stats(self, request: Request) -> Response:
        return JSONResponse({"calls": self.calls, "requests": len(self.requests)})

    async def _reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"ok": True})

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            status = self.errors.pop(0) if self.errors else None
        if self.latency:
            await asyncio.sleep(self.latency)
        if status is not None:
            return JSONResponse(
                {"error": {"message": f"stub error {status}", "type": "stub", "code": status}},
                status_code=status,
            )
        answer = await asyncio.to_thread(self.responder, body)
        reply = _normalise(body, answer)
        with self._lock:
            self.calls += 1
        if body.get("stream"):
            return StreamingResponse(self._stream(body, reply), media_type="text/event-stream")
        return JSONResponse(self._completion(body, reply))

    def _tool_calls(self, reply: StubReply) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in reply.tool_calls
        ]

    def _usage(self, body: dict[str, Any], reply: StubReply) -> dict[str, int]:
        prompt = sum(_tokens(str(m.get("content") or "")) for m in body.get("messages", []))
        completion = _tokens(reply.content or json.dumps([a for _, a in reply.tool_calls]))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _completion(self, body: dict[str, Any], reply: StubReply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = self._tool_calls(reply)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": self._usage(body, reply),
        }

    async def _stream(self, body: dict[str, Any], reply: StubReply) -> AsyncIterator[bytes]:
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", self.model),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(payload)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        if reply.content:
            words = reply.content.split(" ")
            for i, word in enumerate(words):
                yield chunk({"content": word if i == 0 else f" {word}"})
        for index, call in enumerate(self._tool_calls(reply)):
            yield chunk({"tool_calls": [{"index": index, **call}]})
        yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {**base, "choices": [], "usage": self._usage(body, reply)}
            yield f"data: {json.dumps(usage)}\n\n".encode()
        yield b"data: [DONE]\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8999)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    stub = StubOpenAI(latency=args.latency, port=args.port)
    config = uvicorn.Config(stub.app(), host="127.0.0.1", port=args.port, log_level="warning")
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
