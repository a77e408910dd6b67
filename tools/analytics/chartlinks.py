"""Signed, short-lived chart links: a chart an `<img>` can load without the API key header.

A chat UI renders an answer's chart from a URL in the message (a markdown image), and a browser
loads it with a plain GET: no ``X-API-Key`` header. So the link itself carries the proof: an
HMAC (SHA-256, the server's chart-link secret) over the owner's scope, the chart id, the format
and an expiry time. The scope is the hash the chart store keys the owner's charts under (never
the owner id or the key), so a link names exactly one owner's chart, a changed scope, id or
expiry fails the signature, and an expired link is refused even though its signature is good.

A conversation keeps its messages, and their links expire: when a thread's state or history is
read by its owner, `ChartLinks.refresh` gives that owner's genuine links a fresh expiry (never
another owner's, never a forged one), so a reopened thread shows its charts again while they
are kept (ANALYTICS_CHART_TTL_SECONDS).

The secret is ANALYTICS_CHART_LINK_SECRET, else a random one shared by the replicas on one
Redis (SET NX) and kept under DATA_DIR, so links survive a restart and an emptied Redis.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlencode

import redis.asyncio as aredis

from tools.replica_secret import replica_secret

log = logging.getLogger(__name__)

#: Where the generated secret is shared between replicas (SET NX: the first one wins).
LINK_SECRET_KEY = "sy:analytics:chart-link-secret"
#: The generated secret's copy under DATA_DIR.
LINK_SECRET_FILE = "analytics-chart-link-secret"
#: The path of signed links: /analytics/chart-link/{scope}/{chart_id}.{png|svg}
LINK_PREFIX = "/analytics/chart-link"
#: The owner scope in a link: the chart store's 24 hex digits.
SCOPE_PATTERN = r"^[0-9a-f]{24}$"

#: A signed link in a message (with or without the address before the path).
LINK = re.compile(
    r"(?:https?://[^\s()<>\[\]]*?)?" + re.escape(LINK_PREFIX) + r"/(?P<scope>[0-9a-f]{24})/"
    r"(?P<id>[0-9a-f]{16})\.(?P<fmt>png|svg)\?expires=(?P<expires>\d{1,13})&"
    r"signature=(?P<signature>[A-Za-z0-9_-]{1,100})"
)

LinkFormat = Literal["png", "svg"]
Verdict = Literal["ok", "expired", "forged"]


def owner_scope(owner: str) -> str:
    """The scope the chart store keys an owner's charts under (and links name)."""
    return hashlib.sha256(owner.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ChartLinks:
    """Signs and checks chart links."""

    secret: bytes = field(repr=False)
    ttl_seconds: int = 3600
    base_url: str = ""
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        if len(self.secret) < 16:
            raise ValueError("the chart-link secret must be at least 16 bytes")
        if not 1 <= self.ttl_seconds <= 30 * 86_400:
            raise ValueError(f"ttl_seconds must be 1..{30 * 86_400} (got {self.ttl_seconds})")

    def _signature(self, scope: str, chart_id: str, fmt: str, expires: int) -> str:
        message = f"{scope}:{chart_id}:{fmt}:{expires}".encode()
        digest = hmac.new(self.secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def url(self, owner: str, chart_id: str, fmt: LinkFormat = "png") -> str:
        """A link to `owner`'s chart that works without a key until it expires."""
        return self.url_for_scope(owner_scope(owner), chart_id, fmt)

    def url_for_scope(self, scope: str, chart_id: str, fmt: LinkFormat = "png") -> str:
        """A link to the chart `chart_id` of the owner whose scope is `scope`."""
        expires = int(self.clock()) + self.ttl_seconds
        query = urlencode(
            {"expires": expires, "signature": self._signature(scope, chart_id, fmt, expires)}
        )
        return f"{self.base_url.rstrip('/')}{LINK_PREFIX}/{scope}/{chart_id}.{fmt}?{query}"

    def check(self, scope: str, chart_id: str, fmt: str, expires: int, signature: str) -> Verdict:
        """Whether a link is genuine (``forged`` when not) and still valid (``expired``)."""
        expected = self._signature(scope, chart_id, fmt, expires)
        if not hmac.compare_digest(expected.encode(), signature.encode()):
            return "forged"
        if expires < self.clock():
            return "expired"
        return "ok"

    def refresh(self, text: str, owner: str) -> str:
        """`text` with `owner`'s genuine chart links (expired or not) signed again from now."""
        scope = owner_scope(owner)

        def fresh(match: re.Match[str]) -> str:
            fmt = match["fmt"]
            genuine = self.check(
                match["scope"], match["id"], fmt, int(match["expires"]), match["signature"]
            )
            if match["scope"] != scope or genuine == "forged" or fmt not in ("png", "svg"):
                return match[0]
            return self.url_for_scope(scope, match["id"], "png" if fmt == "png" else "svg")

        return LINK.sub(fresh, text)


async def link_secret(
    configured: str | None,
    data_dir: Path,
    redis: aredis.Redis | aredis.RedisCluster,
) -> bytes:
    """The chart-link HMAC key: `configured`, else one random secret the replicas on this Redis
    agree on (SET NX), also kept (0600) under `data_dir` so links outlive an emptied Redis."""
    if configured:
        return configured.encode()
    path = Path(data_dir) / LINK_SECRET_FILE
    return await replica_secret(
        redis, LINK_SECRET_KEY, path, what="chart links", setting="ANALYTICS_CHART_LINK_SECRET"
    )
