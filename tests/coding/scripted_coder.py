"""A scripted 'model' for the stub OpenAI server that drives the coding agent like a model would.

Requests that offer the agent's tools get the next ReAct step (from the conversation so far):
generate -> check + test (in parallel) -> analyse a failure -> generate again with the issues.
Requests without tools are `generate_code`'s own model call: they get the next scripted
answer text (code in a fence, or garbage). A forced `_ModelAnalysis` tool call (the structured
output of analyze_error) gets a fixed analysis.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.stub_openai import StubReply

AGENT_TOOLS = {"generate_code", "check_code", "test_code", "analyze_error"}


def fenced(code: str) -> str:
    return f"Here is the function:\n```python\n{code.strip()}\n```\nIt handles the data."


@dataclass
class ScriptedCoder:
    """Responder: `generations` are the texts generate_code's model call returns, in order (the
    last repeats); `first_steps` are agent replies used before the policy takes over."""

    generations: list[str]
    first_steps: list[StubReply] = field(default_factory=list)
    always: StubReply | None = None
    agent_calls: int = 0
    generation_calls: int = 0
    generation_requests: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> str | dict[str, Any] | StubReply:
        tools = {t["function"]["name"] for t in request.get("tools") or []}
        with self._lock:
            if "_ModelAnalysis" in tools:
                return {
                    "analysis": "The lookup uses a label that is not in the index.",
                    "suggestions": ["select by position with .iloc"],
                }
            if tools & AGENT_TOOLS:
                self.agent_calls += 1
                return self._agent_step(request)
            self.generation_calls += 1
            self.generation_requests.append(request["messages"][-1]["content"])
            index = min(self.generation_calls, len(self.generations)) - 1
            return self.generations[index]

    def _agent_step(self, request: dict[str, Any]) -> StubReply:
        if self.always is not None:
            return self.always
        if self.first_steps:
            return self.first_steps.pop(0)
        messages = request["messages"]
        names: dict[str, str] = {}
        for message in messages:
            for call in message.get("tool_calls") or []:
                names[call["id"]] = call["function"]["name"]
        results: dict[str, Any] = {}
        for message in reversed(messages):
            if message["role"] != "tool":
                break
            name = names.get(message.get("tool_call_id", ""), "")
            try:
                results[name] = json.loads(message["content"])
            except (ValueError, TypeError):
                results[name] = message["content"]
        if not results:
            return StubReply(tool_calls=[("generate_code", {})])
        if "generate_code" in results:
            generated = results["generate_code"]
            if isinstance(generated, dict) and generated.get("success"):
                return StubReply(tool_calls=[("check_code", {}), ("test_code", {})])
            return StubReply(tool_calls=[("generate_code", {"issues_to_fix": ["no code came"]})])
        test = results.get("test_code")
        if isinstance(test, dict) and test.get("success") is False:
            return StubReply(tool_calls=[("analyze_error", {})])
        if "analyze_error" in results:
            analysis = results["analyze_error"]
            issues = analysis.get("suggestions", []) if isinstance(analysis, dict) else []
            return StubReply(tool_calls=[("generate_code", {"issues_to_fix": issues})])
        check = results.get("check_code")
        if isinstance(check, dict) and check.get("is_valid") is False:
            return StubReply(tool_calls=[("generate_code", {"issues_to_fix": check["issues"]})])
        return StubReply(content="The function works on the data.")
