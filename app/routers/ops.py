"""Operational endpoints: `/health`, `/config`, `/metrics`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from agents.contract.quality import METRICS
from app.bodies import StrictJSONRoute
from app.errors import error_responses
from app.security import CallerDep
from app.services import ServicesDep
from app.storage import Dependency

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
        await knowledge_health(services),
        *await asyncio.gather(*(check() for check in services.components.health)),
    ]
    healthy = all(d.status == "ok" for d in deps if d.required)
    body = {
        "status": "ok" if healthy else "degraded",
        "dependencies": {d.name: d.as_dict() for d in deps},
        "llm": services.provider.as_dict(),
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


async def knowledge_health(services: Any, timeout: float = 3.0) -> Dependency:
    """The knowledge base (tables in the Postgres above): not required, so a server without
    pgvector shows here with its fix while everything else keeps serving."""
    settings = services.settings
    mode = "server" if settings.database_url else "embedded"
    started = time.perf_counter()
    try:
        await asyncio.wait_for(services.knowledge.stats(), timeout)
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Dependency("knowledge", "error", mode, ms, "postgres", reason, required=False)
    ms = round((time.perf_counter() - started) * 1000, 2)
    return Dependency("knowledge", "ok", mode, ms, "postgres", required=False)


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
