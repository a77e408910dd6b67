"""The task agent (see `agents/task/agent.py`)."""

from agents.task.agent import (
    DESCRIPTION,
    NAME,
    build_task_agent,
    build_task_subgraph,
    run_task_agent,
)

__all__ = ["DESCRIPTION", "NAME", "build_task_agent", "build_task_subgraph", "run_task_agent"]
