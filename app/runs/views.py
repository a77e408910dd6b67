"""A run as the Agent Server API shows it (also the body of its webhook).

The run store keeps the worker's statuses (queued, running, done, failed, cancelled); the Agent
Server's are pending, running, success, error, timeout and interrupted (a cancelled run was
interrupted; a failed one timed out when RUN_TIMEOUT_SECONDS stopped it). A run record names
its thread by the stored key; the view by the owner's id (:mod:`app.thread_ids`).
"""

from __future__ import annotations

import json
from typing import Any

from app.thread_ids import client_thread_id

__all__ = ["AGENT_STATUS", "STORE_STATUSES", "agent_status", "run_view"]

AGENT_STATUS = {
    "queued": "pending",
    "running": "running",
    "done": "success",
    "failed": "error",
    "cancelled": "interrupted",
}
#: The store statuses behind each Agent Server status (for filters).
STORE_STATUSES = {
    "pending": ("queued",),
    "running": ("running",),
    "success": ("done",),
    "error": ("failed",),
    "timeout": ("failed",),
    "interrupted": ("cancelled",),
}


def agent_status(record: dict[str, str]) -> str:
    """The Agent Server status of a run record."""
    status = record.get("status", "queued")
    if status == "failed" and record.get("error_kind") == "timeout":
        return "timeout"
    return AGENT_STATUS.get(status, "pending")


def run_view(run_id: str, record: dict[str, str]) -> dict[str, Any]:
    """The ``Run`` object of the Agent Server API."""
    meta = json.loads(record.get("meta") or "{}")
    return {
        "run_id": run_id,
        "thread_id": client_thread_id(record.get("thread_id", "")),
        "assistant_id": meta.get("assistant_id", ""),
        "created_at": record.get("created_at", ""),
        "updated_at": record.get("updated_at") or record.get("created_at", ""),
        "status": agent_status(record),
        "metadata": meta.get("metadata") or {},
        "kwargs": meta.get("kwargs") or {},
        "multitask_strategy": meta.get("multitask_strategy") or "enqueue",
    }
