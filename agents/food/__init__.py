"""The food agent (see `agents/food/agent.py`)."""

from agents.food.agent import (
    DESCRIPTION,
    NAME,
    build_food_agent,
    build_food_subgraph,
    run_food_agent,
)

__all__ = ["DESCRIPTION", "NAME", "build_food_agent", "build_food_subgraph", "run_food_agent"]
