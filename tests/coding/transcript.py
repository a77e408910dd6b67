"""A coding session as the model saw it: the stub OpenAI server's requests, rendered.

The agent's last model request holds the whole ReAct conversation (the request, every tool
call and every tool's answer up to that turn); the tools' own model calls (generate_code's code
writing) are listed after it.
"""

from __future__ import annotations

import json
from typing import Any

from tests.coding.scripted_coder import AGENT_TOOLS

MAX_SHOWN = 400


def _short(text: Any, limit: int = MAX_SHOWN) -> str:
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    value = value.replace("\n", "\\n")
    return value if len(value) <= limit else value[:limit] + " ..."


def _offers_agent_tools(request: dict[str, Any]) -> bool:
    names = {t["function"]["name"] for t in request.get("tools") or []}
    return bool(names & AGENT_TOOLS)


def render_transcript(requests: list[dict[str, Any]], result: dict[str, Any]) -> str:
    """The session: request, the model's tool calls, the tools' answers, the six fields."""
    agent = [r for r in requests if _offers_agent_tools(r)]
    lines = ["=== coding session over the stub model ==="]
    if agent:
        for message in agent[-1]["messages"]:
            role = message["role"]
            if role == "system":
                continue
            if role == "user":
                lines.append(f"USER    {_short(message['content'], 600)}")
            elif role == "assistant":
                calls = message.get("tool_calls") or []
                said = message.get("content")
                if said:
                    lines.append(f"MODEL   {_short(said)}")
                for call in calls:
                    function = call["function"]
                    lines.append(f"MODEL   -> {function['name']}({function['arguments']})")
            elif role == "tool":
                lines.append(f"TOOL    {_short(message['content'])}")
        lines.append(
            "END     (the loop ends without another model call once the code passes or the "
            "bound is reached: the last checks and runs are in RESULT)"
        )
    writes = [r for r in requests if not r.get("tools")]
    lines.append(f"(generate_code asked the model to write code {len(writes)} time(s))")
    lines.append("RESULT  " + json.dumps(result, indent=2, ensure_ascii=False))
    return "\n".join(lines)
