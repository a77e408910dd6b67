"""The test-analysis capability's settings group (ANALYSIS_*).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tools.settings_group import SettingsGroup


class AnalysisSettings(SettingsGroup):
    """Test analysis: modes, LLM review, rule thresholds, caches (group `analysis`)."""

    env_prefix: ClassVar[str] = "ANALYSIS_"

    default_mode: Literal["rules-only", "llm-only", "hybrid"] = Field(
        "hybrid",
        description="Analysis mode when a request (or chat message) names none: rules-only, "
        "llm-only or hybrid.",
    )
    allow_downgrade: bool = Field(
        True,
        description="An LLM mode with no chat model configured runs rules-only (with a warning) "
        "instead of failing; a request's allow_downgrade overrides this.",
    )
    llm_batch_size: int = Field(
        5,
        ge=1,
        le=50,
        description="Test functions per LLM review call (one graph task per batch).",
    )
    llm_min_confidence: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="LLM findings below this confidence are dropped.",
    )
    llm_role: Literal["chat", "fast"] = Field(
        "chat",
        description="Which model reviews tests: chat (the main model) or fast (LLM_FAST_MODEL).",
    )
    llm_seconds_per_call: float = Field(
        4.0,
        gt=0,
        le=600,
        description="Planning estimate: seconds one review call takes (for the time estimate).",
    )
    llm_output_tokens_per_call: int = Field(
        300,
        ge=1,
        le=100_000,
        description="Planning estimate: tokens one review answer takes.",
    )
    rules_lines_per_second: int = Field(
        50_000,
        ge=1,
        le=10_000_000,
        description="Planning estimate: lines per second of parsing + rules.",
    )
    verbose_test_max_statements: int = Field(
        30,
        ge=1,
        le=10_000,
        description="verbose-test fires above this many statements in a test body.",
    )
    obscure_setup_max_locals: int = Field(
        10,
        ge=1,
        le=10_000,
        description="obscure-setup fires above this many distinct local variables in a test.",
    )
    lack_of_cohesion_threshold: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="lack-of-cohesion fires when 1 - mean pairwise cosine similarity of a "
        "class's tests is at least this.",
    )
    max_findings: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Findings kept per analysis (highest severity and confidence first).",
    )
    parse_cache_size: int = Field(
        1000,
        ge=1,
        le=1_000_000,
        description="Parsed files kept in the per-process parse cache (LRU).",
    )
    parse_cache_ttl_seconds: float = Field(
        300.0,
        gt=0,
        le=7 * 24 * 3600,
        description="How long a parsed file stays in the parse cache.",
    )
    sync_timeout_seconds: float = Field(
        300.0,
        gt=0,
        le=3600,
        description="POST /api/v1/analyze gives up (504) after this long; longer analyses "
        "belong in POST /analyses.",
    )
