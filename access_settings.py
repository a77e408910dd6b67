"""The server's access settings groups: the HTTP API, quotas per owner and security (who may
call the server, how much each owner may keep, and the secrets and defaults that guard it).

A leaf: imports only pydantic and the standard library; `config.Settings` composes it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from tools.settings_group import SettingsGroup


class ApiSettings(SettingsGroup):
    """The HTTP API (group `api`)."""

    host: str = Field("127.0.0.1", description="Bind address of `serve`.")
    port: int = Field(8000, ge=1, le=65535, description="Port of `serve`.")
    api_keys: list[SecretStr] = Field(
        default_factory=list,
        description="Comma-separated API keys; empty = no authentication, served on loopback "
        "only unless ALLOW_ANONYMOUS=true. With keys set, each session belongs to the key that "
        "created it.",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Comma-separated CORS origins; empty = CORS off. For LangGraph Studio add "
        "https://smith.langchain.com (its web page calls this server from the browser).",
    )
    rate_limit_per_minute: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Requests per minute per client (Redis-backed).",
    )
    max_files: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Max files per analysis request.",
    )
    max_request_bytes: int = Field(
        10 * 1024 * 1024,
        ge=1024,
        le=1 << 30,
        description="Max request body / total file size (bytes).",
    )
    max_json_depth: int = Field(
        64,
        ge=8,
        le=512,
        description="Deepest nesting of arrays and objects in a JSON-RPC message to /mcp; a "
        "deeper one is answered 400 before it is parsed.",
    )
    max_message_chars: int = Field(
        16_000,
        ge=1,
        le=1_000_000,
        description="Max characters of one chat message.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Log level."
    )
    shutdown_step_seconds: float = Field(
        15.0,
        gt=0,
        le=600,
        description="At shutdown each step (the run worker, the components' engines, the LLM "
        "clients, the stores) gets this long (the run worker also WEBHOOK_SHUTDOWN_GRACE_SECONDS); "
        "one that overruns is logged by name and left, so a stop never hangs.",
    )

    @field_validator("api_keys", "cors_origins", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class QuotaSettings(SettingsGroup):
    """Quotas per owner: one tenant cannot fill the shared stores or queues (group `quotas`)."""

    max_threads_per_owner: int = Field(
        1000,
        ge=1,
        le=10_000_000,
        description="Threads (chat sessions, Agent Server threads) one API key may hold; a new "
        "one beyond it answers 429 until some are deleted or expire.",
    )
    max_active_runs_per_owner: int = Field(
        20,
        ge=1,
        le=100_000,
        description="Queued + running background runs (analyses, Agent Server runs) of one API "
        "key; a run beyond it answers 429 until some finish.",
    )
    max_crons_per_owner: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Crons (POST /runs/crons, enabled or not) one API key may hold; a new one "
        "beyond it answers 429 until some are deleted.",
    )
    max_documents_per_owner: int = Field(
        50_000,
        ge=1,
        le=100_000_000,
        description="Uploaded documents one API key may keep in the knowledge base (an upload "
        "beyond it answers 429).",
    )
    max_chunks_per_owner: int = Field(
        500_000,
        ge=1,
        le=1_000_000_000,
        description="Chunks of the uploaded documents of one API key (an upload beyond it "
        "answers 429; its chunks are counted by chunking before anything is embedded).",
    )
    max_documents_per_upload: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Documents one upload may hold (a .jsonl line is a document); counted while "
        "loading, so a larger upload answers 413 before anything is embedded.",
    )
    max_chunks_per_upload: int = Field(
        50_000,
        ge=1,
        le=10_000_000,
        description="Chunks one upload may produce, counted by chunking before anything is "
        "embedded (413 above it).",
    )
    max_pdf_pages: int = Field(
        1000,
        ge=1,
        le=1_000_000,
        description="Pages of one PDF (slides of a .pptx, sheets of a .xlsx) that ingestion "
        "reads (a longer file is that file's error).",
    )
    max_extracted_chars: int = Field(
        5_000_000,
        ge=1_000,
        le=1_000_000_000,
        description="Characters of text extracted from one PDF, .docx, .pptx, .xlsx, .csv or "
        ".json (a compressed file can hold far more text than its bytes); above it the file is "
        "refused with its own error.",
    )
    max_uncompressed_bytes: int = Field(
        200 * 1024 * 1024,
        ge=1024,
        le=1 << 34,
        description="Uncompressed bytes of one .docx, .pptx or .xlsx (a zip), summed from its "
        "zip directory before anything is inflated: a zip bomb is that file's error.",
    )
    ingest_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Threads of the ingestion executor (loading, chunking, embedding uploads): "
        "its own pool, so a large upload never takes the threads chat turns use.",
    )
    max_metadata_bytes: int = Field(
        16_384,
        ge=256,
        le=16 * 1024 * 1024,
        description="Bytes (as JSON) of one request's metadata (thread or run), and of a "
        "thread's merged metadata; larger answers 413.",
    )
    max_run_input_bytes: int = Field(
        262_144,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Bytes (as JSON) of one Agent Server run's input or command (agent_input "
        "included), or of a state update's values; larger answers 413.",
    )
    max_run_config_bytes: int = Field(
        16_384,
        ge=256,
        le=16 * 1024 * 1024,
        description="Bytes (as JSON) of one run's config and of its context; larger answers 413.",
    )
    max_llm_batches_per_analysis: int = Field(
        200,
        ge=1,
        le=100_000,
        description="LLM review calls (batches of ANALYSIS_LLM_BATCH_SIZE tests) one analysis in "
        "llm-only or hybrid mode may plan; more answers 413 (split the files, or use "
        "rules-only).",
    )


class SecuritySettings(SettingsGroup):
    """Security defaults and secrets (group `security`)."""

    allow_anonymous: bool = Field(
        False,
        description="Serve without API_KEYS on a non-loopback address (everyone is one "
        "anonymous owner who may do everything). Off: `serve` refuses to start that way.",
    )
    operator_api_keys: list[SecretStr] = Field(
        default_factory=list,
        description="Comma-separated operator keys (accepted like API_KEYS): with one, "
        "/metrics shows the process-wide counters and every key's; other keys see only their "
        "own.",
    )
    owner_id_secret: SecretStr | None = Field(
        None,
        description="Key of the HMAC that turns an API key into its owner id (at least 16 "
        "characters). Unset = a random secret kept in Redis (shared by every replica on it) and "
        "copied under DATA_DIR; in production set the same value on every replica.",
    )

    @field_validator("owner_id_secret")
    @classmethod
    def _long_owner_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 16:
            raise ValueError("must be at least 16 characters (e.g. `openssl rand -hex 32`)")
        return value

    @field_validator("operator_api_keys", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value
