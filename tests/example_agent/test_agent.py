"""A new agent joins through its own package and one registration call: it is routed to, runs,
is checkpointed with the session, takes its own per-run options through the API, and Studio's
graph lists its stages."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from graph.agents import default_agents
from graph.registry import AgentRegistry
from graph.workflow import compile_graph
from tests.example_agent.agent import units_agent
from tests.support.graphs import agent_services


@pytest.fixture
def registry() -> AgentRegistry:
    registry = AgentRegistry(default_agents())
    registry.register(units_agent())  # the one registration call
    return registry


@pytest.fixture
def client(make_settings: Callable[..., Settings], registry: AgentRegistry) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(), registry=registry)) as test_client:
        yield test_client


def test_the_new_agent_is_routed_run_and_checkpointed(client: TestClient) -> None:
    body = client.post("/chat", json={"message": "Please convert 5 km to miles"}).json()
    assert body["agent"] == "units" and body["route"]["method"] == "keyword"
    assert body["answer"] == "5 km = 3.11 miles"
    session = body["session_id"]
    history = client.get(f"/session/{session}/history").json()["checkpoints"]
    assert any("units" in entry["nodes"] for entry in history)
    again = client.post(
        "/chat",
        json={"message": "convert 10 km to miles", "session_id": session,
              "options": {"units_digits": 0}},
    ).json()  # fmt: skip
    assert again["answer"] == "10 km = 6 miles" and again["turn"] == 2
    assert client.get(f"/session/{session}").json()["agents_used"] == ["units"]


def test_its_options_are_validated_by_the_api(client: TestClient) -> None:
    bad = client.post(
        "/chat", json={"message": "convert 1 km to m", "options": {"units_digits": 99}}
    )
    assert bad.status_code == 422 and "units_digits" in bad.text
    schema = client.get("/openapi.json").json()
    assert "units_digits" in str(schema)


def test_studio_lists_its_stages(
    registry: AgentRegistry, make_settings: Callable[..., Settings]
) -> None:
    services = agent_services(make_settings())
    nodes = set(compile_graph(registry, services).get_graph(xray=True).nodes)
    assert {"units:parse_units", "units:convert_units"} <= nodes
