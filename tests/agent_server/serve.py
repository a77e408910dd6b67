"""`python -m tests.agent_server.serve --port P`: the API with the test agents registered
(one registration call each, as for any agent), configured from the environment."""

from __future__ import annotations

import argparse
import logging

import uvicorn

from app.api import create_app
from config import load_settings
from graph.agents import default_agents
from graph.registry import AgentRegistry
from tests.agent_server.agents import approval_agent, steps_agent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    settings = load_settings()
    logging.basicConfig(
        level=settings.api.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    registry = AgentRegistry(default_agents())
    registry.register(approval_agent())
    registry.register(steps_agent())
    uvicorn.run(
        create_app(settings, registry=registry),
        host="127.0.0.1",
        port=args.port,
        log_level=settings.api.log_level.lower(),
    )


if __name__ == "__main__":
    main()
