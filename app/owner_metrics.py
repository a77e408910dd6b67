"""Request counters per owner (API key), for `/metrics`: a key sees its own, an operator all.

The process-wide counters of `/metrics` (stages, LLM calls and tokens, tools) describe every
tenant's traffic together, so they are the operator's view; what a key may see of its own use
is counted here: its requests per route and per status class, and their total latency.

`OwnerMetricsMiddleware` reads the owner the `caller` dependency recorded in the request's
scope once the response is sent (a request that never authenticated counts nowhere). The
counters are bounded without a setting of their own: owners are the configured keys' (plus the
anonymous owner) and routes are the app's route templates. Like the rest of `/metrics`, they
are per process (each replica counts what it served).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The scope key under which `app.security.caller` records the request's owner id.
OWNER_SCOPE_KEY = "switchyard.owner"


class _Counters:
    def __init__(self) -> None:
        self.requests = 0
        self.seconds = 0.0
        self.by_status: defaultdict[str, int] = defaultdict(int)
        self.by_route: defaultdict[str, int] = defaultdict(int)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "latency_seconds_total": round(self.seconds, 6),
            "by_status": dict(sorted(self.by_status.items())),
            "by_route": dict(sorted(self.by_route.items())),
        }


class OwnerMetrics:
    """Per-owner request counters of this process."""

    def __init__(self) -> None:
        self._owners: dict[str, _Counters] = {}
        self._lock = threading.Lock()

    def observe(self, owner: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            counters = self._owners.setdefault(owner, _Counters())
            counters.requests += 1
            counters.seconds += seconds
            counters.by_status[f"{status // 100}xx"] += 1
            counters.by_route[route] += 1

    def snapshot(self, owner: str) -> dict[str, Any]:
        """One owner's counters (zeros if it made no counted request yet)."""
        with self._lock:
            return self._owners.get(owner, _Counters()).as_dict()

    def snapshot_all(self) -> dict[str, dict[str, Any]]:
        """Every owner's counters, by owner id (the operator's view)."""
        with self._lock:
            return {owner: counters.as_dict() for owner, counters in self._owners.items()}


class OwnerMetricsMiddleware:
    """Count each authenticated request for its owner once the response has been sent."""

    def __init__(self, app: ASGIApp, metrics: OwnerMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an exception that escapes every handler is answered 500

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            owner = scope.get(OWNER_SCOPE_KEY)
            if owner is not None:
                route = getattr(scope.get("route"), "path", None) or "other"
                self.metrics.observe(str(owner), route, status, time.perf_counter() - started)
