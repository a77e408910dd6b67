"""Hostile and malformed input is a 4xx with a message, never a 5xx or a dead process."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings

JSON = {"content-type": "application/json"}


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(max_request_bytes=1_000_000))) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/api/v1/analyze",
            '{"files": [{"path": "tests/test_\\ud800.py", "content": "def test_a(): pass"}]}',
        ),
        ("/analyses", '{"files": [{"path": "tests/\\udfff.py", "content": "x = 1"}]}'),
        ("/chat", '{"message": "hello \\ud83d there"}'),
        ("/chat", '{"message": "hi", "options": {"\\udc00": 1}}'),
    ],
)
def test_a_lone_surrogate_is_422_naming_the_field(client: TestClient, path: str, body: str) -> None:
    response = client.post(path, content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert "lone surrogate" in response.json()["error"]["message"]
    assert client.get("/health").status_code == 200  # the server (and connection) lives on


def test_a_surrogate_pair_is_text(client: TestClient) -> None:
    response = client.post("/chat", content='{"message": "hello \\ud83d\\ude00"}', headers=JSON)
    assert response.status_code == 200, response.text


def test_a_body_that_is_not_utf8_is_422(client: TestClient) -> None:
    response = client.post("/chat", content=b'{"message": "caf\xe9"}', headers=JSON)
    assert response.status_code == 422 and "not UTF-8" in response.json()["error"]["message"]


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b"x" * size
        sent += size


@pytest.mark.parametrize("path", ["/chat", "/api/v1/analyze", "/documents"])
def test_a_chunked_body_above_the_limit_is_413(client: TestClient, path: str) -> None:
    headers = {"content-type": "multipart/form-data; boundary=b"} if path == "/documents" else JSON
    response = client.post(path, content=_chunks(10 * 1024 * 1024), headers=headers)
    assert response.status_code == 413, response.text
    assert "MAX_REQUEST_BYTES" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "options",
    [
        {"retrieval_top_k": 1_000_000_000},
        {"retrieval_top_k": -5},
        {"reflection_max_iterations": 1000},
        {"analysis_default_mode": "everything"},
        {"no_such_option": 1},
    ],
)
def test_options_out_of_bounds_are_422(client: TestClient, options: dict[str, object]) -> None:
    response = client.post(
        "/chat", json={"message": "what do my documents say?", "options": options}
    )
    assert response.status_code == 422, response.text
    assert next(iter(options)) in response.json()["error"]["message"]


def test_docs_are_served_without_a_cdn(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "cdn." not in page.text and "unpkg" not in page.text
    script = page.text.split('src="', 1)[1].split('"', 1)[0]
    assert client.get(script).status_code == 200  # the bundle is served by the app itself
