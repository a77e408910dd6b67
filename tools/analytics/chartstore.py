"""Charts of analytics answers kept in Redis for a while, per owner, and rendered on demand.

An answer's chart (its Vega-Lite spec) is stored under the owner's scope with a TTL; the API
serves it as PNG or SVG (`vl-convert`, no browser) at the URLs the store writes into the chart.
A chart belongs to the owner (API key) whose run made it: another owner's lookup of the same id
finds nothing, the same answer as for an id that never existed or has expired. With `links`
set, a stored chart also gets a signed, short-lived `image_url` (`chartlinks.ChartLinks`) that
a browser's `<img>` loads without the key header, for chat UIs. Rendered images
are cached beside the spec for the rest of its TTL, and renders run a few at a time (they are
CPU-bound).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aredis

from tools.analytics.chartlinks import ChartLinks, owner_scope
from tools.analytics.charts import ChartFormat, arender_chart
from tools.analytics.outputs import ChartConfigOutput

#: A chart id: the content hash `tools.analytics.charts.chart_id` gives every spec.
CHART_ID_PATTERN = r"^[0-9a-f]{16}$"
_CHART_ID = re.compile(CHART_ID_PATTERN)
#: The largest spec stored (charts carry at most MAX_POINTS rows; this is a safety bound).
MAX_SPEC_BYTES = 2_000_000

AnyRedis = aredis.Redis | aredis.RedisCluster


@dataclass
class ChartStats:
    """Counters of one process's chart store."""

    stored: int = 0
    rendered: int = 0
    render_cache_hits: int = 0
    not_found: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class ChartStore:
    """Owner-scoped chart specs in Redis, with URLs and cached renders."""

    redis: AnyRedis
    ttl_seconds: int = 86_400
    url_prefix: str = "/analytics/chart"
    key_prefix: str = "sy:analytics:chart"
    render_concurrency: int = 2
    links: ChartLinks | None = None
    stats: ChartStats = field(default_factory=ChartStats)
    _slots: asyncio.Semaphore | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.ttl_seconds <= 366 * 86_400:
            raise ValueError(f"ttl_seconds must be 1..{366 * 86_400} (got {self.ttl_seconds})")
        if not 1 <= self.render_concurrency <= 64:
            raise ValueError("render_concurrency must be 1..64")

    # --- keys and URLs ---------------------------------------------------------------------
    def _key(self, scope: str, chart_id: str, suffix: str = "spec") -> str:
        # The scope is the owner id hashed (`owner_scope`): keys hold no caller-influenced
        # text, and one owner's charts are never under another's prefix.
        return f"{self.key_prefix}:{scope}:{chart_id}:{suffix}"

    def urls(self, chart_id: str) -> tuple[str, str]:
        """The PNG and SVG URLs of a chart."""
        return f"{self.url_prefix}/{chart_id}.png", f"{self.url_prefix}/{chart_id}.svg"

    @staticmethod
    def valid_id(chart_id: str) -> bool:
        return bool(_CHART_ID.fullmatch(chart_id))

    # --- storing and reading ---------------------------------------------------------------
    async def save(self, owner: str, chart: ChartConfigOutput) -> ChartConfigOutput:
        """Store `chart`'s spec for `owner` (refreshing its TTL); the chart with its URLs."""
        if not chart.vega_lite or not self.valid_id(chart.chart_id):
            return chart
        blob = json.dumps(chart.vega_lite, separators=(",", ":"), default=str).encode()
        if len(blob) > MAX_SPEC_BYTES:
            raise ValueError(f"chart spec is {len(blob)} bytes (at most {MAX_SPEC_BYTES})")
        scope = owner_scope(owner)
        await self.redis.set(self._key(scope, chart.chart_id), blob, ex=self.ttl_seconds)
        self.stats.stored += 1
        png, svg = self.urls(chart.chart_id)
        signed = self.links.url(owner, chart.chart_id) if self.links is not None else None
        return chart.model_copy(update={"url": png, "svg_url": svg, "image_url": signed})

    async def spec(self, owner: str, chart_id: str) -> dict[str, Any] | None:
        """The stored spec of `owner`'s chart, or None (unknown, expired or another owner's)."""
        return await self._spec(owner_scope(owner), chart_id)

    async def _spec(self, scope: str, chart_id: str) -> dict[str, Any] | None:
        if not self.valid_id(chart_id):
            return None
        blob = await self.redis.get(self._key(scope, chart_id))
        if blob is None:
            self.stats.not_found += 1
            return None
        spec: dict[str, Any] = json.loads(blob)
        return spec

    async def image(self, owner: str, chart_id: str, fmt: ChartFormat) -> bytes | None:
        """`owner`'s chart rendered as PNG or SVG (cached for the spec's remaining TTL)."""
        return await self.scoped_image(owner_scope(owner), chart_id, fmt)

    async def scoped_image(self, scope: str, chart_id: str, fmt: ChartFormat) -> bytes | None:
        """The chart of the owner whose scope is `scope` (a signed link names the scope)."""
        if fmt not in ("png", "svg"):
            raise ValueError(f"format must be 'png' or 'svg' (got {fmt!r})")
        spec_key = self._key(scope, chart_id)
        image_key = self._key(scope, chart_id, fmt)
        if self.valid_id(chart_id):
            cached = await self.redis.get(image_key)
            if cached is not None:
                self.stats.render_cache_hits += 1
                return cached if isinstance(cached, bytes) else str(cached).encode()
        spec = await self._spec(scope, chart_id)
        if spec is None:
            return None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.render_concurrency)
        async with self._slots:
            drawn = await arender_chart(spec, fmt)
        self.stats.rendered += 1
        data = drawn.encode() if isinstance(drawn, str) else drawn
        remaining = await self.redis.ttl(spec_key)
        if remaining and remaining > 0:
            await self.redis.set(image_key, data, ex=int(remaining))
        return data
