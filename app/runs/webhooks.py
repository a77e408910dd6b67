"""Webhooks: a run's outcome POSTed to a URL its caller gave, once the run is over.

Bounded and careful, because the URL is untrusted input:

- ``http``/``https`` only, at most 2048 characters, no credentials in the URL;
- the host must resolve to public addresses (no IPv6 form embedding an IPv4 address), unless
  it is listed in WEBHOOK_ALLOWED_HOSTS (an operator's choice, e.g. ``127.0.0.1`` for a
  receiver on the same machine). The check runs when the run is submitted (422) and again
  where each attempt connects: the connection goes to the address that was vetted (no second
  DNS answer can redirect it), see :mod:`tools.webhooks`;
- no redirects are followed, no proxy from the environment; each attempt ends after
  WEBHOOK_TIMEOUT_SECONDS in total and reads at most WEBHOOK_MAX_RESPONSE_BYTES of the answer;
  at most WEBHOOK_ATTEMPTS attempts (exponential backoff, tenacity) on connection errors,
  timeouts and 5xx;
- the body is the run (id, thread, assistant, status, times, metadata), its final ``values``
  and its ``error``: nothing of the server's (no keys, no headers of the caller's request).

Delivery is off the run path: the worker acks the run and settles its thread first, then hands
the webhook to this process's :class:`WebhookDispatcher` (a bounded queue and
WEBHOOK_CONCURRENCY senders), so a slow receiver never holds a run slot. When the queue is full
the webhook is dropped with a warning. Delivery is at most once per run end: a webhook still
queued when the process stops (after WEBHOOK_SHUTDOWN_GRACE_SECONDS) is not sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from app.runs.store import now_iso
from app.serde import dumpb
from config import Settings
from tools.background import stop_tasks
from tools.webhooks import (
    Resolver,
    WebhookGuard,
    WebhookRejected,
    parse_target,
    post_capped,
)

log = logging.getLogger(__name__)

__all__ = [
    "WebhookDispatcher",
    "WebhookRejected",
    "check_webhook_url",
    "guard_of",
    "send_webhook",
]


def guard_of(settings: Settings, resolver: Resolver | None = None) -> WebhookGuard:
    """The address guard the settings describe (WEBHOOK_ALLOWED_HOSTS)."""
    return WebhookGuard(settings.webhooks.allowed_hosts, resolver=resolver)


async def check_webhook_url(
    url: str, settings: Settings, guard: WebhookGuard | None = None
) -> None:
    """Raise :class:`WebhookRejected` unless ``url`` may receive a webhook (at submission)."""
    await (guard or guard_of(settings)).check_url(url)


class _Status(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, _Status):
        return exc.status >= 500
    return isinstance(exc, httpx.TransportError | TimeoutError)


async def send_webhook(
    url: str, payload: dict[str, Any], settings: Settings, guard: WebhookGuard | None = None
) -> bool:
    """POST ``payload`` to ``url``; True when the receiver answered 2xx. Never raises (but
    may be cancelled)."""
    guard = guard or guard_of(settings)
    host = "?"
    try:
        host = parse_target(url).host
        body = dumpb(payload)
        async with guard.client(
            timeout_seconds=settings.webhooks.timeout_seconds, max_connections=1
        ) as client:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(settings.webhooks.attempts),
                wait=wait_exponential(multiplier=0.5, max=5),
                retry=retry_if_exception(_retryable),
                reraise=True,
            ):
                with attempt:
                    status = await post_capped(
                        client,
                        url,
                        body,
                        {"Content-Type": "application/json"},
                        deadline_seconds=settings.webhooks.timeout_seconds,
                        max_response_bytes=settings.webhooks.max_response_bytes,
                    )
                    if not 200 <= status < 300:
                        raise _Status(status)
        return True
    except WebhookRejected as exc:
        log.warning("webhook not sent: %s", exc)
        return False
    except Exception as exc:
        log.warning("webhook to %s failed: %s", host, type(exc).__name__)
        return False


class WebhookDispatcher:
    """This process's run webhooks: a bounded queue and a fixed set of senders."""

    def __init__(self, settings: Settings, resolver: Resolver | None = None) -> None:
        self.settings = settings
        self.guard = guard_of(settings, resolver)
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue(
            maxsize=settings.webhooks.queue_size
        )
        self._senders: list[asyncio.Task[None]] = []
        self._closed = False
        self._busy = 0  # senders in the middle of a delivery
        self.sent = 0
        self.failed = 0
        self.dropped = 0

    def start(self) -> None:
        """Start the WEBHOOK_CONCURRENCY senders."""
        self._senders = [
            asyncio.create_task(self._send_forever(), name=f"webhook-sender-{i}")
            for i in range(self.settings.webhooks.concurrency)
        ]

    def submit(self, url: str, payload: dict[str, Any]) -> bool:
        """Queue a webhook without waiting; False (and a warning) when it is dropped."""
        if self._closed:
            self.dropped += 1
            log.warning("webhook dropped: the process is stopping")
            return False
        try:
            self._queue.put_nowait((url, payload))
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning(
                "webhook dropped: %d webhooks already wait for delivery (raise "
                "WEBHOOK_QUEUE_SIZE or WEBHOOK_CONCURRENCY if receivers are slow)",
                self._queue.qsize(),
            )
            return False
        return True

    @property
    def pending(self) -> int:
        """Webhooks queued, not yet taken by a sender."""
        return self._queue.qsize()

    async def _send_forever(self) -> None:
        while True:
            url, payload = await self._queue.get()
            self._busy += 1
            if "webhook_sent_at" in payload:  # a run's webhook: when it leaves, not when queued
                payload = {**payload, "webhook_sent_at": now_iso()}
            try:
                if await send_webhook(url, payload, self.settings, self.guard):
                    self.sent += 1
                else:
                    self.failed += 1
            finally:
                self._busy -= 1
                self._queue.task_done()

    async def stop(self) -> None:
        """Deliver what is queued for up to WEBHOOK_SHUTDOWN_GRACE_SECONDS, then cancel."""
        self._closed = True
        if not self._senders:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.webhooks.shutdown_grace_seconds):
                await self._queue.join()
        unsent = self._queue.qsize() + self._busy
        await stop_tasks(self._senders, what="a webhook sender")
        self._senders = []
        if unsent:
            log.warning("%d webhook(s) not delivered: the process stopped", unsent)
