"""Outgoing webhooks of the personal agents (n8n-compatible): signed JSON events with retries.

Each event is POSTed as JSON to every configured URL (an n8n Webhook node, Zapier, your own
service) with these headers:

- `X-Switchyard-Event`: the event type (`reminder.due`, `event.created`, `daily.summary`);
- `X-Switchyard-Delivery`: the event id (the same on every retry: receivers deduplicate by it);
- `X-Switchyard-Signature`: `sha256=<hex HMAC-SHA256 of the raw body with the shared secret>`
  when PERSONAL_WEBHOOK_SECRET is set. The body carries `occurred_at`, so a receiver can refuse
  replays of old events.

Each connection goes to a vetted, pinned address (:mod:`tools.webhooks`: public addresses only
unless the host is in WEBHOOK_ALLOWED_HOSTS, checked at every attempt where it connects, no
redirects, no proxy from the environment); each attempt ends after
PERSONAL_WEBHOOK_TIMEOUT_SECONDS in total and reads at most WEBHOOK_MAX_RESPONSE_BYTES of the
answer. A refused address is final (not retried).

Network errors, timeouts and 408/425/429/5xx answers are retried with exponential backoff and
jitter (tenacity); other 4xx answers are final. A delivery that still fails is recorded in a
Redis stream (the dead letters, trimmed to PERSONAL_DEAD_LETTER_MAX) for an operator to replay.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import httpx
from pydantic import BaseModel, Field
from tenacity import (
    AsyncRetrying,
    RetryError,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from config import url_label
from tools.webhooks import Resolver, WebhookGuard, WebhookRejected, post_capped

if TYPE_CHECKING:
    import redis.asyncio as aredis

    from config import Settings

log = logging.getLogger(__name__)

EventType = Literal["reminder.due", "event.created", "daily.summary"]
DEAD_LETTER_KEY = "switchyard:personal:webhooks:dead"
SIGNATURE_HEADER = "X-Switchyard-Signature"
#: Largest JSON body sent (an event is a summary, not a data dump).
MAX_BODY_BYTES = 256 * 1024


class WebhookEvent(BaseModel):
    """The JSON body of a webhook."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    type: EventType
    occurred_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    user_id: str
    source: str = "switchyard"
    data: dict[str, Any] = Field(default_factory=dict)


class Delivery(BaseModel):
    """What happened to an event at one URL. `url` is its label (index and host): the whole
    URL is a secret (a path token is the receiver's credential) and deliveries reach chat
    answers."""

    url: str
    delivered: bool
    attempts: int
    status_code: int | None = None
    error: str | None = None
    dead_lettered: bool = False


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """Where and how webhooks go."""

    urls: tuple[str, ...] = ()
    secret: str | None = None
    timeout_seconds: float = 5.0
    max_attempts: int = 4
    backoff_seconds: float = 0.5
    backoff_max_seconds: float = 30.0
    dead_letter_max: int = 10_000
    dead_letter_key: str = DEAD_LETTER_KEY
    headers: dict[str, str] = field(default_factory=dict)
    #: Hosts that may resolve to non-public addresses (WEBHOOK_ALLOWED_HOSTS).
    allowed_hosts: tuple[str, ...] = ()
    max_response_bytes: int = 65_536

    @classmethod
    def from_settings(cls, settings: Settings) -> WebhookConfig:
        """The configuration the `personal` settings name."""
        secret = settings.personal.webhook_secret
        return cls(
            urls=tuple(settings.personal.webhook_urls),
            secret=secret.get_secret_value() if secret else None,
            timeout_seconds=settings.personal.webhook_timeout_seconds,
            max_attempts=settings.personal.webhook_max_attempts,
            backoff_seconds=settings.personal.webhook_backoff_seconds,
            backoff_max_seconds=settings.personal.webhook_backoff_max_seconds,
            dead_letter_max=settings.personal.dead_letter_max,
            allowed_hosts=tuple(settings.webhooks.allowed_hosts),
            max_response_bytes=settings.webhooks.max_response_bytes,
        )


def sign(secret: str, body: bytes) -> str:
    """The signature header value of `body`: `sha256=<hex>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is the right signature of `body` (constant-time; for receivers/tests)."""
    return header is not None and hmac.compare_digest(sign(secret, body), header)


