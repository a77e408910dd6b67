"""The food agent: `agent.py` (definition, one turn), `spec.py` (registration), `prompts.py`."""

from agents.food.agent import NAME, build_food_agent, run_food_agent

__all__ = ["NAME", "build_food_agent", "run_food_agent"]
