"""The chat-model factory: `get_llm(role)` for every node, one place for resilience.

Providers: an OpenAI-compatible API (`ChatOpenAI` with a base URL: OpenAI, DeepSeek, vLLM),
Ollama (`ChatOllama`), or none. Provider `auto` picks the first that answers: Ollama if its
server responds, else an OpenAI-compatible server if a key (or base URL) is set and it responds,
else none — and says which, and why, at start-up and in `/health`.

Everything a node should not have to think about lives here: retries with exponential backoff
on 429 / 5xx / timeouts (the HTTP transport, `tools.providers.transport`), a client-side rate
limiter (LangChain's token bucket), a concurrency cap (the shared connection pool), the Redis
response cache (`tools.providers.cache`), timeouts, and token usage counting.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import httpx
from langchain_core.caches import BaseCache
from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import LLMResult
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from config import Settings, redact_url
from tools.providers import transport as llm_transport
from tools.providers.settings import LLMRole

log = logging.getLogger(__name__)

ProviderName = Literal["openai", "ollama", "none"]
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class LLMConfigError(RuntimeError):
    """The configured provider cannot be used; the message says what to set."""


@dataclass(frozen=True)
class ProviderChoice:
    """Which chat-model provider is in use and why."""

    provider: ProviderName
    reason: str
    model: str | None = None
    base_url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": redact_url(self.base_url) if self.base_url else None,
            "reason": self.reason,
        }


def openai_base_url(settings: Settings) -> str:
    return (settings.llm.openai_base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")


def _probe_ollama(settings: Settings) -> str | None:
    """None when Ollama answers, else why not."""
    url = f"{settings.llm.ollama_base_url.rstrip('/')}/api/tags"
    try:
        response = httpx.get(url, timeout=settings.llm.probe_timeout_seconds)
    except httpx.HTTPError as exc:
        return f"Ollama at {redact_url(settings.llm.ollama_base_url)} did not answer ({exc!r})"
    if response.status_code != 200:
        return (
            f"Ollama at {redact_url(settings.llm.ollama_base_url)} answered {response.status_code}"
        )
    return None


def _probe_openai(settings: Settings) -> str | None:
    """None when the OpenAI-compatible server answers with this key, else why not."""
    base = openai_base_url(settings)
    headers = {}
    if settings.llm.openai_api_key is not None:
        headers["Authorization"] = f"Bearer {settings.llm.openai_api_key.get_secret_value()}"
    try:
        response = httpx.get(
            f"{base}/models", headers=headers, timeout=settings.llm.probe_timeout_seconds
        )
    except httpx.HTTPError as exc:
        return f"OpenAI-compatible server at {redact_url(base)} did not answer ({exc!r})"
    if response.status_code in (401, 403):
        return (
            f"OpenAI-compatible server at {redact_url(base)} rejected the key "
            f"(HTTP {response.status_code}); check OPENAI_API_KEY"
        )
    # Any other answer (200, or 404 from servers without /models) means the server is there.
    return None


def detect_provider(settings: Settings) -> ProviderChoice:
    """Resolve LLM_PROVIDER (probing the servers for `auto`) into the provider to use."""
    wanted = settings.llm.provider
    if wanted == "none":
        return ProviderChoice("none", "LLM_PROVIDER=none")
    if wanted == "ollama":
        return ProviderChoice(
            "ollama", "LLM_PROVIDER=ollama", settings.llm.ollama_model, settings.llm.ollama_base_url
        )
    has_openai = settings.llm.openai_api_key is not None or settings.llm.openai_base_url is not None
    if wanted == "openai":
        if not has_openai:
            raise LLMConfigError(
                "LLM_PROVIDER=openai needs OPENAI_API_KEY (or DEEPSEEK_API_KEY), or "
                "OPENAI_BASE_URL for a server without keys such as vLLM."
            )
        return ProviderChoice(
            "openai", "LLM_PROVIDER=openai", settings.llm.openai_model, openai_base_url(settings)
        )
    # auto
    reasons = []
    ollama_problem = _probe_ollama(settings)
    if ollama_problem is None:
        return ProviderChoice(
            "ollama",
            f"auto: Ollama answered at {redact_url(settings.llm.ollama_base_url)}",
            settings.llm.ollama_model,
            settings.llm.ollama_base_url,
        )
    reasons.append(ollama_problem)
    if has_openai:
        openai_problem = _probe_openai(settings)
        if openai_problem is None:
            base = openai_base_url(settings)
            return ProviderChoice(
                "openai",
                f"auto: OpenAI-compatible server answered at {redact_url(base)}",
                settings.llm.openai_model,
                base,
            )
        reasons.append(openai_problem)
    else:
        reasons.append("no OPENAI_API_KEY / OPENAI_BASE_URL set")
    return ProviderChoice("none", "auto: no provider answered: " + "; ".join(reasons))


class UsageCounter(UsageMetadataCallbackHandler):
    """Token usage per model (LangChain's handler) plus a count of completed LLM calls."""

    # Called in the caller's thread: a sync handler that is not inline is sent to a worker
    # thread for every event of every async call (start and end, twice a chat turn) to add
    # a few numbers under a lock.
    run_inline = True

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self._calls_lock = threading.Lock()

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        super().on_llm_end(response, **kwargs)
        with self._calls_lock:
            self.calls += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "by_model": {k: dict(v) for k, v in self.usage_metadata.items()},
        }


