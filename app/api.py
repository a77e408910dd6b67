"""The FastAPI app: `create_app(settings)` wires the routers, the error handlers, the body
limit and the lifespan that opens (and closes) the process's `Services`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import psycopg
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException
from starlette.routing import Route

from app.agent_server import routers as agent_server_routers
from app.agent_server.firing import register_jobs
from app.bodies import BodySizeLimit, PrivateNetworkAccess
from app.components.base import Component
from app.components.registry import COMPONENTS
from app.errors import (
    REDIS_OUTAGES,
    DependencyUnavailable,
    http_error,
    operation_error,
    unavailable_error,
    unexpected_error,
    validation_error,
)
from app.mcp.server import McpEndpoint
from app.owner_metrics import OwnerMetrics, OwnerMetricsMiddleware
from app.routers.chat import chat_router, sessions_router
from app.routers.ops import router as ops_router
from app.security import auth_keys, open_door, owner_secret
from app.services import Services
from app.storage import StartupError
from config import Settings, get_settings
from graph.registry import AgentRegistry
from graph.workflow import build_registry
from tools.knowledge.schema import KnowledgeEngineError
from tools.operations import OperationError

log = logging.getLogger("switchyard")


def create_app(
    settings: Settings | None = None,
    *,
    registry: AgentRegistry | None = None,
    components: Sequence[Component] | None = None,
) -> FastAPI:
    """The Switchyard API, configured by `settings` (default: the environment), serving the
    agents of `registry` (default: every shipped agent) and the capabilities of `components`
    (default: the component list: their engines, operations and routes)."""
    settings = settings or get_settings()
    registry = registry or build_registry()
    listed = COMPONENTS if components is None else list(components)
    mcp = McpEndpoint(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # HOST is where `serve` binds; an app started by another launcher on a public address
        # is refused per request instead (`app.security.identify`).
        refusal = open_door(settings, settings.api.host)
        if refusal is not None:
            raise StartupError(refusal)
        if settings.security.allow_anonymous and not auth_keys(settings):
            log.warning("ALLOW_ANONYMOUS=true: every caller is one owner who may do everything")
        services = await Services.start(settings, registry=registry, listed=listed)
        register_jobs(services)  # crons, delayed runs, thread TTLs fire in this process too
        try:
            app.state.owner_secret = await owner_secret(settings, services.stores.redis)
        except BaseException:
            await services.stop()
            raise
        app.state.services = services
        app.state.rate_limiter = services.rate_limiter
        log.info(
            "Switchyard ready: LLM provider %s (%s)",
            services.provider.provider,
            services.provider.reason,
        )
        try:
            async with mcp.running(services):
                yield
        finally:
            await services.stop()

    # Swagger UI and ReDoc from files in the fastapi-offline wheel, not a CDN: /docs works
    # offline.
    app = FastAPIOffline(
        title="Switchyard",
        version="0.1.0",
        description="A multi-agent LangGraph server: chat sessions, knowledge, test analysis, "
        "coding, analytics, and personal tasks, meals and events.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(OperationError, operation_error)
    outages: tuple[type[Exception], ...] = (
        DependencyUnavailable,
        *REDIS_OUTAGES,
        psycopg.OperationalError,
        KnowledgeEngineError,
    )
    for outage in outages:
        app.add_exception_handler(outage, unavailable_error)
    app.add_exception_handler(Exception, unexpected_error)
    app.add_middleware(BodySizeLimit, max_bytes=settings.api.max_request_bytes)
    app.state.owner_metrics = OwnerMetrics()
    app.add_middleware(OwnerMetricsMiddleware, metrics=app.state.owner_metrics)
    if settings.api.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            # the Agent Server clients read these (run ids, re-attach URLs, pages)
            expose_headers=[
                "Content-Location",
                "Location",
                "X-Pagination-Next",
                "X-Pagination-Total",
            ],
        )
        # outermost: Studio's page (public) calling a server on this machine (private)
        app.add_middleware(PrivateNetworkAccess)
    from agents.contract.context import options_model_for

    app.include_router(ops_router)
    app.include_router(chat_router(options_model_for(registry.options())))
    app.include_router(sessions_router)
    for component in listed:
        if component.router is not None:
            app.include_router(component.router)
    for router in agent_server_routers():
        app.include_router(router)
    # MCP clients (Claude Code, Cursor, ...): every served operation as a tool (app/mcp)
    # (every method reaches it: without a key 401, then anything but POST 405 with Allow: POST)
    app.router.routes.append(Route("/mcp", mcp))
    app.state.mcp = mcp
    return app
