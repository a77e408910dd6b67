"""The analytics component: the demo dataset, the read-only reader pool and the chart store.

At start-up (API and Studio), :func:`start_analytics`
- seeds schema ``analytics`` in the process's Postgres (DATABASE_URL, or the embedded one) when
  ANALYTICS_SEED_ON_START is set, idempotent (a version marker) and safe when several processes
  start at once (an advisory lock), and (re)creates the reader role ANALYTICS_READER_USER;
- opens the reader pool (connections log in as the reader role; opened lazily, so a start-up
  never waits for it) and closes it at shutdown;
- provides the agents' services with the ``AnalyticsContext`` (pool and limits) and the
  ``ChartStore`` (answers' charts in Redis, per owner, for ANALYTICS_CHART_TTL_SECONDS, with
  signed links for chat UIs: :func:`chart_links`);
- adds the ``analytics`` health check (the reader pool reads the dataset's marker; not required:
  a missing dataset degrades analytics only) and the ``analytics`` metrics (pool and charts).

``python main.py seed-analytics`` (:func:`seed_command`) seeds on demand against DATABASE_URL,
or the embedded Postgres under DATA_DIR when it is unset, and prints what it did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool
from sqlglot.errors import SqlglotError

from app.components.base import Component, Components
from app.routers.analytics import router
from app.storage import Dependency, StartupError
from config import Settings, redact_url
from tools.analytics.bundled import bundled_catalogue
from tools.analytics.catalogue import (
    DEMO_EDITS_NAME,
    DEMO_EDITS_TEMPLATE,
    DEMO_LAYER,
    SemanticLayer,
    demo_layer,
)
from tools.analytics.catalogue_file import (
    CatalogueError,
    apply_edits,
    derived_path,
    dump_yaml,
    read_edits,
)
from tools.analytics.chartlinks import ChartLinks, link_secret
from tools.analytics.chartstore import AnyRedis, ChartStore
from tools.analytics.context import AnalyticsContext
from tools.analytics.dataset import DATASET_VERSION
from tools.analytics.executor import open_reader_pool, reader_conninfo
from tools.analytics.external import ExternalSource, open_source
from tools.analytics.operations import OPERATIONS
from tools.analytics.schema import MARKER_TABLE, SCHEMA
from tools.analytics.seed import SeedError, SeedReport, ensure_seeded
from tools.analytics.source import SourceError, parse_schemas
from tools.embedded import EmbeddedPostgres

log = logging.getLogger(__name__)

#: How long the health check waits for a reader connection.
HEALTH_TIMEOUT_SECONDS = 3.0


def _reader_password(settings: Settings) -> str | None:
    secret = settings.analytics.reader_password
    return secret.get_secret_value() if secret is not None else None


def seed(settings: Settings, database_url: str, *, force: bool = False) -> SeedReport:
    """Seed schema ``analytics`` at ``database_url`` (blocking; StartupError names the fix)."""
    try:
        return ensure_seeded(
            database_url,
            reader_user=settings.analytics.reader_user,
            reader_password=_reader_password(settings),
            reader_limits={
                "work_mem": settings.analytics.reader_work_mem,
                "temp_file_limit": settings.analytics.reader_temp_file_limit,
            },
            force=force,
        )
    except SeedError as exc:
        raise StartupError(f"analytics: {exc}") from None


def catalogue_path(settings: Settings) -> Path:
    """ANALYTICS_CATALOGUE_PATH, or DATA_DIR/analytics/catalogue.yaml."""
    if settings.analytics.catalogue_path:
        return Path(settings.analytics.catalogue_path).expanduser()
    return Path(settings.storage.data_dir) / "analytics" / "catalogue.yaml"


def demo_edits_path(settings: Settings) -> Path:
    """The operator's edits of the demo's catalogue: demo.edits.yaml beside
    ANALYTICS_CATALOGUE_PATH (its own file, so switching between a database and the demo never
    lays one's edits over the other)."""
    return catalogue_path(settings).with_name(DEMO_EDITS_NAME)


def open_demo_layer(settings: Settings) -> SemanticLayer:
    """The demo's semantic layer: its catalogue file with the operator's edits laid over it
    (blocking; StartupError says what in the edits is wrong)."""
    path = demo_edits_path(settings)
    try:
        return demo_layer(path)
    except (CatalogueError, SqlglotError) as exc:
        raise StartupError(f"analytics: the demo's catalogue edits in {path}: {exc}") from None


def open_external(settings: Settings) -> ExternalSource:
    """Connect ANALYTICS_DATABASE_URL and build its catalogue (blocking; StartupError names
    the fix)."""
    secret = settings.analytics.database_url
    assert secret is not None
    try:
        return open_source(
            secret.get_secret_value(),
            parse_schemas(settings.analytics.schemas),
            catalogue_path(settings),
            max_values=settings.analytics.catalogue_distinct_values,
            timeout_ms=settings.analytics.statement_timeout_ms,
        )
    except (SourceError, CatalogueError) as exc:
        raise StartupError(f"analytics: {exc}") from None
    except psycopg.Error as exc:
        raise StartupError(
            f"analytics: ANALYTICS_DATABASE_URL cannot be read ({str(exc).strip()}); check the "
            "URL, the role's password and its GRANTs (README: 'Connecting your database')"
        ) from None


async def start_analytics(components: Components) -> None:
    """Seed (when configured), open the reader pool, provide the context and the chart store;
    with ANALYTICS_DATABASE_URL, connect that database and build its catalogue instead."""
    if components.settings.analytics.database_url is not None:
        await start_external(components)
        return
    settings = components.settings
    stores = components.stores
    if settings.analytics.seed_on_start:
        report = await asyncio.to_thread(seed, settings, stores.database_url)
        if not report.seeded:
            log.info("analytics dataset %s present (%s sales)", report.version,
                     report.row_counts.get("sales", "?"))  # fmt: skip
    layer = await asyncio.to_thread(open_demo_layer, settings)
    if layer is not DEMO_LAYER:
        log.info(
            "analytics demo: the operator's edits in %s are laid over its catalogue (%d metrics, "
            "%d breakdowns)", demo_edits_path(settings), len(layer.metrics), len(layer.dimensions),
        )  # fmt: skip
    conninfo = reader_conninfo(
        stores.database_url, settings.analytics.reader_user, _reader_password(settings)
    )
    pool = open_reader_pool(
        conninfo,
        max_size=settings.analytics.pool_size,
        timeout=settings.storage.connect_timeout_seconds,
    )
    await pool.open()  # min_size 0: no connection is made until a query needs one
    components.stack.push_async_callback(pool.close)
    components.agents.provide(AnalyticsContext.from_settings(settings, pool, layer=layer))
    charts = ChartStore(
        stores.redis,
        ttl_seconds=settings.analytics.chart_ttl_seconds,
        links=await chart_links(settings, stores.redis),
    )
    components.agents.provide(charts)
    target = _target(conninfo)
    mode = "server" if settings.storage.database_url else "embedded"

    async def check() -> Dependency:
        return await reader_health(pool, target, mode)

    def snapshot() -> dict[str, Any]:
        return {"pool": pool.get_stats(), "charts": charts.stats.as_dict()}

    components.health.append(check)
    components.metrics["analytics"] = snapshot


async def chart_links(settings: Settings, redis: AnyRedis) -> ChartLinks:
    """The signer of chart links: ANALYTICS_CHART_LINK_SECRET (else a generated one), the
    link TTL, and the API's address as a browser reaches it."""
    configured = settings.analytics.chart_link_secret
    secret = await link_secret(
        configured.get_secret_value() if configured is not None else None,
        settings.storage.data_dir,
        redis,
    )
    base = settings.analytics.chart_public_url
    if base is None:
        host = settings.api.host
        wildcard = host in ("0.0.0.0", "::", "[::]", "")  # noqa: S104 - a comparison
        host = "localhost" if wildcard else (f"[{host}]" if ":" in host else host)
        base = f"http://{host}:{settings.api.port}"
    return ChartLinks(secret, settings.analytics.chart_link_ttl_seconds, base.rstrip("/"))


async def start_external(components: Components) -> None:
    """The user's database: its catalogue, a pool as its (read-only) role, loud warnings."""
    settings = components.settings
    source = await asyncio.to_thread(open_external, settings)
    for warning in source.role.warnings:
        log.warning("ANALYTICS DATABASE IS NOT READ-ONLY: %s", warning)
    log.info(
        "analytics answers from %s (schemas %s): %d tables, %d metrics; catalogue %s",
        source.label, ", ".join(source.scope.schemas), len(source.catalogue.visible_tables()),
        len(source.catalogue.metrics), source.catalogue_path,
    )  # fmt: skip
    pool = open_reader_pool(
        source.conninfo,
        max_size=settings.analytics.pool_size,
        timeout=settings.storage.connect_timeout_seconds,
    )
    await pool.open()
    components.stack.push_async_callback(pool.close)
    components.agents.provide(
        AnalyticsContext.from_settings(
            settings, pool, catalogue=source.catalogue, scope=source.scope
        )
    )
    charts = ChartStore(
        components.stores.redis,
        ttl_seconds=settings.analytics.chart_ttl_seconds,
        links=await chart_links(settings, components.stores.redis),
    )
    components.agents.provide(charts)

    async def check() -> Dependency:
        return await external_health(pool, source)

    def snapshot() -> dict[str, Any]:
        return {"pool": pool.get_stats(), "charts": charts.stats.as_dict()}

    components.health.append(check)
    components.metrics["analytics"] = snapshot


async def external_health(
    pool: AsyncConnectionPool, source: ExternalSource, timeout: float = HEALTH_TIMEOUT_SECONDS
) -> Dependency:
    """The external database answers, and what its role may do (warnings when it can write)."""
    started = time.perf_counter()
    warnings = list(source.role.warnings) or None
    error: str | None = None
    try:
        async with pool.connection(timeout=timeout) as conn:
            await conn.execute("SELECT 1")
            await conn.rollback()
    except Exception as exc:
        error = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
    ms = round((time.perf_counter() - started) * 1000, 2)
    status = "error" if error else ("warning" if warnings else "ok")
    return Dependency(
        "analytics", status, "external", ms, source.label, error and error.splitlines()[0],
        required=False, warnings=warnings,
    )  # fmt: skip


def _target(conninfo: str) -> str:
    params = conninfo_to_dict(conninfo)
    return f"{params.get('user')}@{params.get('host') or 'localhost'}/{params.get('dbname')}"


async def reader_health(
    pool: AsyncConnectionPool,
    target: str,
    mode: str,
    timeout: float = HEALTH_TIMEOUT_SECONDS,
) -> Dependency:
    """The reader pool's health: it connects as the reader and reads the dataset's marker
    (``mode``: the Postgres it reads is a ``server`` or the ``embedded`` one)."""
    started = time.perf_counter()

    def done(status: str, error: str | None = None) -> Dependency:
        ms = round((time.perf_counter() - started) * 1000, 2)
        return Dependency("analytics", status, mode, ms, target, error, required=False)

    try:
        async with pool.connection(timeout=timeout) as conn:
            cursor = await conn.execute(
                f"SELECT version FROM {SCHEMA}.{MARKER_TABLE} ORDER BY seeded_at DESC LIMIT 1"
            )
            row = await cursor.fetchone()
    except psycopg.errors.UndefinedTable:
        return done(
            "error",
            "the analytics dataset is not seeded: run `python main.py seed-analytics` or set "
            "ANALYTICS_SEED_ON_START=true",
        )
    except Exception as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return done("error", reason.splitlines()[0])
    if row is None or row[0] != DATASET_VERSION:
        found = row[0] if row else "none"
        return done(
            "error",
            f"the analytics dataset is version {found}, this release reads {DATASET_VERSION}: run "
            "`python main.py seed-analytics`",
        )
    return done("ok")


# --- python main.py analytics-catalogue refresh -------------------------------------------------


def catalogue_command(settings: Settings, action: str = "refresh") -> int:
    """Re-read ANALYTICS_DATABASE_URL's schema and write its catalogue (exit 0; without the URL,
    export the demo's catalogue), or say why not (exit 3: the database or the file failed)."""
    if settings.analytics.database_url is None:
        path = derived_path(catalogue_path(settings)).with_name("demo.catalogue.yaml")
        edits = demo_edits_path(settings)
        try:
            open_demo_layer(settings)
            effective = apply_edits(bundled_catalogue(), read_edits(edits))
        except (StartupError, CatalogueError) as exc:
            print(f"analytics-catalogue {action} failed: {exc}", file=sys.stderr)
            return 3
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(effective), encoding="utf-8")
        if not edits.exists():
            edits.write_text(DEMO_EDITS_TEMPLATE, encoding="utf-8")
        print(
            "ANALYTICS_DATABASE_URL is not set, so the agent answers from the bundled demo. Its "
            f"catalogue (tools/analytics/demo_catalogue.yaml, with your edits in {edits} laid "
            f"over it) is written to {path} for reading. Set ANALYTICS_DATABASE_URL to derive "
            "your database's catalogue."
        )
        return 0
    try:
        source = open_external(settings)
    except StartupError as exc:
        print(f"analytics-catalogue {action} failed: {exc}", file=sys.stderr)
        return 3
    cat = source.catalogue
    print(
        f"Catalogue of {source.label} (schemas {', '.join(source.scope.schemas)}): "
        f"{len(cat.visible_tables())} tables, {sum(len(t.visible_columns()) for t in cat.tables)} "
        f"columns, {len(cat.metrics)} metrics."
    )
    print(f"Derived: {derived_path(source.catalogue_path)}")
    print(f"Your edits (loaded over it): {source.catalogue_path}")
    for warning in source.role.warnings:
        print(f"WARNING: {warning}")
    return 0


