"""Fixtures for the analysis graph and API tests: compiled graphs with a scripted (or no)
model, API clients on the real Redis, with or without the stub LLM server."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models import BaseChatModel

from config import Settings
from main import create_app
from tests.support.graphs import BoundGraph, agent_services, bound_graph, run_with_agent_state
from tests.support.stub_openai import StubOpenAI


def graph_for(model: BaseChatModel | None, **settings: Any) -> BoundGraph:
    """The full Switchyard graph, no checkpointer, answering with ``model``."""
    return bound_graph(
        agent_services(Settings(_env_file=None, llm_provider="none", **settings), model)
    )


def api_input(files: list[dict[str, Any]], mode: str = "hybrid", **request: Any) -> dict[str, Any]:
    """The input the API builds for ``files`` (see app.analyses.analysis_input)."""
    entries = [{"path": f["path"], "content": f["content"], "decode_error": None} for f in files]
    return {
        "messages": [{"role": "user", "content": "analyse these", "id": uuid.uuid4().hex}],
        "target_agent": "test_analysis",
        "agent_input": {
            "files": entries,
            "mode": mode,
            "config": request.pop("config", {}),
            "allow_downgrade": request.pop("allow_downgrade", False),
            "source": "api",
            **request,
        },
    }


Analyse = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
def analyse() -> Analyse:
    """Run an analysis through a graph: ``await analyse(graph, files, mode)`` -> final state."""

    async def run(
        graph: BoundGraph, files: list[dict[str, Any]], mode: str = "hybrid", **request: Any
    ) -> dict[str, Any]:
        return await run_with_agent_state(graph, api_input(files, mode, **request), "test_analysis")

    return run


FAST_QUEUE = {"analysis_claim_timeout_seconds": 3.0, "analysis_heartbeat_seconds": 0.3}


@pytest.fixture
def client(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    """The API on the test's Redis database, no chat model."""
    with TestClient(create_app(make_settings(**FAST_QUEUE))) as test_client:
        yield test_client


def stub_settings(stub: StubOpenAI, **overrides: Any) -> dict[str, Any]:
    """Settings that send chat-model calls to ``stub`` (no LLM cache: every call reaches it)."""
    return {
        "llm_provider": "openai",
        "openai_api_key": "sk-test",
        "openai_base_url": stub.base_url,
        "llm_cache_ttl_seconds": 0,
        "llm_rate_limit_per_minute": 60_000,
        **FAST_QUEUE,
        **overrides,
    }


@pytest.fixture
def stub_client(
    make_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> Iterator[TestClient]:
    """The API with the stub server as its chat model."""
    settings = make_settings(**stub_settings(stub_openai))
    with TestClient(create_app(settings)) as test_client:
        yield test_client
