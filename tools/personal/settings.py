"""The personal agents' settings group (PERSONAL_*: tasks, meals, events, webhooks).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, field_validator

from tools.settings_group import SettingsGroup


class PersonalSettings(SettingsGroup):
    """The personal agents (tasks, meals, events) and their webhooks (group `personal`)."""

    env_prefix: ClassVar[str] = "PERSONAL_"

    timezone: str = Field(
        "UTC",
        description="Default IANA time zone of the personal agents (e.g. Europe/Berlin): "
        "natural-language dates are read in it; a request may name another.",
    )
    page_size: int = Field(
        20,
        ge=1,
        le=1000,
        description="Rows per page of a task/meal/event list when the caller names none.",
    )
    max_page_size: int = Field(
        100,
        ge=1,
        le=1000,
        description="Largest page a caller may ask for; must be at least PERSONAL_PAGE_SIZE.",
    )
    search_limit: int = Field(
        10,
        ge=1,
        le=100,
        description="Most results of a semantic or hybrid search.",
    )
    hybrid_candidates: int = Field(
        500,
        ge=10,
        le=10_000,
        description="Hybrid search: most rows the structured filter hands to semantic ranking.",
    )
    event_minutes: int = Field(
        60,
        ge=5,
        le=1440,
        description="Length of an event created without an end time (minutes).",
    )
    default_hour: int = Field(
        9,
        ge=0,
        le=23,
        description="Hour given to a task due on a day with no time ('next Friday').",
    )
    max_steps: int = Field(
        12,
        ge=2,
        le=100,
        description="Most model/tool steps of one personal-agent turn (the ReAct loop's bound).",
    )
    webhook_urls: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="Comma-separated http(s) URLs (e.g. n8n Webhook nodes) that receive the "
        "personal agents' events (reminder due, event created, daily summary); empty = off.",
    )
    webhook_secret: SecretStr | None = Field(
        None,
        description="Key of the HMAC-SHA256 signature sent in X-Switchyard-Signature; "
        "unset = unsigned deliveries.",
    )
    webhook_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=60,
        description="Total deadline of one webhook request (connect, request, answer).",
    )
    webhook_max_attempts: int = Field(
        4,
        ge=1,
        le=10,
        description="Delivery attempts per URL before the event goes to the dead-letter stream.",
    )
    webhook_backoff_seconds: float = Field(
        0.5,
        ge=0,
        le=60,
        description="First retry delay of a webhook; it doubles per attempt (with jitter).",
    )
    webhook_backoff_max_seconds: float = Field(
        30.0,
        ge=0,
        le=600,
        description="Longest retry delay of a webhook.",
    )
    dead_letter_max: int = Field(
        10_000,
        ge=10,
        le=1_000_000,
        description="Dead-letter records kept in Redis (oldest trimmed first).",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
        return value

    @field_validator("max_page_size")
    @classmethod
    def _max_page_at_least_default(cls, value: int, info: Any) -> int:
        size = info.data.get("page_size")
        if size is not None and value < size:
            raise ValueError(f"must be at least PERSONAL_PAGE_SIZE ({size})")
        return value

    @field_validator("webhook_urls", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("webhook_urls")
    @classmethod
    def _http_urls(cls, value: list[str]) -> list[str]:
        for index, url in enumerate(value):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                # The URL is a secret as a whole (its path may be a token): name it by place.
                raise ValueError(f"URL #{index + 1} is not an http(s) URL")
        return value
