"""HTTP transports for LLM clients: retries with exponential backoff and a concurrency cap.

Retrying at the httpx transport works for every provider client we use (the OpenAI SDK under
`ChatOpenAI`, the Ollama client under `ChatOllama`) and sees exactly what we retry on: HTTP 429,
5xx and timeouts. The provider SDKs' own retries are switched off so a request is never retried
twice over. The concurrency cap is httpx's connection-pool limit, shared by every model of a
factory, with no pool timeout: a request waits for a free slot instead of failing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
)

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_SECONDS = 60.0


class RetryableStatus(Exception):
    """An HTTP response worth retrying; carries the (fully read) response."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: `base`, 2*base, 4*base ... seconds, `max_retries` times at most."""

    max_retries: int = 3
    base_seconds: float = 2.0

    def wait(self, state: RetryCallState) -> float:
        """Backoff for this attempt, stretched to the server's Retry-After when that is longer."""
        delay = self.base_seconds * (2 ** (state.attempt_number - 1))
        outcome = state.outcome
        if outcome is not None and outcome.failed:
            exc = outcome.exception()
            if isinstance(exc, RetryableStatus):
                delay = max(delay, _retry_after(exc.response))
        return delay

    def tenacity_kwargs(self) -> dict[str, object]:
        return {
            "retry": retry_if_exception_type((RetryableStatus, httpx.TimeoutException)),
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": self.wait,
            "reraise": True,
            "before_sleep": _log_retry,
        }


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("retry-after")
    if not value:
        return 0.0
    try:
        return min(float(value), MAX_RETRY_AFTER_SECONDS)
    except ValueError:
        return 0.0


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.warning("LLM request failed (%s); retry %d in %.1f s", exc, state.attempt_number, wait)


class RetryingTransport(httpx.BaseTransport):
    """A sync transport that retries 429 / 5xx / timeouts according to `policy`."""

    def __init__(self, inner: httpx.BaseTransport, policy: RetryPolicy) -> None:
        self._inner = inner
        self._policy = policy

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            for attempt in Retrying(**self._policy.tenacity_kwargs()):  # type: ignore[arg-type]
                with attempt:
                    response = self._inner.handle_request(request)
                    if response.status_code in RETRY_STATUSES:
                        response.read()
                        raise RetryableStatus(response)
                    return response
        except RetryableStatus as exc:
            # Retries exhausted: hand the SDK the real error response so it raises its own
            # typed error (RateLimitError, InternalServerError, ...).
            return exc.response
        raise AssertionError("unreachable: tenacity either returns or raises")

    def close(self) -> None:
        self._inner.close()


class AsyncRetryingTransport(httpx.AsyncBaseTransport):
    """The async twin of `RetryingTransport` (same policy object, same decisions)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy) -> None:
        self._inner = inner
        self._policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            async for attempt in AsyncRetrying(**self._policy.tenacity_kwargs()):  # type: ignore[arg-type]
                with attempt:
                    response = await self._inner.handle_async_request(request)
                    if response.status_code in RETRY_STATUSES:
                        await response.aread()
                        raise RetryableStatus(response)
                    return response
        except RetryableStatus as exc:
            return exc.response
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def aclose(self) -> None:
        await self._inner.aclose()


def _limits(max_concurrency: int) -> httpx.Limits:
    return httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)


def _timeout(seconds: float) -> httpx.Timeout:
    # pool=None: waiting for one of the `max_concurrency` slots is throttling, not a failure.
    return httpx.Timeout(seconds, pool=None)


def sync_client(policy: RetryPolicy, *, max_concurrency: int, timeout: float) -> httpx.Client:
    """An httpx client with retries and a concurrency cap, for the sync LLM paths."""
    transport = RetryingTransport(httpx.HTTPTransport(limits=_limits(max_concurrency)), policy)
    return httpx.Client(transport=transport, timeout=_timeout(timeout))


def async_client(policy: RetryPolicy, *, max_concurrency: int, timeout: float) -> httpx.AsyncClient:
    """An httpx client with retries and a concurrency cap, for the async LLM paths."""
    transport = AsyncRetryingTransport(
        httpx.AsyncHTTPTransport(limits=_limits(max_concurrency)), policy
    )
    return httpx.AsyncClient(transport=transport, timeout=_timeout(timeout))


def transport_kwargs(
    policy: RetryPolicy, *, max_concurrency: int
) -> tuple[dict[str, object], dict[str, object]]:
    """httpx client kwargs (sync, async) for SDKs that build their own client (Ollama)."""
    sync_kw: dict[str, object] = {
        "transport": RetryingTransport(httpx.HTTPTransport(limits=_limits(max_concurrency)), policy)
    }
    async_kw: dict[str, object] = {
        "transport": AsyncRetryingTransport(
            httpx.AsyncHTTPTransport(limits=_limits(max_concurrency)), policy
        )
    }
    return sync_kw, async_kw
