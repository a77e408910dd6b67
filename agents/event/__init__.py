"""The event agent: `agent.py` (definition, one turn), `spec.py` (registration), `prompts.py`."""

from agents.event.agent import NAME, build_event_agent, run_event_agent

__all__ = ["NAME", "build_event_agent", "run_event_agent"]
