"""What a run's event stream carries, from LangGraph's stream chunks.

Every run's stream starts with ``queued`` and ``started`` (``resumed`` when a worker continues it
from a checkpoint) and ends with ``done``, ``failed`` or ``cancelled`` (the worker's lifecycle,
:mod:`app.runs.worker`). In between:

- a ``turn`` run (analyses) carries compact events: ``node`` ``{"agent", "node"}`` for each node
  that finished (``agent`` is the agent whose subgraph it belongs to, empty for the spine) and
  ``custom`` ``{"agent", "data"}`` for what a node wrote to LangGraph's stream writer;
- an ``agent`` run (the Agent Server API) carries the stream modes its caller asked for, named as
  the Agent Server names them, data as JSON: ``values``, ``updates``, ``custom``, ``debug``,
  ``tasks``, ``checkpoints``; ``messages-tuple`` as ``messages`` ``[message, metadata]``;
  ``messages`` as ``messages/metadata``, ``messages/partial``, ``messages/complete``. With
  ``stream_subgraphs`` the events of a subgraph are named ``<mode>|<namespace>``; without it
  only the root graph's events are sent, except the answer tokens of the agents' answer nodes
  (every Switchyard answer comes from inside an agent's subgraph, so a chat client without
  ``stream_subgraphs`` would otherwise see no tokens at all). ``values`` are the thread's
  state only: a subgraph's values are never sent, because the JS SDK's stream manager (under
  agent-chat-ui's ``useStream``) takes every ``values|<namespace>`` event outside a ``tools:``
  namespace as the thread's state, and an agent's working state holds no conversation (the
  chat would empty while the agent works). A subgraph's steps still come as
  ``updates|<namespace>``, its tokens as ``messages|<namespace>``, its state from
  ``GET /threads/{id}/state?subgraphs=true``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, BaseMessageChunk, message_chunk_to_message

from app.runs.spec import RunSpec
from app.serde import dumps
from graph.registry import agent_of

__all__ = ["LANGGRAPH_MODES", "STREAM_MODES", "EventMapper"]

#: Stream modes a caller may ask for (the Agent Server's list).
STREAM_MODES = (
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "debug",
    "tasks",
    "checkpoints",
    "events",
)
#: LangGraph's own modes, which are forwarded as they come.
LANGGRAPH_MODES = ("values", "updates", "custom", "debug", "tasks", "checkpoints")

Event = tuple[str, str]


class EventMapper:
    """Turns ``(namespace, mode, chunk)`` of ``astream(..., subgraphs=True)`` into events."""

    def __init__(self, spec: RunSpec, streams_answer: Callable[[str, str], bool]) -> None:
        self.spec = spec
        self.streams_answer = streams_answer
        requested = set(spec.stream_modes)
        self.tuples = "messages-tuple" in requested
        self.legacy_messages = "messages" in requested and not self.tuples
        self.forwarded = requested & set(LANGGRAPH_MODES)
        self._partial: dict[str, BaseMessageChunk] = {}

    @property
    def modes(self) -> list[str]:
        """The modes to ask LangGraph for."""
        if self.spec.kind == "turn":
            return ["updates", "custom"]
        modes = sorted(self.forwarded)
        if self.tuples or self.legacy_messages:
            modes.append("messages")
        return modes or ["values"]

    def events(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> list[Event]:
        if self.spec.kind == "turn":
            return self._compact(namespace, mode, chunk)
        if mode == "messages":
            return self._messages(namespace, chunk)
        if mode not in self.forwarded:
            return []
        if not namespace:
            return [(mode, dumps(chunk))]
        if mode == "values":  # the thread's state is the root's (see the module's docstring)
            return []
        if self.spec.subgraphs:
            return [(f"{mode}|{'|'.join(namespace)}", dumps(chunk))]
        return []

    @staticmethod
    def _compact(namespace: tuple[str, ...], mode: str, chunk: Any) -> list[Event]:
        agent = agent_of(namespace)
        if mode == "custom":
            return [("custom", json.dumps({"agent": agent, "data": chunk}, default=str))]
        return [("node", json.dumps({"agent": agent, "node": node})) for node in (chunk or {})]

    def _messages(self, namespace: tuple[str, ...], chunk: Any) -> list[Event]:
        message, metadata = chunk
        name = "messages"
        if namespace:
            if self.spec.subgraphs:
                name = f"messages|{'|'.join(namespace)}"
            elif not self.streams_answer(agent_of(namespace), str(metadata.get("langgraph_node"))):
                return []
        if self.tuples:
            return [(name, dumps((message, metadata)))]
        return self._legacy(message, metadata)

    def _legacy(self, message: BaseMessage, metadata: dict[str, Any]) -> list[Event]:
        """The older ``messages`` mode: the accumulated message so far, per message id."""
        out: list[Event] = []
        key = str(message.id)
        if isinstance(message, BaseMessageChunk):
            previous = self._partial.get(key)
            if previous is None:
                out.append(("messages/metadata", dumps({key: {"metadata": metadata}})))
                self._partial[key] = message
            else:
                self._partial[key] = previous + message
            out.append(("messages/partial", dumps([self._partial[key]])))
            if getattr(message, "chunk_position", None) == "last":
                out.append(self._complete(key))
            return out
        if key not in self._partial:
            out.append(("messages/metadata", dumps({key: {"metadata": metadata}})))
        if key in self._partial:
            return [*out, self._complete(key)]
        return [*out, ("messages/complete", dumps([message]))]

    def _complete(self, key: str) -> Event:
        return ("messages/complete", dumps([message_chunk_to_message(self._partial.pop(key))]))

    def finish(self) -> list[Event]:
        """``messages/complete`` for every message still partial when the stream ends.

        LangGraph sends a streamed message whole only when a node returns it under a new id, so
        a message whose tokens were streamed may never come whole; a client of the older mode
        still gets each message completed, at the latest when the run's stream ends.
        """
        return [self._complete(key) for key in list(self._partial)]
