"""review_with_llm through the real OpenAI client and the stub server: the forced tool call,
the one retry on a malformed answer, and provider failures."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.runtime import Runtime

from agents.contract.context import AgentServices, RunContext
from agents.test_analysis.review import make_review_node
from agents.test_analysis.state import ReviewTask
from config import Settings
from tests.support.stub_openai import StubOpenAI
from tests.test_analysis.graphkit import BatchRecorder, synthetic_suite
from tools.providers.chat_models import LLMFactory, ProviderChoice
from tools.test_analysis.batches import batch_tests_for_llm
from tools.test_analysis.parsing import parse_file

Node = Any


@pytest.fixture
async def review(stub_openai: StubOpenAI) -> AsyncIterator[Node]:
    settings = Settings(
        _env_file=None,
        llm_provider="openai",
        openai_api_key="sk-test",
        openai_base_url=stub_openai.base_url,
        llm_cache_ttl_seconds=0,
        llm_max_retries=0,
        llm_rate_limit_per_minute=60_000,
    )
    factory = LLMFactory(
        settings, ProviderChoice("openai", "test", "stub-model", stub_openai.base_url)
    )
    node = make_review_node()
    runtime = Runtime(
        context=RunContext(services=AgentServices(settings, factory)),
        stream_writer=lambda chunk: None,
    )

    async def run(task: ReviewTask) -> dict[str, Any]:
        result: dict[str, Any] = await node(task, runtime)
        return result

    yield run
    await factory.aclose()


def task(bar: float = 0.5) -> ReviewTask:
    (source,) = synthetic_suite(5)
    parsed = parse_file(source["path"], source["content"], cache=None)
    (batch,) = batch_tests_for_llm([parsed], 5)
    return ReviewTask(batch=batch.model_dump(), min_confidence=bar)


async def test_the_model_is_forced_to_call_the_review_tool(
    review: Node, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = BatchRecorder()
    (outcome,) = (await review(task()))["llm_reviews"].values()
    assert outcome["status"] == "ok" and outcome["calls"] == 1
    assert outcome["findings"][0]["smell"] == "magic-number"
    sent = stub_openai.requests[0]
    assert sent["tool_choice"]["function"]["name"] == "LLMReview"
    schema = sent["tools"][0]["function"]["parameters"]
    assert "unknown-test" in schema["$defs"]["LLMReviewFinding"]["properties"]["smell"]["enum"]


async def test_a_prose_answer_is_retried_once_with_the_problem(
    review: Node, stub_openai: StubOpenAI
) -> None:
    steps: list[Any] = ["These tests look fine to me.", BatchRecorder()]

    def answer(request: dict[str, Any]) -> Any:
        step = steps.pop(0)
        return step if isinstance(step, str) else step(request)

    stub_openai.responder = answer
    (outcome,) = (await review(task()))["llm_reviews"].values()
    assert outcome["status"] == "ok" and outcome["calls"] == 2
    retry = stub_openai.requests[1]["messages"][-1]["content"]
    assert "could not be used" in retry and "not JSON" in retry


async def test_arguments_that_never_fit_leave_the_batch_malformed(
    review: Node, stub_openai: StubOpenAI
) -> None:
    stub_openai.responder = lambda request: {"issues": "none"}
    (outcome,) = (await review(task()))["llm_reviews"].values()
    assert outcome["status"] == "malformed" and outcome["calls"] == 2
    assert outcome["findings"] == [] and "findings" in outcome["error"]


async def test_json_text_instead_of_the_tool_call_is_accepted(
    review: Node, stub_openai: StubOpenAI
) -> None:
    recorder = BatchRecorder()
    stub_openai.responder = lambda request: f"```json\n{json.dumps(recorder(request))}\n```"
    (outcome,) = (await review(task()))["llm_reviews"].values()
    assert outcome["status"] == "ok" and len(outcome["findings"]) == 1


async def test_a_provider_failure_fails_the_task(review: Node, stub_openai: StubOpenAI) -> None:
    stub_openai.fail_next(503)
    with pytest.raises(Exception, match="503"):
        await review(task())
