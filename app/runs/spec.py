"""How a background run is run: its input or command, where it starts, what it streams.

A :class:`RunSpec` travels with the run's stored input (validated by whoever submitted it: the
analyses router, the Agent Server API), so any worker, in any process, runs it the same way:

- ``kind`` ``turn`` (analyses): the run's event stream carries compact ``node`` / ``progress``
  events; ``agent``: it carries the Agent Server's stream modes (``values``, ``updates``,
  ``messages``, ``custom``, ``debug``, ...; ``mode|ns`` for subgraphs when asked);
- ``command`` (``resume``, ``update``, ``goto``) instead of an input, for interrupts;
- ``checkpoint``: start from (fork) this checkpoint instead of the thread's latest;
- ``durability`` ``sync`` by default: every step is saved before the next starts, which is
  what lets a run left by a dead process resume from its last step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Send

__all__ = ["RUN_KEY", "RunSpec", "run_config"]

#: The checkpoint metadata key naming the background run that wrote the checkpoint.
RUN_KEY = "sy_run_id"

Durability = Literal["sync", "async", "exit"]


@dataclass
class RunSpec:
    """Everything about a run except its input (see the module docstring)."""

    kind: Literal["turn", "agent"] = "turn"
    stream_modes: list[str] = field(default_factory=list)
    subgraphs: bool = False
    command: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    interrupt_before: list[str] | Literal["*"] | None = None
    interrupt_after: list[str] | Literal["*"] | None = None
    durability: Durability = "sync"
    recursion_limit: int = 100
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    webhook: str | None = None
    temporary: bool = False
    resumable: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RunSpec:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in (data or {}).items() if k in known})

    def graph_input(self, stored_input: Any) -> Any:
        """What to pass to ``astream`` on the run's first attempt."""
        if self.command is None:
            return stored_input
        goto = self.command.get("goto")
        if isinstance(goto, dict):
            goto = Send(goto["node"], goto.get("input"))
        elif isinstance(goto, list):
            goto = [Send(g["node"], g.get("input")) if isinstance(g, dict) else g for g in goto]
        kwargs: dict[str, Any] = {}
        if "resume" in self.command:
            kwargs["resume"] = self.command["resume"]
        if self.command.get("update") is not None:
            update = self.command["update"]
            kwargs["update"] = [tuple(p) for p in update] if isinstance(update, list) else update
        if goto:
            kwargs["goto"] = goto
        return Command(**kwargs)


def run_config(
    thread_id: str,
    run_id: str,
    owner: str = "",
    spec: RunSpec | None = None,
    *,
    fork: bool = False,
) -> RunnableConfig:
    """The LangGraph config of a background run. Its id lands in the checkpoints' metadata
    (``sy_run_id``, and ``run_id`` as langgraph-api writes it), which is how a restarted worker
    knows the run already began, and how a rollback finds the checkpoints the run wrote.
    ``fork``: start at the spec's checkpoint instead of the thread's latest."""
    spec = spec or RunSpec()
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if fork and spec.checkpoint:
        configurable["checkpoint_id"] = spec.checkpoint["checkpoint_id"]
        configurable["checkpoint_ns"] = spec.checkpoint.get("checkpoint_ns") or ""
    config: RunnableConfig = {
        "configurable": configurable,
        "metadata": {**spec.metadata, "owner": owner, RUN_KEY: run_id, "run_id": run_id},
        "recursion_limit": spec.recursion_limit,
    }
    if spec.tags:
        config["tags"] = list(spec.tags)
    return config
