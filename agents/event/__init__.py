"""The event agent (see `agents/event/agent.py`)."""

from agents.event.agent import (
    DESCRIPTION,
    NAME,
    build_event_agent,
    build_event_subgraph,
    run_event_agent,
)

__all__ = ["DESCRIPTION", "NAME", "build_event_agent", "build_event_subgraph", "run_event_agent"]
