"""Settings of the tools agents may use from other MCP servers (group `mcp_client`; a leaf:
pydantic and the standard library only).

Off by default: without MCP_CLIENT_SERVERS no server is contacted and no tool is added.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from tools.settings_group import SettingsGroup

#: A server's name prefixes its tools' names (``docs_search_documents``), so it must keep them
#: valid tool names for every provider (letters, digits, ``_``; at most 64 characters in all).
SERVER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")
#: At most this many servers (each is contacted at start-up, one after the other).
MAX_SERVERS = 16


class McpServerConfig(BaseModel):
    """One MCP server the agents may use (an entry of MCP_CLIENT_SERVERS)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=2048, description="The server's streamable HTTP endpoint.")
    transport: Literal["streamable_http"] = "streamable_http"
    #: Sent with every request (e.g. the server's API key); secrets: never shown or logged.
    headers: dict[str, SecretStr] = Field(default_factory=dict, max_length=32)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url must be an http:// or https:// URL with a host")
        if parts.username or parts.password:
            raise ValueError("url must not carry credentials (user:password@): use headers")
        return value


class McpClientSettings(SettingsGroup):
    """Tools from MCP servers the operator configures (group `mcp_client`)."""

    env_prefix: ClassVar[str] = "MCP_CLIENT_"

    servers: dict[str, McpServerConfig] = Field(
        default_factory=dict,
        description="MCP servers whose tools the coding and analytics agents may use, as a "
        'JSON object: name -> {"url": ..., "transport": "streamable_http", "headers": {...}} '
        "(tool names get the prefix `<name>_`; header values are secrets). The URL's host "
        "must resolve to public addresses or be in WEBHOOK_ALLOWED_HOSTS. Unset = none.",
    )
    max_tools: int = Field(
        32,
        ge=1,
        le=256,
        description="Most tools loaded from all MCP_CLIENT_SERVERS together (in the servers' "
        "order); the rest are left out with a warning.",
    )
    connect_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="At start-up, how long listing one MCP server's tools may take; a server "
        "that does not answer in time is skipped with a warning (see /health).",
    )
    call_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="How long one call of a remote MCP tool may take; a slower call is an "
        "error message to the agent's model.",
    )

    @field_validator("servers", mode="before")
    @classmethod
    def _parse_json(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"must be a JSON object of name -> server ({exc.msg})") from None
        if isinstance(value, dict):
            if len(value) > MAX_SERVERS:
                raise ValueError(f"at most {MAX_SERVERS} servers")
            for name in value:
                if not isinstance(name, str) or not SERVER_NAME.match(name):
                    raise ValueError(
                        f"server name {name!r} must be lower-case letters, digits and _ "
                        "(starting with a letter, at most 24 characters): it prefixes tool names"
                    )
        return value
