"""The analytics agent through the API: `/analytics/query`, charts, `/chat` and `/chat/stream`.

The app seeds the dataset at start-up (the session database is seeded once; later starts find
the version marker) and opens the reader pool; no model is configured here, so the deterministic
plan answers (the stub OpenAI server drives the model path in `test_api_model.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from app.thread_ids import thread_key
from config import Settings

KEYS = ("alice-key", "bob-key")


@pytest.fixture
def api(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(rate_limit_per_minute=10_000))) as client:
        yield client


@pytest.fixture
def keyed_api(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    settings = make_settings(api_keys=",".join(KEYS), rate_limit_per_minute=10_000)
    with TestClient(create_app(settings)) as client:
        yield client


def as_key(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def sse_events(client: TestClient, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every (event, data) of one /chat/stream answer, in order."""
    events: list[tuple[str, Any]] = []
    kind = "message"
    with client.stream("POST", "/chat/stream", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((kind, json.loads(line.split(":", 1)[1])))
    return events


def summary(events: list[tuple[str, Any]]) -> list[str]:
    """A readable line per event (progress: tool and stage; node: agent/node)."""
    lines = []
    for kind, data in events:
        if kind == "progress":
            inner = data["data"]
            lines.append(f"progress {inner['tool']}:{inner['stage']} ({inner['message']})")
        elif kind == "node":
            lines.append(f"node {data['agent'] or 'root'}/{data['node']}")
        elif kind == "route":
            lines.append(f"route -> {data['agent']} ({data['method']})")
        elif kind == "token":
            lines.append(f"token {data['text']!r}")
        elif kind == "answer":
            lines.append(f"answer by {data['agent']}: {data['answer'][:60]!r}...")
        else:
            lines.append(kind)
    return lines


# --- POST /analytics/query -------------------------------------------------------------------


def test_a_question_is_answered_with_sql_rows_analysis_and_a_chart(api: TestClient) -> None:
    response = api.post("/analytics/query", json={"question": "Monthly downtime by plant in 2025"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["method"] == "semantic-layer" and "analytics.production" in body["sql"]
    assert body["columns"] == ["month", "plant", "downtime_minutes"]
    assert body["row_count"] == 60 and len(body["rows"]) == 60 and not body["truncated"]
    assert body["analysis"]["query_type"] == "trend" and body["recommendations"]
    assert body["root_cause"] is None and body["errors"] == [] and not body["unavailable"]
    assert "Chattanooga Assembly" in body["text"]  # the planted August spike stands out
    chart = body["chart"]
    assert chart["chart_type"] == "line" and chart["vega_lite"]["data"]["values"]
    assert chart["url"] == f"/analytics/chart/{chart['chart_id']}.png"
    assert chart["svg_url"] == f"/analytics/chart/{chart['chart_id']}.svg"
    png = api.get(chart["url"])
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG\r\n\x1a\n") and len(png.content) > 10_000
    svg = api.get(chart["svg_url"])
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in svg.text and "Chattanooga Assembly" in svg.text  # the legend
    again = api.get(chart["url"])  # served from the render cache
    assert again.content == png.content
    charts = api.get("/metrics").json()["analytics"]["charts"]
    assert charts["stored"] >= 1 and charts["rendered"] == 2 and charts["render_cache_hits"] >= 1


def test_a_why_question_carries_the_root_cause(api: TestClient) -> None:
    response = api.post(
        "/analytics/query", json={"question": "Why did the damage rate rise in Q3 2025?"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    root = body["root_cause"]
    assert root["metric"] == "damage_rate_pct" and root["change"] > 0
    assert root["drivers"][0]["member"] == "Rapid Haul Logistics"
    assert "Rapid Haul Logistics" in body["text"] and "Southwest" in body["text"]
    assert body["recommendations"][0].startswith("Investigate carrier Rapid Haul Logistics")


def test_two_breakdowns_chart_as_grouped_bars_not_stacked_rates(api: TestClient) -> None:
    body = api.post(
        "/analytics/query", json={"question": "Damage rate by carrier and region in Q3 2025"}
    ).json()
    assert body["columns"] == ["carrier", "region", "damage_rate_pct"] and body["row_count"] == 25
    chart = body["chart"]
    assert chart["chart_type"] == "grouped_bar" and chart["series"] == "region"
    encoding = chart["vega_lite"]["encoding"]
    assert encoding["yOffset"] == {"field": "region"} and encoding["color"]["field"] == "region"
    worst = max(body["rows"], key=lambda row: row[2])
    assert worst[:2] == ["Rapid Haul Logistics", "Southwest"]  # the planted story, as drawn
    svg = api.get(chart["svg_url"])
    assert svg.status_code == 200 and "Southwest" in svg.text


def test_a_question_outside_the_catalogue_gets_an_honest_answer(api: TestClient) -> None:
    response = api.post("/analytics/query", json={"question": "What is the weather tomorrow?"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["sql"] is None and body["rows"] == [] and body["chart"] is None
    assert body["method"] == "none" and "I can answer questions about" in body["text"]


def test_rows_are_capped(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(analytics_row_cap=25))) as client:
        body = client.post(
            "/analytics/query", json={"question": "Units sold per day in 2025"}
        ).json()
    assert len(body["rows"]) == 25 and body["truncated"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"question": "   "}, "question"),
        ({"question": ""}, "question"),
        ({"question": "revenue " * 300}, "question"),
        ({"question": "Revenue in 2025", "sql": "SELECT 1"}, "sql"),
        ({}, "question"),
        ({"question": 42}, "question"),
    ],
)
def test_bad_questions_are_422_naming_the_field(
    api: TestClient, payload: dict[str, Any], field: str
) -> None:
    response = api.post("/analytics/query", json=payload)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert any(d["field"] == field for d in error["details"]), error


# --- charts: owner scoping --------------------------------------------------------------------


def test_a_chart_is_served_only_to_the_key_that_asked(keyed_api: TestClient) -> None:
    alice, bob = (as_key(k) for k in KEYS)
    body = keyed_api.post(
        "/analytics/query", json={"question": "Revenue by region in 2025"}, headers=alice
    ).json()
    url = body["chart"]["url"]
    assert keyed_api.get(url, headers=alice).status_code == 200
    other = keyed_api.get(url, headers=bob)
    assert other.status_code == 404
    assert "another API key" in other.json()["error"]["message"]
    assert keyed_api.get(body["chart"]["svg_url"], headers=bob).status_code == 404
    assert keyed_api.get(url).status_code == 401  # no key at all
    assert keyed_api.get("/analytics/chart/0123456789abcdef.png", headers=alice).status_code == 404
    bad = keyed_api.get("/analytics/chart/not-a-chart.png", headers=alice)
    assert bad.status_code == 422
    assert keyed_api.get("/analytics/chart/0123456789abcdef.gif", headers=alice).status_code == 404


def test_a_chart_expires_with_its_ttl(make_settings: Callable[..., Settings]) -> None:
    with TestClient(create_app(make_settings(analytics_chart_ttl_seconds=60))) as client:
        body = client.post("/analytics/query", json={"question": "Revenue by make in 2025"}).json()
        chart_id = body["chart"]["chart_id"]
        redis = client.app.state.services.stores.redis_sync  # type: ignore[attr-defined]
        keys = [k.decode() for k in redis.scan_iter(match=f"sy:analytics:chart:*:{chart_id}:*")]
        assert len(keys) == 1 and 0 < redis.ttl(keys[0]) <= 60
        redis.delete(*keys)  # what expiry does
        assert client.get(body["chart"]["url"]).status_code == 404


# --- chat -----------------------------------------------------------------------------------


def test_chat_routes_an_analytics_question_to_the_agent(api: TestClient) -> None:
    response = api.post("/chat", json={"message": "Top 5 dealers by gross profit in 2025"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["agent"] == "analytics" and body["route"]["method"] in ("keyword", "semantic")
    assert body["methods"] == {"analytics": "plan"}
    data = body["data"]["analytics"]
    assert data["row_count"] == 5 and data["columns"] == ["dealer", "gross_profit"]
    assert data["chart"]["url"].startswith("/analytics/chart/")
    assert api.get(data["chart"]["url"]).status_code == 200
    # the shared conversation holds the question and one answer: no tool traffic
    session = api.get(f"/session/{body['session_id']}").json()
    roles = [(m["role"], m["agent"]) for m in session["last_messages"]]
    assert roles == [("user", None), ("assistant", "analytics")]


def test_a_follow_up_turn_keeps_the_analytics_context(api: TestClient) -> None:
    first = api.post("/chat", json={"message": "Units sold by region in 2025"}).json()
    second = api.post(
        "/chat",
        json={"message": "Revenue by region in 2024", "session_id": first["session_id"]},
    ).json()
    assert second["agent"] == "analytics" and second["turn"] == 2
    state = api.app.state.services.graph  # type: ignore[attr-defined]
    snapshot = api.portal.call(  # type: ignore[union-attr]
        state.aget_state,
        {"configurable": {"thread_id": thread_key("anonymous", first["session_id"])}},
    )
    context = snapshot.values["agent_contexts"]["analytics"]
    assert context["turns_handled"] == 2
    assert context["last_question"] == "Revenue by region in 2024"
    assert "analytics.sales" in context["last_sql"] and context["last_row_count"] == 5


def test_a_streamed_turn_sends_progress_before_the_answer(api: TestClient) -> None:
    events = sse_events(api, {"message": "Why did the damage rate rise in Q3 2025?"})
    lines = summary(events)
    print("\nstreamed event sequence (no model):\n  " + "\n  ".join(lines))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "session" and kinds[-1] == "answer" and "error" not in kinds
    route = next(data for kind, data in events if kind == "route")
    assert route["agent"] == "analytics"
    progress = [data for kind, data in events if kind == "progress"]
    assert all(p["agent"] == "analytics" and p["data"]["type"] == "progress" for p in progress)
    steps = [(p["data"]["tool"], p["data"]["stage"]) for p in progress]
    assert steps[:4] == [
        ("sql_generation_tool", "start"),
        ("sql_generation_tool", "done"),
        ("sql_execution_tool", "start"),
        ("sql_execution_tool", "done"),
    ]
    assert {t for t, _ in steps[4:]} == {
        "kpi_analysis_tool",
        "chart_configuration_tool",
        "root_cause_analysis_tool",
    }
    assert kinds.index("route") < kinds.index("progress")
    last_progress = max(i for i, k in enumerate(kinds) if k == "progress")
    assert last_progress < kinds.index("answer")
    answer = events[-1][1]
    assert answer["agent"] == "analytics" and "Rapid Haul Logistics" in answer["answer"]
    root = answer["data"]["analytics"]["root_cause"]
    assert root["drivers"][0]["member"] == "Rapid Haul Logistics"


def test_health_reports_the_reader_pool(api: TestClient) -> None:
    body = api.get("/health").json()
    analytics = body["dependencies"]["analytics"]
    assert analytics["status"] == "ok" and analytics["mode"] == "server"
    assert analytics["required"] is False and analytics["target"].startswith("sy_test_reader_")
    pool = api.get("/metrics").json()["analytics"]["pool"]
    assert pool["pool_max"] == 4
