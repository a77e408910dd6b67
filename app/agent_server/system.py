"""Agent Server API: ``/info`` and ``/ok``, which Studio, agent-chat-ui and the SDK call first.

Open without an API key, like ``/health``: they say what the server is, nothing more.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter

from app.agent_server.models import Info

router = APIRouter(tags=["system"])


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


@router.get("/info", response_model=Info)
async def info() -> Info:
    """Server information: versions and which parts of the Agent Server API it serves."""
    return Info(
        version="switchyard-0.1.0",
        langgraph_py_version=_version("langgraph"),
        flags={
            "assistants": True,
            "crons": False,
            "langsmith": False,
            "langsmith_tracing_replicas": False,
        },
        host={"kind": "self-hosted", "project_id": None, "revision_id": None},
    )


@router.get("/ok", response_model=dict[str, bool])
async def ok() -> dict[str, bool]:
    """Liveness: ``{"ok": true}`` (``/health`` checks the dependencies)."""
    return {"ok": True}
