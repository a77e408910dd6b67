"""The task agent: `agent.py` (definition, one turn), `spec.py` (registration), `prompts.py`."""

from agents.task.agent import NAME, build_task_agent, run_task_agent

__all__ = ["NAME", "build_task_agent", "run_task_agent"]