class _Retryable(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Final(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _retryable_status(status: int) -> bool:
    return status in (408, 425, 429) or status >= 500


class WebhookSender:
    """Sends `WebhookEvent`s to the configured URLs over a pinned, vetted HTTP client;
    `resolver` replaces the system's DNS (tests simulate DNS with it)."""

    def __init__(
        self,
        config: WebhookConfig,
        redis: aredis.Redis | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.config = config
        self.redis = redis
        self.guard = WebhookGuard(config.allowed_hosts, resolver=resolver)
        self.client = self.guard.client(
            timeout_seconds=config.timeout_seconds, max_connections=len(config.urls) or 1
        )

    @property
    def enabled(self) -> bool:
        """Whether any URL is configured."""
        return bool(self.config.urls)

    def encode(self, event: WebhookEvent) -> bytes:
        """The exact body bytes sent (and signed)."""
        body = event.model_dump_json().encode()
        if len(body) > MAX_BODY_BYTES:
            raise ValueError(f"webhook body of {len(body)} bytes is over {MAX_BODY_BYTES}")
        return body

    async def send(self, event: WebhookEvent) -> list[Delivery]:
        """Deliver `event` to every URL concurrently; failures end in the dead letters."""
        if not self.config.urls:
            return []
        body = self.encode(event)
        return list(
            await asyncio.gather(
                *(
                    self._deliver(url, url_label(url, index), event, body)
                    for index, url in enumerate(self.config.urls)
                )
            )
        )

    async def _post(self, url: str, event: WebhookEvent, body: bytes) -> int:
        headers = {
            **self.config.headers,
            "Content-Type": "application/json",
            "User-Agent": "switchyard-webhooks/1",
            "X-Switchyard-Event": event.type,
            "X-Switchyard-Delivery": event.id,
        }
        if self.config.secret:
            headers[SIGNATURE_HEADER] = sign(self.config.secret, body)
        try:
            status = await post_capped(
                self.client,
                url,
                body,
                headers,
                deadline_seconds=self.config.timeout_seconds,
                max_response_bytes=self.config.max_response_bytes,
            )
        except WebhookRejected as exc:
            raise _Final(f"refused: {exc}") from None
        except TimeoutError:
            raise _Retryable(f"no answer within {self.config.timeout_seconds} s") from None
        except httpx.HTTPError as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if 200 <= status < 300:
            return status
        message = f"HTTP {status}"
        if _retryable_status(status):
            raise _Retryable(message, status)
        raise _Final(message, status)

    async def _deliver(self, url: str, shown: str, event: WebhookEvent, body: bytes) -> Delivery:
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts),
            wait=wait_exponential(
                multiplier=self.config.backoff_seconds, max=self.config.backoff_max_seconds
            )
            + wait_random(0, self.config.backoff_seconds / 2),
            retry=retry_if_exception(lambda exc: isinstance(exc, _Retryable)),
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    status = await self._post(url, event, body)
            return Delivery(url=shown, delivered=True, attempts=attempts, status_code=status)
        except (RetryError, _Final) as exc:
            cause = exc.last_attempt.exception() if isinstance(exc, RetryError) else exc
            failure = Delivery(
                url=shown,
                delivered=False,
                attempts=attempts,
                status_code=getattr(cause, "status", None),
                # an HTTP library's message may quote the URL; the label stands in for it
                error=str(cause).replace(url, shown),
            )
        failure.dead_lettered = await self._dead_letter(url, event, failure)
        return failure

    async def _dead_letter(self, url: str, event: WebhookEvent, failure: Delivery) -> bool:
        log.warning(
            "webhook %s (%s) to %s failed after %d attempts: %s",
            event.id, event.type, failure.url, failure.attempts, failure.error,
        )  # fmt: skip
        if self.redis is None:
            return False
        record = {
            "event": event.model_dump(mode="json"),
            "url": failure.url,
            "attempts": failure.attempts,
            "status_code": failure.status_code,
            "error": failure.error,
            "failed_at": datetime.now(UTC).isoformat(),
        }
        try:
            await self.redis.xadd(
                self.config.dead_letter_key,
                {"record": json.dumps(record)},
                maxlen=self.config.dead_letter_max,
                approximate=True,
            )
        except Exception as exc:  # the dead letter must never break the caller's turn
            log.error("could not record the dead letter of webhook %s: %s", event.id, exc)
            return False
        return True

    async def dead_letters(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest dead-letter records, newest first (at most `limit`, up to 1000)."""
        if self.redis is None:
            return []
        entries = await self.redis.xrevrange(
            self.config.dead_letter_key, count=max(1, min(limit, 1000))
        )
        out: list[dict[str, Any]] = []
        for entry_id, fields in entries or []:
            raw = (fields or {}).get(b"record") or (fields or {}).get("record")
            if raw is None:
                continue
            record = json.loads(raw)
            record["id"] = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
            out.append(record)
        return out

    async def close(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()
