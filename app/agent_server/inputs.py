"""What a run or a state update may carry, checked before anything reaches the graph.

Every check answers 422 with a message that names the fix. The input is the graph's input
schema (``ChatInput``): ``messages`` (LangChain message dicts, ``{"role", "content"}`` pairs or
plain strings; content as text or as a list of text blocks, which is what agent-chat-ui sends),
``user_id``, ``target_agent``, ``agent_input``. ``session_id`` is always the thread's id.
``context`` holds the agents' per-run options (validated with their settings' bounds); option
names in ``config.configurable`` count too, as langgraph-api maps them.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from fastapi import HTTPException, status
from pydantic import ValidationError

from agents.contract.context import AgentOptions
from app.agent_server.models import Command, Config
from graph.workflow import SwitchyardGraph

__all__ = [
    "check_nodes",
    "check_state_values",
    "graph_input",
    "messages_of",
    "run_options",
]

INPUT_KEYS = ("messages", "user_id", "session_id", "target_agent", "agent_input")
#: Message types a caller may add: LangChain's and the role names of chat APIs.
MESSAGE_TYPES = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "assistant": "ai",
    "system": "system",
}
MAX_MESSAGES = 100
_USER_ID = re.compile(r"^[\w.@+-]{1,128}$")
_AGENT = re.compile(r"^[a-z_][a-z0-9_]{0,39}$")


def unprocessable(message: str) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, message)


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, block in enumerate(content):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text") or ""))
            else:
                raise unprocessable(
                    f"{where}.content[{i}]: only text content is supported (a string, or "
                    "blocks {'type': 'text', 'text': ...})"
                )
        return "\n".join(parts)
    raise unprocessable(f"{where}.content must be text or a list of text blocks")


def messages_of(raw: Any, *, max_chars: int, where: str = "input.messages") -> list[dict[str, Any]]:
    """Messages as LangChain message dicts ``{"type", "content", "id"[, "name"]}``."""
    items = raw if isinstance(raw, list) else [raw]
    if len(items) > MAX_MESSAGES:
        raise unprocessable(f"{where}: at most {MAX_MESSAGES} messages per request")
    out = []
    for i, item in enumerate(items):
        here = f"{where}[{i}]"
        if isinstance(item, str):
            item = {"type": "human", "content": item}
        if not isinstance(item, dict):
            raise unprocessable(f"{here} must be a message object or a string")
        kind = MESSAGE_TYPES.get(str(item.get("type") or item.get("role") or ""))
        if kind is None:
            raise unprocessable(
                f"{here}: type (or role) must be one of {', '.join(sorted(MESSAGE_TYPES))}"
            )
        text = _text_of(item.get("content", ""), here)
        if len(text) > max_chars:
            raise unprocessable(
                f"{here} has {len(text)} characters; the limit is {max_chars} (MAX_MESSAGE_CHARS)"
            )
        message: dict[str, Any] = {"type": kind, "content": text}
        message_id = item.get("id")
        if message_id is not None:
            if not isinstance(message_id, str) or not 0 < len(message_id) <= 128:
                raise unprocessable(f"{here}.id must be a string of 1-128 characters")
            message["id"] = message_id
        else:
            message["id"] = str(uuid.uuid4())
        name = item.get("name")
        if isinstance(name, str) and 0 < len(name) <= 64:
            message["name"] = name
        out.append(message)
    return out


def graph_input(
    raw: Any,
    *,
    thread_id: str,
    user_id: str,
    agents: list[str],
    target_agent: str | None,
    max_chars: int,
) -> dict[str, Any] | None:
    """The run's input as the graph takes it (None: continue from the checkpoint)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise unprocessable(
            "input must be an object like {'messages': [{'type': 'human', 'content': '...'}]} "
            "or null"
        )
    unknown = sorted(set(raw) - set(INPUT_KEYS))
    if unknown:
        raise unprocessable(
            f"input has unknown keys {unknown}; the graph takes {', '.join(INPUT_KEYS)}"
        )
    out: dict[str, Any] = {"session_id": thread_id, "user_id": user_id}
    if raw.get("messages") is not None:
        out["messages"] = messages_of(raw["messages"], max_chars=max_chars)
    if raw.get("user_id") is not None:
        if not isinstance(raw["user_id"], str) or not _USER_ID.match(raw["user_id"]):
            raise unprocessable("input.user_id must be 1-128 letters, digits or . @ + - _")
        out["user_id"] = raw["user_id"]
    agent = raw.get("target_agent") or target_agent
    if agent is not None:
        if not isinstance(agent, str) or not _AGENT.match(agent) or agent not in agents:
            raise unprocessable(f"input.target_agent must be one of: {', '.join(agents)}")
        out["target_agent"] = agent
    if raw.get("agent_input") is not None:
        if not isinstance(raw["agent_input"], dict):
            raise unprocessable("input.agent_input must be an object (the agent's request)")
        out["agent_input"] = raw["agent_input"]
    return out


def run_options(
    options_model: type[AgentOptions],
    context: dict[str, Any] | None,
    config: Config | None,
) -> dict[str, Any]:
    """The run's agent options: ``context``, plus option names in ``config.configurable``."""
    known = set(options_model.model_fields)
    merged = {
        k: v for k, v in ((config.configurable or {}) if config else {}).items() if k in known
    }
    merged.update(context or {})
    try:
        options = options_model.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"context.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise unprocessable(f"{problems} (the options are: {', '.join(sorted(known))})") from None
    return options.model_dump(exclude_none=True)


def node_names(graph: SwitchyardGraph) -> list[str]:
    return [n for n in graph.nodes if not n.startswith("__")]


def check_nodes(graph: SwitchyardGraph, nodes: Any, field: str) -> None:
    """``nodes`` ("*" or a list) must name nodes of the root graph."""
    if nodes is None or nodes == "*":
        return
    known = node_names(graph)
    names = [nodes] if isinstance(nodes, str) else list(nodes)
    wrong = [n for n in names if n not in known]
    if wrong:
        raise unprocessable(f"{field}: unknown nodes {wrong}; the graph's nodes are {known}")


def check_command(graph: SwitchyardGraph, command: Command, max_chars: int) -> dict[str, Any]:
    """The command as the worker runs it (``update`` checked like a state update)."""
    out: dict[str, Any] = {}
    if "resume" in command.model_fields_set:
        out["resume"] = command.resume
    if command.update is not None:
        if isinstance(command.update, dict):
            out["update"] = check_state_values(graph, command.update, max_chars, "command.update")
        else:
            pairs = [[str(k), v] for k, v in command.update]
            check_state_values(graph, dict(pairs), max_chars, "command.update")
            out["update"] = pairs
    goto = command.goto
    if goto is not None:
        targets = goto if isinstance(goto, list) else [goto]
        names = [t if isinstance(t, str) else t.node for t in targets]
        check_nodes(graph, names, "command.goto")
        out["goto"] = [t if isinstance(t, str) else t.model_dump() for t in targets]
    if not out:
        raise unprocessable("command needs at least one of resume, update, goto")
    return out


def check_state_values(
    graph: SwitchyardGraph, values: dict[str, Any], max_chars: int, field: str = "values"
) -> dict[str, Any]:
    """State values for an update: keys of the root state; messages as for an input."""
    keys = list(graph.stream_channels_list)
    unknown = sorted(set(values) - set(keys))
    if unknown:
        raise unprocessable(f"{field} has unknown keys {unknown}; the state's keys are {keys}")
    out = dict(values)
    if out.get("messages") is not None:
        out["messages"] = messages_of(
            out["messages"], max_chars=max_chars, where=f"{field}.messages"
        )
    return out