# --- python main.py seed-analytics -----------------------------------------------------------


def seed_command(settings: Settings, *, force: bool = False, as_json: bool = False) -> int:
    """Seed the dataset against DATABASE_URL (or the embedded Postgres) and print what happened.

    Exit status 0 when the dataset is in place, 3 when the database or the role setup failed.
    """
    embedded: EmbeddedPostgres | None = None
    try:
        if settings.storage.database_url:
            url = settings.storage.database_url
        else:
            embedded = EmbeddedPostgres(settings.storage.data_dir)
            url = embedded.url
        report = seed(settings, url, force=force)
    except (StartupError, psycopg.Error) as exc:
        print(f"seed-analytics failed: {str(exc).strip()}", file=sys.stderr)
        return 3
    finally:
        if embedded is not None:
            embedded.release()
    where = redact_url(url) if settings.storage.database_url else f"the embedded Postgres ({url})"
    if as_json:
        print(json.dumps({"database": where, **report.__dict__}, indent=2))
        return 0
    counts = ", ".join(f"{table} {n:,}" for table, n in report.row_counts.items())
    if report.seeded:
        print(
            f"Seeded the analytics dataset {report.version} into schema {SCHEMA} of {where} in "
            f"{report.seconds:.1f} s: {counts}."
        )
    else:
        print(
            f"The analytics dataset {report.version} is already in schema {SCHEMA} of {where}; "
            f"nothing to do ({counts}). Use --force to seed it again."
        )
    print(
        f"Reader role {report.reader_role}: SELECT on schema {SCHEMA} only, read-only "
        "transactions; analytics SQL runs as this role."
    )
    return 0


#: The analytics capability's part of the app: its engine, operations and routes.
COMPONENT = Component("analytics", start_analytics, OPERATIONS, router)