class LLMFactory:
    """Builds (and memoises per role) the chat models of one process."""

    def __init__(
        self,
        settings: Settings,
        choice: ProviderChoice,
        *,
        cache: BaseCache | None = None,
    ) -> None:
        self.settings = settings
        self.choice = choice
        self.cache = cache
        self.usage = UsageCounter()
        self._policy = llm_transport.RetryPolicy(
            max_retries=settings.llm.max_retries, base_seconds=settings.llm.retry_base_seconds
        )
        per_second = settings.llm.rate_limit_per_minute / 60.0
        # The bucket holds up to `max_concurrency` tokens: short bursts may use every slot,
        # the sustained rate stays at the configured requests per minute.
        self._rate_limiter = InMemoryRateLimiter(
            requests_per_second=per_second,
            check_every_n_seconds=min(0.1, 1.0 / per_second),
            max_bucket_size=float(settings.llm.max_concurrency),
        )
        self._models: dict[LLMRole, BaseChatModel] = {}
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None
        self._ahttp: httpx.AsyncClient | None = None

    @property
    def provider(self) -> ProviderName:
        return self.choice.provider

    def get_llm(self, role: LLMRole = "chat") -> BaseChatModel | None:
        """The chat model for `role` ("chat", or "fast" for routing/grading); None without one."""
        if self.choice.provider == "none":
            return None
        with self._lock:
            model = self._models.get(role)
            if model is None:
                model = self._build(role)
                self._models[role] = model
            return model

    def _build(self, role: LLMRole) -> BaseChatModel:
        s = self.settings
        name = s.llm.fast_model if role == "fast" and s.llm.fast_model else self.choice.model
        common: dict[str, Any] = {
            "temperature": s.llm.temperature,
            "rate_limiter": self._rate_limiter,
            "callbacks": [self.usage],
            "cache": self.cache if self.cache is not None and s.llm.cache_ttl_seconds else False,
        }
        if self.choice.provider == "openai":
            from langchain_openai import ChatOpenAI

            if self._http is None:
                limit, timeout = s.llm.max_concurrency, s.llm.timeout_seconds
                self._http = llm_transport.sync_client(
                    self._policy, max_concurrency=limit, timeout=timeout
                )
                self._ahttp = llm_transport.async_client(
                    self._policy, max_concurrency=limit, timeout=timeout
                )
            from tools.providers.openai_client import plain_completions

            key = s.llm.openai_api_key.get_secret_value() if s.llm.openai_api_key else "not-needed"
            model = ChatOpenAI(
                model=name or s.llm.openai_model,
                base_url=self.choice.base_url,
                api_key=key,
                max_tokens=s.llm.max_tokens,
                timeout=s.llm.timeout_seconds,
                max_retries=0,  # retries live in the transport
                http_client=self._http,
                http_async_client=self._ahttp,
                stream_usage=True,
                **common,
            )
            # the SDK's body transform is an identity for what ChatOpenAI sends: skipped
            plain_completions(model)
            return model
        from langchain_ollama import ChatOllama

        sync_kw, async_kw = llm_transport.transport_kwargs(
            self._policy, max_concurrency=s.llm.max_concurrency
        )
        return ChatOllama(
            model=name or s.llm.ollama_model,
            base_url=self.choice.base_url,
            num_predict=s.llm.max_tokens,
            client_kwargs={"timeout": s.llm.timeout_seconds},
            sync_client_kwargs=sync_kw,
            async_client_kwargs=async_kw,
            **common,
        )

    async def aclose(self) -> None:
        if self._ahttp is not None:
            await self._ahttp.aclose()
        if self._http is not None:
            self._http.close()


@cache
def _trace_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "kwargs": {"method": "function_calling", "strict": None},
        "schema": convert_to_openai_tool(schema),
    }


def function_calling(model: BaseChatModel, schema: type[BaseModel]) -> Runnable[Any, Any]:
    """``model.with_structured_output(schema, method="function_calling")``. For `ChatOpenAI`
    its tracing metadata carries the schema as the OpenAI tool it already is: given the class,
    LangChain converts it to a JSON schema again on every call (pydantic's schema generation
    per call). Other models refuse the extra argument, and get the plain call."""
    from langchain_openai.chat_models.base import BaseChatOpenAI

    if isinstance(model, BaseChatOpenAI):
        return model.with_structured_output(
            schema, method="function_calling", ls_structured_output_format=_trace_format(schema)
        )
    return model.with_structured_output(schema, method="function_calling")


def message_text(message: AIMessage | Any) -> str:
    """The plain text of a model answer (content blocks flattened)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str | dict)
        ]
        return "".join(parts)
    return str(content)
