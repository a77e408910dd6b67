"""Operational endpoints: `/health`, `/config`, `/metrics`."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from agents.contract.quality import METRICS
from app.bodies import StrictJSONRoute
from app.errors import error_responses
from app.security import CallerDep
from app.services import ServicesDep

router = APIRouter(tags=["ops"], route_class=StrictJSONRoute)


@router.get(
    "/health", responses={503: {"description": "A required dependency is down (same body)."}}
)
async def health(services: ServicesDep) -> JSONResponse:
    """Each dependency's state and latency, and the LLM provider in use (503 if one is down).

    Open without an API key, so load balancers can probe it; it reveals no secret.
    """
    deps = [
        *await services.stores.health(),
        *await asyncio.gather(*(check() for check in services.components.health)),
    ]
    healthy = all(d.status == "ok" for d in deps if d.required)
    body = {
        "status": "ok" if healthy else "degraded",
        "dependencies": {d.name: d.as_dict() for d in deps},
        "llm": services.provider.as_dict(),
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


@router.get("/config", responses=error_responses(401, 429))
async def config(services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """The effective settings, grouped; secrets and URL passwords redacted."""
    return {"settings": services.settings.redacted(), "llm": services.provider.as_dict()}


@router.get("/metrics", responses=error_responses(401, 429))
async def metrics(services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """Counters: per-stage count/errors/latency, LLM calls and tokens, LLM cache hits."""
    cache = services.llm.cache
    return {
        "stages": METRICS.snapshot(),
        "llm": services.llm.usage.snapshot(),
        "llm_cache": {"hits": getattr(cache, "hits", 0), "misses": getattr(cache, "misses", 0)},
        **{name: source() for name, source in services.components.metrics.items()},
    }
