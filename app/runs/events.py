"""The one event mapper: LangGraph's stream chunks to the app's events, for every way of running.

Every run of the graph goes through :func:`app.runs.executor.execute`, which hands each
``(namespace, mode, chunk)`` of ``astream(..., subgraphs=True)`` to an :class:`EventMapper`.
The mapper decodes a chunk into the app's internal events once (the same decoding for every
caller) and renders them in its caller's wire format:

==========================  ==========================  ==========  ======================
internal event (LangGraph)  ``/chat/stream``            turn run    Agent Server run
==========================  ==========================  ==========  ======================
``progress`` {agent, data}  ``progress`` {agent, data}  same        ``custom``: the data
(``custom``: what a node                                            as written (1)
wrote to the stream writer)
``node`` {agent, node}      ``node``; ``route`` after   ``node``    ``updates`` (1)
(``updates``, per node)     the root's ingest / route
``token`` (``messages``,    ``token`` {agent, node,     —           ``messages`` (2)
an answer node's chunk)     text, message_id}
root ``values``             kept: the turn's result     —           ``values`` (root only)
``debug`` ``tasks`` ...     —                           —           forwarded (1)
==========================  ==========================  ==========  ======================

(1) with ``stream_subgraphs`` a subgraph's event is named ``<mode>|<namespace>``; without it
only the root's are sent. (2) ``[message, metadata]`` for ``messages-tuple``; the older
``messages`` mode as ``messages/metadata``, ``messages/partial``, ``messages/complete``; any
node's tokens (``messages|<namespace>``) with ``stream_subgraphs``, the answer nodes' without.

``agent`` is the agent whose subgraph the chunk came from (empty for the spine). The names of
each wire are what its clients depend on: ``/chat/stream``'s are the app's own, the Agent
Server's are langgraph-api's (langgraph-sdk, RemoteGraph and agent-chat-ui read them). A run's
lifecycle events (``queued``, ``started``, ``done``, ``failed``, ...) are the worker's
(:mod:`app.runs.worker`); the failure of any run is decided once, in :mod:`app.runs.executor`.

Agent Server specifics: with ``stream_subgraphs`` the events of a subgraph are named
``<mode>|<namespace>``; without it only the root graph's events are sent, except the answer
tokens of the agents' answer nodes (every Switchyard answer comes from inside an agent's
subgraph, so a chat client without ``stream_subgraphs`` would otherwise see no tokens at all).
``values`` are the thread's state only: a subgraph's values are never sent, because the JS
SDK's stream manager (under agent-chat-ui's ``useStream``) takes every ``values|<namespace>``
event outside a ``tools:`` namespace as the thread's state, and an agent's working state holds
no conversation (the chat would empty while the agent works). A subgraph's steps still come as
``updates|<namespace>``, its tokens as ``messages|<namespace>``, its state from
``GET /threads/{id}/state?subgraphs=true``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from langchain_core.messages import (
    AIMessageChunk,
    BaseMessage,
    BaseMessageChunk,
    message_chunk_to_message,
)

from app.runs.spec import RunSpec
from app.serde import dumps
from graph.registry import agent_of

__all__ = ["LANGGRAPH_MODES", "STREAM_MODES", "Event", "EventMapper", "Progress", "Wire"]

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

#: An event on a wire: its name and its data as JSON.
Event = tuple[str, str]
#: ``chat``: /chat/stream; ``turn``: a turn run's stream (analyses); ``agent``: an Agent Server
#: run's; ``result``: no events, only the run's final state (the synchronous endpoints).
Wire = Literal["chat", "turn", "agent", "result"]

StreamsAnswer = Callable[[str, str], bool]


class Progress(NamedTuple):
    """The app's one progress event: what a node wrote to LangGraph's stream writer."""

    agent: str
    namespace: tuple[str, ...]
    data: Any

    def compact(self) -> str:
        """``{agent, data}``, as /chat/stream and turn runs send it."""
        return json.dumps({"agent": self.agent, "data": self.data}, default=str)


def progress_of(namespace: tuple[str, ...], chunk: Any) -> Progress:
    return Progress(agent_of(namespace), namespace, chunk)


def _never(_agent: str, _node: str) -> bool:
    return False


class EventMapper:
    """Turns ``(namespace, mode, chunk)`` of ``astream(..., subgraphs=True)`` into events of
    one wire (see the module's table)."""

    def __init__(
        self,
        spec: RunSpec | None = None,
        streams_answer: StreamsAnswer | None = None,
        *,
        wire: Wire | None = None,
    ) -> None:
        self.spec = spec or RunSpec()
        self.wire: Wire = wire or self.spec.kind
        self.streams_answer = streams_answer or _never
        requested = set(self.spec.stream_modes)
        self.tuples = "messages-tuple" in requested
        self.legacy_messages = "messages" in requested and not self.tuples
        self.forwarded = requested & set(LANGGRAPH_MODES)
        self._partial: dict[str, BaseMessageChunk] = {}

    @classmethod
    def chat(cls, streams_answer: StreamsAnswer) -> EventMapper:
        """The mapper of ``/chat/stream``."""
        return cls(streams_answer=streams_answer, wire="chat")

    @classmethod
    def result(cls) -> EventMapper:
        """No events: the run's final state only (what ``ainvoke`` returns)."""
        return cls(wire="result")

    @property
    def modes(self) -> list[str]:
        """The modes to ask LangGraph for."""
        if self.wire == "chat":
            return ["updates", "messages", "values", "custom"]
        if self.wire == "turn":
            return ["updates", "custom"]
        if self.wire == "result":
            return ["updates", "values"]  # as ``ainvoke`` asks: interrupts come as updates
        modes = sorted(self.forwarded)
        if self.tuples or self.legacy_messages:
            modes.append("messages")
        return modes or ["values"]

    @property
    def subgraphs(self) -> bool:
        """Whether to stream the subgraphs' chunks (the result needs only the root's)."""
        return self.wire != "result"

    def events(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> list[Event]:
        if mode == "custom":
            return self._progress(progress_of(namespace, chunk))
        if self.wire == "agent":
            if mode == "messages":
                return self._messages(namespace, chunk)
            return self._forward(namespace, mode, chunk)
        if mode == "updates":
            return self._nodes(namespace, chunk)
        if mode == "messages" and self.wire == "chat":
            return self._token(namespace, chunk)
        return []

    # --- internal event -> wire ------------------------------------------------------------
    def _progress(self, progress: Progress) -> list[Event]:
        if self.wire in ("chat", "turn"):
            return [("progress", progress.compact())]
        if self.wire == "agent":
            return self._forward(progress.namespace, "custom", progress.data)
        return []

    def _nodes(self, namespace: tuple[str, ...], chunk: Any) -> list[Event]:
        if self.wire == "result":
            return []
        agent = agent_of(namespace)
        events: list[Event] = []
        for node, update in (chunk or {}).items():
            events.append(("node", json.dumps({"agent": agent, "node": node})))
            # a turn routes in its first step (`ingest`), a handoff routes again in `route`
            routed = node in ("ingest", "route") and isinstance(update, dict)
            if self.wire == "chat" and not namespace and routed and update.get("route"):
                events.append(("route", json.dumps(update["route"], default=str)))
        return events

    def _token(self, namespace: tuple[str, ...], chunk: Any) -> list[Event]:
        message, metadata = chunk
        agent = agent_of(namespace)
        node = metadata.get("langgraph_node")
        if isinstance(message, AIMessageChunk) and self.streams_answer(agent, str(node)):
            text = message.content if isinstance(message.content, str) else ""
            if text:
                token = {"agent": agent, "node": node, "text": text, "message_id": message.id}
                return [("token", json.dumps(token, default=str))]
        return []

    # --- the Agent Server's modes ----------------------------------------------------------
    def _forward(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> list[Event]:
        if mode not in self.forwarded:
            return []
        if not namespace:
            return [(mode, dumps(chunk))]
        if mode == "values":  # the thread's state is the root's (see the module's docstring)
            return []
        if self.spec.subgraphs:
            return [(f"{mode}|{'|'.join(namespace)}", dumps(chunk))]
        return []

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
