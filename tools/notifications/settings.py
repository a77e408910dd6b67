"""The notification streams' settings group (NOTIFY_*: length, once-keys, keep-alive, size).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tools.settings_group import SettingsGroup


class NotificationSettings(SettingsGroup):
    """Each owner's notification stream, ``GET /notifications/stream`` (group `notifications`)."""

    env_prefix: ClassVar[str] = "NOTIFY_"

    max_len: int = Field(
        1000,
        ge=10,
        le=1_000_000,
        description="Events kept per owner's stream (older ones are trimmed; a reconnect with "
        "an older Last-Event-ID gets what is left).",
    )
    once_seconds: int = Field(
        7 * 86_400,
        ge=60,
        le=365 * 86_400,
        description="How long an event's once-key is kept (a re-delivered reminder within it "
        "is not published twice).",
    )
    ping_seconds: float = Field(
        15.0, ge=0.5, le=300, description="Keep-alive comment interval of the SSE stream."
    )
    max_data_bytes: int = Field(
        65_536, ge=256, le=1_048_576, description="Largest event payload (bytes as JSON)."
    )
