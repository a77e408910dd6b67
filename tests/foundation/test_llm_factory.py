"""The model factory over real HTTP: provider selection, retries, cache, usage."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import openai
import pytest
import redis
from langchain_core.outputs import LLMResult

from config import Settings
from tests.support.stub_openai import StubOpenAI
from tools.providers.cache import RedisLLMCache
from tools.providers.chat_models import LLMConfigError, LLMFactory, UsageCounter, detect_provider


def test_auto_picks_the_openai_server_when_it_answers(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings(llm_provider="auto")
    choice = detect_provider(s)
    assert choice.provider == "openai"
    assert stub_openai.base_url in choice.reason
    assert "Ollama" not in choice.reason or "did not answer" not in choice.reason.split(";")[-1]


def test_auto_falls_back_to_none_when_the_server_is_down(
    make_settings: Callable[..., Settings],
) -> None:
    stub = StubOpenAI().start()
    url = stub.base_url
    stub.stop()
    s = make_settings(llm_provider="auto", openai_api_key="sk-t", openai_base_url=url)
    choice = detect_provider(s)
    assert choice.provider == "none"
    assert "did not answer" in choice.reason and url.split("/v1")[0] in choice.reason


def test_auto_without_any_key_is_none(make_settings: Callable[..., Settings]) -> None:
    choice = detect_provider(make_settings(llm_provider="auto"))
    assert choice.provider == "none"
    assert "no OPENAI_API_KEY" in choice.reason


def test_explicit_openai_without_key_or_url_is_a_clear_error(
    make_settings: Callable[..., Settings],
) -> None:
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        detect_provider(make_settings(llm_provider="openai"))


def _factory(settings: Settings, client: redis.Redis | None = None) -> LLMFactory:
    cache = (
        RedisLLMCache(client, None, ttl_seconds=settings.llm.cache_ttl_seconds) if client else None
    )
    return LLMFactory(settings, detect_provider(settings), cache=cache)


def test_retries_429_and_500_then_succeeds(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings(llm_retry_base_seconds=0.1)
    stub_openai.fail_next(429, 500)
    llm = _factory(s).get_llm()
    assert llm is not None
    start = time.monotonic()
    answer = llm.invoke("hello after errors")
    elapsed = time.monotonic() - start
    assert "hello after errors" in str(answer.content)
    assert len(stub_openai.requests) == 3 and stub_openai.calls == 1
    assert elapsed >= 0.1 + 0.2  # backoff doubled: 0.1 s then 0.2 s


def test_gives_up_after_max_retries_with_the_providers_error(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings(llm_max_retries=2)
    stub_openai.fail_next(503, 503, 503, 503)
    llm = _factory(s).get_llm()
    assert llm is not None
    with pytest.raises(openai.InternalServerError):
        llm.invoke("never")
    assert len(stub_openai.requests) == 3  # first try + 2 retries


def test_client_errors_are_not_retried(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings()
    stub_openai.fail_next(400)
    llm = _factory(s).get_llm()
    assert llm is not None
    with pytest.raises(openai.BadRequestError):
        llm.invoke("bad")
    assert len(stub_openai.requests) == 1


async def test_async_path_retries_too(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings()
    stub_openai.fail_next(502)
    llm = _factory(s).get_llm()
    assert llm is not None
    answer = await llm.ainvoke("async hello")
    assert "async hello" in str(answer.content)
    assert len(stub_openai.requests) == 2


def test_repeated_prompt_is_served_from_redis(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI, redis_client: redis.Redis
) -> None:
    s = stub_settings()
    factory = _factory(s, redis_client)
    llm = factory.get_llm()
    assert llm is not None
    first = llm.invoke("what is switchyard?")
    second = llm.invoke("what is switchyard?")
    assert first.content == second.content
    assert stub_openai.calls == 1
    keys = redis_client.keys("sy:llmcache:*")
    assert len(keys) == 1
    assert 3500 < redis_client.ttl(keys[0]) <= 3600
    # another temperature is another entry
    other = LLMFactory(
        s.model_copy(update={"llm": s.llm.model_copy(update={"temperature": 0.7})}),
        factory.choice,
        cache=factory.cache,
    )
    hot = other.get_llm()
    assert hot is not None
    hot.invoke("what is switchyard?")
    assert stub_openai.calls == 2


def test_token_usage_is_counted(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings()
    factory = _factory(s)
    llm = factory.get_llm()
    assert llm is not None
    llm.invoke("one two three")
    llm.invoke("four five")
    usage = factory.usage.snapshot()
    assert usage["calls"] == 2
    model_usage = usage["by_model"][s.llm.openai_model]
    assert model_usage["total_tokens"] == model_usage["input_tokens"] + model_usage["output_tokens"]
    assert model_usage["input_tokens"] >= 5


async def test_token_usage_of_async_calls_is_counted_on_the_callers_thread(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory = _factory(stub_settings())
    llm = factory.get_llm()
    assert llm is not None
    threads: list[int] = []
    on_llm_end = UsageCounter.on_llm_end

    def spy(self: UsageCounter, response: LLMResult, **kwargs: Any) -> None:
        threads.append(threading.get_ident())
        on_llm_end(self, response, **kwargs)

    monkeypatch.setattr(UsageCounter, "on_llm_end", spy)
    await llm.ainvoke("one two three")
    await llm.ainvoke("four five")
    assert factory.usage.snapshot()["calls"] == 2
    assert threads == [threading.get_ident()] * 2  # inline: no worker-thread hop per event


def test_fast_role_uses_the_cheaper_model(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings(llm_fast_model="tiny-router")
    factory = _factory(s)
    fast = factory.get_llm("fast")
    assert fast is not None
    fast.invoke("route me")
    assert stub_openai.requests[-1]["model"] == "tiny-router"
    assert factory.get_llm("fast") is fast  # memoised


def test_no_provider_means_no_model(make_settings: Callable[..., Settings]) -> None:
    assert _factory(make_settings(llm_provider="none")).get_llm() is None


def test_timeouts_are_retried_then_reported(
    stub_settings: Callable[..., Settings], stub_openai: StubOpenAI
) -> None:
    s = stub_settings(
        llm_timeout_seconds=0.3,
        llm_max_retries=1,
    )
    stub_openai.latency = 0.8
    llm = _factory(s).get_llm()
    assert llm is not None
    with pytest.raises(openai.APITimeoutError):
        llm.invoke("too slow")
    time.sleep(1.0)  # let the stub finish the abandoned requests before counting them
    assert len(stub_openai.requests) == 2  # first try + 1 retry, each cut off by the timeout
    stub_openai.latency = 0.0
    assert "quick" in str(llm.invoke("quick").content)
