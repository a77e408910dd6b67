"""Switchyard: the FastAPI app and the command line.

python main.py serve [--host H] [--port P]     run the API (embedded stores by default)
python main.py ingest PATH...                  index documents for the knowledge agent
python main.py config                          print the effective settings (redacted)
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from config import Settings, SettingsError, get_settings, load_settings

# The graph modules are imported inside `create_app` / `lifespan`, not here: importing them
# builds Studio's graph from the environment's settings, and `main()` must first check those
# settings and fail with a clear message instead of a traceback.

log = logging.getLogger("switchyard")


# --- errors ----------------------------------------------------------------------------------


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"status": status, "message": message, **extra}}, status)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    response = _error(exc.status_code, str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [
        {
            "field": ".".join(str(p) for p in err.get("loc", ()) if p != "body"),
            "message": err.get("msg"),
        }
        for err in exc.errors()
    ]
    summary = "; ".join(f"{d['field'] or 'body'}: {d['message']}" for d in details)
    return _error(422, f"Invalid request: {summary}", details=details)


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return _error(500, f"Internal error ({type(exc).__name__}); see the server log.")


class BodySizeLimit:
    """Reject request bodies above `max_bytes` with 413 before they are read into memory."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(scope, receive, send)
            return
        seen = 0

        async def limited_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited_receive, send)
        except _TooLarge:
            await self._reject(scope, receive, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(
            413,
            f"Request body exceeds the limit of {self.max_bytes} bytes (MAX_REQUEST_BYTES); "
            "send fewer or smaller files.",
        )
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass


# --- the app ---------------------------------------------------------------------------------


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    from graph.services import Services

    settings: Settings = app.state.settings
    services = await Services.start(settings)
    app.state.services = services
    app.state.rate_limiter = services.rate_limiter
    log.info(
        "Switchyard ready: LLM provider %s (%s)",
        services.provider.provider,
        services.provider.reason,
    )
    try:
        yield
    finally:
        await services.stop()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The Switchyard API, configured by `settings` (default: the environment)."""
    from agents.knowledge.api import router as knowledge_router
    from agents.test_analysis.api import router as analysis_router
    from graph.chat_api import router as chat_router
    from graph.ops_api import router as ops_router

    settings = settings or get_settings()
    app = FastAPI(
        title="Switchyard",
        version="0.1.0",
        description="A multi-agent LangGraph server: chat sessions, knowledge, test analysis.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected_error)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )

    app.include_router(ops_router)
    app.include_router(chat_router)
    app.include_router(analysis_router)
    app.include_router(knowledge_router)

    return app


# --- command line ----------------------------------------------------------------------------


def _serve(settings: Settings, host: str | None, port: int | None) -> int:
    import asyncio

    import uvicorn

    from agents.models import LLMConfigError, detect_provider
    from tools.storage import StartupError, preflight

    try:
        asyncio.run(preflight(settings))
        if settings.llm_provider in ("openai", "ollama"):
            detect_provider(settings)  # an explicit provider's configuration errors, no probing
    except (StartupError, LLMConfigError) as exc:
        print(f"Switchyard cannot start: {exc}", file=sys.stderr)
        return 3

    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=port or settings.port,
        log_level=settings.log_level.lower(),
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="main.py", description="Switchyard")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the API server")
    serve.add_argument("--host", default=None, help="bind address (default: HOST)")
    serve.add_argument("--port", type=int, default=None, help="port (default: PORT)")
    ingest = sub.add_parser("ingest", help="index files and folders for the knowledge agent")
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to ingest")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")
    config = sub.add_parser("config", help="print the effective settings, secrets redacted")
    config.add_argument(
        "--table", action="store_true", help="print every setting as a Markdown table instead"
    )
    config.add_argument(
        "--env-example", action="store_true", help="print a .env.example with every setting"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.command == "serve":
        return _serve(settings, args.host, args.port)
    if args.command == "ingest":
        from agents.knowledge.cli import run as ingest

        return ingest(settings, args.paths, quiet=args.quiet, as_json=args.json)
    if args.command == "config":
        import json

        from config import env_example, settings_table

        if args.table:
            print(settings_table())
        elif args.env_example:
            print(env_example(), end="")
        else:
            print(json.dumps(settings.redacted(), indent=2))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
