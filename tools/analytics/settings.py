"""The analytics capability's settings group (ANALYTICS_*).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from datetime import date
from typing import ClassVar

from pydantic import Field, SecretStr, field_validator

from tools.settings_group import SettingsGroup


class AnalyticsSettings(SettingsGroup):
    """Analytics: the demo dataset, its read-only reader role, query limits (group `analytics`)."""

    env_prefix: ClassVar[str] = "ANALYTICS_"

    database_url: SecretStr | None = Field(
        None,
        description="PostgreSQL database the analytics agent answers from (postgresql://"
        "role:password@host/db, a read-only role: see README 'Connecting your database'); "
        "unset = the bundled demo dataset (schema `analytics` in DATABASE_URL).",
    )
    schemas: str = Field(
        "public",
        pattern=r"^[a-z_][a-z0-9_$]{0,62}( *, *[a-z_][a-z0-9_$]{0,62})*$",
        description="Comma-separated schemas of ANALYTICS_DATABASE_URL the agent may read (the "
        "first one resolves unqualified table names); pg_catalog and information_schema never.",
    )
    catalogue_path: str = Field(
        "",
        max_length=1000,
        description="The editable catalogue file (YAML) of ANALYTICS_DATABASE_URL: your names, "
        "synonyms, metrics and hidden columns, loaded over the one derived from the schema "
        "(written next to it as <name>.derived.yaml). Empty = DATA_DIR/analytics/catalogue.yaml.",
    )
    catalogue_distinct_values: int = Field(
        25,
        ge=0,
        le=500,
        description="A text column with at most this many distinct values gets them listed in "
        "the catalogue (filter words such as 'in Germany'); 0 = none.",
    )
    explain_cost_limit: float = Field(
        5e7,
        gt=0,
        le=1e15,
        description="Refuse an analytics query whose EXPLAIN total cost exceeds this, before it "
        "runs (Postgres planner cost units).",
    )
    seed_on_start: bool = Field(
        True,
        description="Create and seed the analytics demo dataset (schema `analytics`) at start-up "
        "when it is missing; `python main.py seed-analytics` does it on demand.",
    )
    reader_user: str = Field(
        "switchyard_analytics_reader",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="Postgres login role that runs analytics SQL: created by the seeding step "
        "with SELECT on schema `analytics` only; must differ from the DATABASE_URL user.",
    )
    reader_password: SecretStr | None = Field(
        None,
        description="Password of ANALYTICS_READER_USER (set on the role when seeding); unset = "
        "none, which works with trust/peer auth such as the embedded Postgres.",
    )
    pool_size: int = Field(
        4,
        ge=1,
        le=100,
        description="Connections of the read-only analytics pool per process.",
    )
    statement_timeout_ms: int = Field(
        5000,
        ge=100,
        le=300_000,
        description="statement_timeout of one analytics query (milliseconds).",
    )
    row_cap: int = Field(
        1000,
        ge=1,
        le=50_000,
        description="Rows an analytics query returns at most (more are cut and flagged).",
    )
    preview_rows: int = Field(
        20,
        ge=1,
        le=500,
        description="Rows of a query result shown to the chat model (the answer keeps up to "
        "ANALYTICS_ROW_CAP).",
    )
    max_sql_chars: int = Field(
        20_000,
        ge=100,
        le=200_000,
        description="Longest SQL text the analytics guard accepts.",
    )
    reference_date: date = Field(
        date(2026, 1, 1),
        ge=date(2024, 1, 2),
        le=date(2100, 1, 1),
        description="The analytics dataset's 'today': relative periods (last quarter, since "
        "March, this year) are counted back from it. The data covers 2024-01-01..2025-12-31.",
    )
    demo_mode: bool = Field(
        True,
        description="Answers say the analytics data is the bundled synthetic demo dataset.",
    )
    chart_ttl_seconds: int = Field(
        86_400,
        ge=60,
        le=30 * 86_400,
        description="How long an answer's chart stays retrievable at GET "
        "/analytics/chart/{id}.png or .svg (kept in Redis, per API key).",
    )
    request_timeout_seconds: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="POST /analytics/query gives up (504) after this long.",
    )
    reader_work_mem: str = Field(
        "8MB",
        pattern=r"^[1-9][0-9]{0,6}(kB|MB|GB)$",
        description="work_mem of the analytics reader role (ALTER ROLE ... SET): memory one "
        "sort or hash of an analytics query may use before spilling to disk.",
    )
    reader_temp_file_limit: str = Field(
        "256MB",
        pattern=r"^[1-9][0-9]{0,6}(kB|MB|GB)$",
        description="temp_file_limit of the analytics reader role: disk one analytics query "
        "may spill to (setting it needs a superuser DATABASE_URL user).",
    )
    chart_link_ttl_seconds: int = Field(
        3600,
        ge=60,
        le=30 * 86_400,
        description="How long the signed chart link in an answer message (a markdown image "
        "chat UIs render without the API key header) works; the chart itself stays for "
        "ANALYTICS_CHART_TTL_SECONDS at its keyed URL.",
    )
    chart_link_secret: SecretStr | None = Field(
        None,
        description="HMAC key of signed chart links (at least 16 characters). Unset = a random "
        "secret shared by the replicas on one Redis and kept under DATA_DIR; in production set "
        "the same value on every replica.",
    )
    chart_public_url: str | None = Field(
        None,
        pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$",
        description="The API's address as a browser reaches it (e.g. https://api.example.com), "
        "the start of the signed chart links in answer messages. Unset = http://<HOST>:<PORT> "
        "(localhost for a wildcard HOST).",
    )

    @field_validator("chart_link_secret")
    @classmethod
    def _long_link_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 16:
            raise ValueError("must be at least 16 characters (e.g. `openssl rand -hex 32`)")
        return value
