"""Operational endpoints: `/health`, `/config`, `/metrics`."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agents.contract.quality import METRICS
from app.bodies import StrictJSONRoute
from app.errors import error_responses
from app.owner_metrics import OwnerMetrics
from app.security import CallerDep, OptionalCallerDep
from app.services import ServicesDep

router = APIRouter(tags=["ops"], route_class=StrictJSONRoute)


@router.get(
    "/health", responses={503: {"description": "A required dependency is down (same body)."}}
)
async def health(services: ServicesDep, who: OptionalCallerDep) -> JSONResponse:
    """Each dependency's state (503 if a required one is down).

    Open without an API key, so load balancers can probe it: without one (when API_KEYS is set)
    it answers liveness only, each dependency's status. With a valid key it adds what would help
    an attacker map the deployment: targets, modes, latencies, errors and the LLM provider.
    """
    deps = [
        *await services.stores.health(),
        *await asyncio.gather(*(check() for check in services.components.health)),
    ]
    healthy = all(d.status == "ok" for d in deps if d.required)
    body: dict[str, Any] = {"status": "ok" if healthy else "degraded"}
    if who is None:
        body["dependencies"] = {d.name: {"status": d.status, "required": d.required} for d in deps}
    else:
        body["dependencies"] = {d.name: d.as_dict() for d in deps}
        body["llm"] = services.provider.as_dict()
    return JSONResponse(body, status_code=200 if healthy else 503)


@router.get("/config", responses=error_responses(401, 429))
async def config(services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """The effective settings, grouped; secrets and URL passwords redacted."""
    return {"settings": services.settings.redacted(), "llm": services.provider.as_dict()}


@router.get("/metrics", responses=error_responses(401, 429))
async def metrics(request: Request, services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """A key's own request counters; with an operator key (OPERATOR_API_KEYS, or no keys at
    all) also the process-wide counters (per-stage count/errors/latency, LLM calls and tokens,
    LLM cache hits, tools) and every owner's."""
    owners: OwnerMetrics = request.app.state.owner_metrics
    own = {"owner": who.owner, "requests": owners.snapshot(who.owner)}
    if not who.operator:
        return own
    cache = services.llm.cache
    return {
        **own,
        "stages": METRICS.snapshot(),
        "llm": services.llm.usage.snapshot(),
        "llm_cache": {"hits": getattr(cache, "hits", 0), "misses": getattr(cache, "misses", 0)},
        **{name: source() for name, source in services.components.metrics.items()},
        "owners": owners.snapshot_all(),
    }
