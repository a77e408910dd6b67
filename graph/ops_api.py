"""Operational endpoints: `/health`, `/config`, `/metrics`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from graph.quality import METRICS
from graph.security import CallerDep
from graph.services import Services

router = APIRouter(tags=["ops"])


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


@router.get("/health")
async def health(request: Request) -> JSONResponse:
    """Each dependency's state and latency, and the LLM provider in use (503 if one is down).

    Open without an API key, so load balancers can probe it; it reveals no secret.
    """
    services = _services(request)
    deps = await services.stores.health()
    healthy = all(d.status == "ok" for d in deps if d.required)
    body = {
        "status": "ok" if healthy else "degraded",
        "dependencies": {d.name: d.as_dict() for d in deps},
        "llm": services.provider.as_dict(),
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


@router.get("/config")
async def config(request: Request, who: CallerDep) -> dict[str, Any]:
    """The effective settings, grouped; secrets and URL passwords redacted."""
    services = _services(request)
    return {"settings": services.settings.redacted(), "llm": services.provider.as_dict()}


@router.get("/metrics")
async def metrics(request: Request, who: CallerDep) -> dict[str, Any]:
    """Counters: per-stage count/errors/latency, LLM calls and tokens, LLM cache hits."""
    services = _services(request)
    cache = services.llm.cache
    return {
        "stages": METRICS.snapshot(),
        "llm": services.llm.usage.snapshot(),
        "llm_cache": {"hits": getattr(cache, "hits", 0), "misses": getattr(cache, "misses", 0)},
    }
