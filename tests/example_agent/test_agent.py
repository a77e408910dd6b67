"""A new capability joins through its own package, one registration call for its agent and one
line in the component list: its engine opens with the app, its operation is served as a route
and listed in the operation registry, its agent is routed to, runs the operation as the caller,
is checkpointed with the session, takes its own per-run options through the API, and Studio's
graph lists its stages."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from app.components.registry import COMPONENTS
from config import Settings
from graph.agents import default_agents
from graph.registry import AgentRegistry
from graph.workflow import compile_graph
from tests.example_agent.agent import units_agent
from tests.example_agent.component import UNITS
from tests.example_agent.engine import LengthTable
from tests.support.graphs import agent_services


@pytest.fixture
def registry() -> AgentRegistry:
    registry = AgentRegistry(default_agents())
    registry.register(units_agent())  # the one registration call
    return registry


@pytest.fixture
def client(make_settings: Callable[..., Settings], registry: AgentRegistry) -> Iterator[TestClient]:
    components = [*COMPONENTS, UNITS]  # the one line in the component list
    app = create_app(make_settings(), registry=registry, components=components)
    with TestClient(app) as test_client:
        yield test_client


def test_its_operation_is_a_route_and_in_the_registry(client: TestClient) -> None:
    answer = client.post("/units/convert", json={"value": 5, "source": "km", "target": "mi"})
    assert answer.status_code == 200
    assert answer.json()["text"] == "5 km = 3.11 mi"
    refused = client.post("/units/convert", json={"value": -1, "source": "km", "target": "mi"})
    assert refused.status_code == 422 and "value" in refused.text
    services = client.app.state.services  # type: ignore[attr-defined]
    op = services.operations.get("convert_length")
    assert op.capability == "units" and op.read_only
    assert op.input_schema()["properties"]["target"]["enum"] == ["km", "m", "mi", "miles", "ft"]
    assert {o.capability for o in services.operations} >= {"units"}
    assert services.agents.engine(LengthTable).history == {"anonymous": ["5 km -> mi"]}


def test_without_its_component_a_turn_needing_its_engine_is_503(
    make_settings: Callable[..., Settings], registry: AgentRegistry
) -> None:
    with TestClient(create_app(make_settings(), registry=registry)) as bare:
        assert bare.post("/units/convert", json={}).status_code == 404  # no route either
        body = bare.post("/chat", json={"message": "Please convert 5 km to miles"})
    assert body.status_code == 503, body.text  # the one rule for a missing engine
    assert body.json()["error"]["dependency"] == "engine"


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
