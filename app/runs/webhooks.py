"""Webhooks: a run's outcome POSTed to a URL its caller gave, once the run is over.

Bounded and careful, because the URL is untrusted input:

- ``http``/``https`` only, at most 2048 characters, no credentials in the URL;
- the host must resolve to public addresses, unless it is listed in WEBHOOK_ALLOWED_HOSTS
  (an operator's choice, e.g. ``127.0.0.1`` for a receiver on the same machine): no requests
  to loopback, private, link-local or metadata addresses by default. The check runs when the
  run is submitted (422) and again before sending (DNS may have changed);
- no redirects are followed; each attempt times out after WEBHOOK_TIMEOUT_SECONDS; at most
  WEBHOOK_ATTEMPTS attempts (exponential backoff, tenacity) on connection errors and 5xx;
- the body is the run (id, thread, assistant, status, times, metadata), its final ``values``
  and its ``error``: nothing of the server's (no keys, no headers of the caller's request).

Delivery is at most once per run end: a worker that dies after the run finished but before the
webhook was sent does not send it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from app.serde import dumpb
from config import Settings

log = logging.getLogger(__name__)

__all__ = ["WebhookRejected", "check_webhook_url", "send_webhook"]

MAX_URL_CHARS = 2048


class WebhookRejected(ValueError):
    """The webhook URL may not be called (the message says why and what to do)."""


def _allowed_host(host: str, settings: Settings) -> bool:
    return host.lower() in {h.lower() for h in settings.webhook_allowed_hosts}


async def check_webhook_url(url: str, settings: Settings) -> None:
    """Raise :class:`WebhookRejected` unless ``url`` may receive a webhook."""
    if len(url) > MAX_URL_CHARS:
        raise WebhookRejected(f"webhook URL is longer than {MAX_URL_CHARS} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookRejected("webhook URL must start with http:// or https://")
    if parts.username or parts.password:
        raise WebhookRejected("webhook URL must not carry credentials (user:password@)")
    host = parts.hostname or ""
    if not host:
        raise WebhookRejected("webhook URL has no host")
    try:
        port = parts.port
    except ValueError:
        raise WebhookRejected("webhook URL has an invalid port") from None
    if _allowed_host(host, settings):
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except OSError:
        raise WebhookRejected(f"webhook host {host!r} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise WebhookRejected(
                f"webhook host {host!r} resolves to a non-public address ({address}); add the "
                "host to WEBHOOK_ALLOWED_HOSTS to allow it"
            )


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


async def send_webhook(url: str, payload: dict[str, Any], settings: Settings) -> bool:
    """POST ``payload`` to ``url``; True when the receiver answered 2xx. Never raises."""
    try:
        await check_webhook_url(url, settings)
    except WebhookRejected as exc:
        log.warning("webhook not sent: %s", exc)
        return False
    body = dumpb(payload)
    try:
        async with httpx.AsyncClient(
            timeout=settings.webhook_timeout_seconds, follow_redirects=False
        ) as client:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(settings.webhook_attempts),
                wait=wait_exponential(multiplier=0.5, max=5),
                retry=retry_if_exception(_retryable),
                reraise=True,
            ):
                with attempt:
                    response = await client.post(
                        url, content=body, headers={"Content-Type": "application/json"}
                    )
                    response.raise_for_status()
        return True
    except Exception as exc:
        log.warning("webhook to %s failed: %s", urlsplit(url).hostname, type(exc).__name__)
        return False
