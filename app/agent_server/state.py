"""Thread states (``StateSnapshot``) and checkpoints as the Agent Server shows them.

LangGraph's configs name the thread by its stored key; a view names it by the caller's id
(:mod:`app.thread_ids`), in the checkpoint, the parent checkpoint and every task's checkpoint.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from app.serde import interrupt_view, jsonable
from app.thread_ids import client_thread_id
from tools.analytics.chartlinks import LINK_PREFIX, ChartLinks

__all__ = [
    "checkpoint_view",
    "fresh_chart_links",
    "select_state",
    "snapshot_view",
    "thread_interrupts",
]


def checkpoint_view(config: RunnableConfig | None) -> dict[str, Any] | None:
    """``{"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"}`` of a config."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    if not conf.get("thread_id") or not conf.get("checkpoint_id"):
        return None
    view: dict[str, Any] = {
        "thread_id": client_thread_id(str(conf["thread_id"])),
        "checkpoint_ns": conf.get("checkpoint_ns") or "",
        "checkpoint_id": conf["checkpoint_id"],
    }
    if conf.get("checkpoint_map"):
        view["checkpoint_map"] = conf["checkpoint_map"]
    return view


def _task_checkpoint(state: Any) -> dict[str, Any] | None:
    """A task's ``state`` when it is a subgraph's config: its ``configurable``."""
    conf = state.get("configurable") if isinstance(state, dict) else None
    if not isinstance(conf, dict):
        return None
    if isinstance(conf.get("thread_id"), str):
        return {**conf, "thread_id": client_thread_id(conf["thread_id"])}
    return dict(conf)


def _task_view(task: Any) -> dict[str, Any]:
    state = task.state
    return {
        "id": task.id,
        "name": task.name,
        "path": list(task.path),
        "error": str(task.error) if task.error is not None else None,
        "interrupts": [interrupt_view(i) for i in task.interrupts],
        "checkpoint": _task_checkpoint(state),
        "state": snapshot_view(state) if isinstance(state, StateSnapshot) else None,
        "result": task.result,
    }


def snapshot_view(snapshot: StateSnapshot) -> dict[str, Any]:
    """A ``ThreadState``: values, next, tasks, checkpoint, metadata, created_at, parent,
    interrupts (all as plain JSON values)."""
    checkpoint = checkpoint_view(snapshot.config)
    parent = checkpoint_view(snapshot.parent_config)
    view = {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": [_task_view(t) for t in snapshot.tasks],
        "metadata": snapshot.metadata or {},
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": [interrupt_view(i) for i in snapshot.interrupts],
        "checkpoint_id": checkpoint["checkpoint_id"] if checkpoint else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
    }
    result: dict[str, Any] = jsonable(view)
    return result


def thread_interrupts(snapshot: StateSnapshot) -> dict[str, list[dict[str, Any]]]:
    """Pending interrupts by task id (a thread's ``interrupts``)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for task in snapshot.tasks:
        if task.interrupts:
            found[task.id] = jsonable([interrupt_view(i) for i in task.interrupts])
    return found


def select_state(view: dict[str, Any], select: list[str] | None) -> dict[str, Any]:
    """Keep the selected fields (``values.<key>`` keeps one key of the values)."""
    if not select:
        return view
    keys = {s.split(".", 1)[0] for s in select}
    out = {k: v for k, v in view.items() if k in keys}
    value_keys = {s.split(".", 1)[1] for s in select if s.startswith("values.")}
    if value_keys and "values" not in select and isinstance(out.get("values"), dict):
        out["values"] = {k: v for k, v in out["values"].items() if k in value_keys}
    return out


def fresh_chart_links(view: Any, links: ChartLinks | None, owner: str) -> Any:
    """`view` (a state or a history) with the owner's chart links in it signed again from now:
    the answers of a reopened thread show their charts (an <img> cannot send the API key, and
    the links in the stored messages have expired). Strings without a link are kept as they
    are."""
    if links is None:
        return view
    if isinstance(view, str):
        return links.refresh(view, owner) if LINK_PREFIX in view else view
    if isinstance(view, dict):
        return {k: fresh_chart_links(v, links, owner) for k, v in view.items()}
    if isinstance(view, list):
        return [fresh_chart_links(v, links, owner) for v in view]
    return view
