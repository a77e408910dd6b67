"""Switchyard settings: one pydantic-settings object composed of each capability's group.

Each capability declares its settings group in its own package (`tools/<cap>/settings.py`: a
pydantic model whose fields carry their description and bounds); the server's own groups are in
`server_settings.py` and `access_settings.py`. This module is the bottom layer: it composes the
groups into `Settings` (access is `settings.<group>.<field>`, e.g.
`settings.analytics.row_cap`), reads them from the environment and `.env` under their variable
names (a group's `env_prefix` + the field name, or the names in the field's `validation_alias`:
ANALYTICS_ROW_CAP, OPENAI_API_KEY or DEEPSEEK_API_KEY), and keeps the helpers over all of them:
the README table, the `.env.example`, error messages naming the variable, redaction. Per-run
knobs that a caller may change for one request travel in the graph's runtime context, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from access_settings import ApiSettings, QuotaSettings, SecuritySettings
from server_settings import (
    RoutingSettings,
    RunSettings,
    StateSettings,
    StorageSettings,
    StoreSettings,
    WebhookSettings,
)
from tools.analytics.settings import AnalyticsSettings
from tools.coding.settings import CodingSettings
from tools.knowledge.settings import KnowledgeSettings
from tools.mcp_client.settings import McpClientSettings
from tools.notifications.settings import NotificationSettings
from tools.personal.settings import PersonalSettings
from tools.providers.settings import EmbeddingSettings, LLMSettings
from tools.sandbox.settings import SandboxSettings
from tools.scheduler.settings import SchedulerSettings
from tools.test_analysis.settings import AnalysisSettings


class SettingsError(RuntimeError):
    """Raised at start-up when a setting has an invalid value; the message names the variable."""


class Settings(BaseSettings):
    """Every Switchyard setting, one group per capability or server concern.

    A setting may also be given to the constructor (or `load_settings`) under its variable's
    name in lower case, as one would set it in the environment: `Settings(analytics_row_cap=5)`
    is `Settings(analytics={"row_cap": 5})`.
    """

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
        # `FOO=` (e.g. docker compose's `${FOO:-}`) means unset: the default applies.
        env_ignore_empty=True,
    )

    llm: LLMSettings = Field(default_factory=LLMSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    analysis: AnalysisSettings = Field(default_factory=AnalysisSettings)
    runs: RunSettings = Field(default_factory=RunSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    personal: PersonalSettings = Field(default_factory=PersonalSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    coding: CodingSettings = Field(default_factory=CodingSettings)
    analytics: AnalyticsSettings = Field(default_factory=AnalyticsSettings)
    state: StateSettings = Field(default_factory=StateSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    quotas: QuotaSettings = Field(default_factory=QuotaSettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    mcp_client: McpClientSettings = Field(default_factory=McpClientSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The stock sources look for one variable per group (LLM, ANALYTICS); the grouped
        # source reads each group's own variables from the same environment and .env.
        assert isinstance(env_settings, EnvSettingsSource)
        assert isinstance(dotenv_settings, EnvSettingsSource)
        return init_settings, _GroupedEnvSource(settings_cls, env_settings, dotenv_settings)

    @model_validator(mode="before")
    @classmethod
    def _fold_variable_names(cls, data: Any) -> Any:
        """`analytics_row_cap=5` (a variable's name) becomes `analytics={"row_cap": 5}`."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        by_variable = _by_variable()
        for key in list(out):
            spec = None if key in cls.model_fields else by_variable.get(key.lower())
            if spec is None:
                continue
            group = out.get(spec.group)
            values = dict(group) if isinstance(group, (BaseModel, Mapping)) else {}
            values[spec.name] = out.pop(key)
            out[spec.group] = values
        return out

    @classmethod
    def spec(cls, variable: str) -> SettingSpec:
        """The setting whose variable is `variable` (any case; ``retrieval_top_k``)."""
        found = _by_variable().get(variable.lower())
        if found is None:
            raise KeyError(f"no setting is read from {variable.upper()}")
        return found

    def redacted(self) -> dict[str, dict[str, Any]]:
        """Effective settings grouped for display (keyed by variable name in lower case), with
        every secret and URL password hidden (and secret URLs shown by index and host only)."""
        out: dict[str, dict[str, Any]] = {}
        for spec in setting_specs():
            value = spec.value_in(self)
            if spec.flat in SECRET_URL_FIELDS:
                shown: Any = [url_label(url, index) for index, url in enumerate(value)]
            else:
                shown = _display(value)
            out.setdefault(spec.group, {})[spec.flat] = shown
        return out

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # repr(settings) (tracebacks, debug logs) shows what /config shows, never a raw DSN
        for group_values in self.redacted().values():
            yield from group_values.items()


@dataclass(frozen=True)
class SettingSpec:
    """One setting: its group, its field in the group, and the variables it is read from."""

    group: str
    name: str
    variables: tuple[str, ...]
    field: FieldInfo

    @property
    def env(self) -> str:
        """The primary environment variable (``ANALYTICS_ROW_CAP``)."""
        return self.variables[0]

    @property
    def flat(self) -> str:
        """The setting's one-word name: its primary variable in lower case."""
        return self.env.lower()

    def value_in(self, settings: Settings) -> Any:
        return getattr(getattr(settings, self.group), self.name)


def _variables(model: type[BaseModel], name: str, field: FieldInfo) -> tuple[str, ...]:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice).upper() for choice in alias.choices if isinstance(choice, str))
    if isinstance(alias, str):
        return (alias.upper(),)
    prefix = getattr(model, "env_prefix", "")
    return (f"{prefix}{name}".upper(),)


@cache
def setting_specs() -> tuple[SettingSpec, ...]:
    """Every setting, group by group, in declaration order."""
    specs: list[SettingSpec] = []
    for group, group_field in Settings.model_fields.items():
        model = group_field.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel), group
        for name, field in model.model_fields.items():
            specs.append(SettingSpec(group, name, _variables(model, name, field), field))
    return tuple(specs)


@cache
def _by_variable() -> dict[str, SettingSpec]:
    """Each setting under every variable it is read from, in lower case."""
    return {variable.lower(): spec for spec in setting_specs() for variable in spec.variables}


class _GroupedEnvSource(PydanticBaseSettingsSource):
    """The environment and `.env`, each variable under its group and field; a variable set in
    the environment wins over `.env` (as pydantic-settings' own sources do)."""

    def __init__(
        self, settings_cls: type[BaseSettings], env: EnvSettingsSource, dotenv: EnvSettingsSource
    ) -> None:
        super().__init__(settings_cls)
        # Both already lower-cased (case-insensitive) and without empty values (`FOO=`).
        self._layers: tuple[Mapping[str, str | None], ...] = (env.env_vars, dotenv.env_vars)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        out: dict[str, dict[str, Any]] = {}
        for spec in setting_specs():
            for layer in self._layers:
                found = [name.lower() for name in spec.variables if name.lower() in layer]
                if found:
                    out.setdefault(spec.group, {})[spec.name] = layer[found[0]]
                    break
        return dict(out)


#: Settings whose URLs are secrets as a whole (a webhook's path or query is its credential, e.g.
#: an n8n path token): shown as an index and the host only.
SECRET_URL_FIELDS = frozenset({"personal_webhook_urls"})
#: Settings whose raw value may hold a secret although their name does not say so (the MCP
#: servers' headers): a bad value is never echoed in the configuration error.
SECRET_INPUTS = frozenset({"MCP_CLIENT_SERVERS"})


def _display(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return "**********" if value.get_secret_value() else ""
    if isinstance(value, list):
        return [_display(item) for item in value]
    if isinstance(value, BaseModel):  # e.g. an MCP server: its header values are SecretStr
        return _display(value.model_dump())
    if isinstance(value, dict):
        return {key: _display(item) for key, item in value.items()}
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
    for spec in setting_specs():
        if spec.group != current:
            rows.append(f"| **{spec.group}** | | |")
            current = spec.group
        shown = _display(spec.field.get_default(call_default_factory=True))
        if shown in (None, [], "", {}):
            shown = "unset"
        aliases = f" (also {', '.join(spec.variables[1:])})" if spec.variables[1:] else ""
        rows.append(f"| `{spec.env}`{aliases} | `{shown}` | {spec.field.description} |")
    return "\n".join(rows)


def env_example() -> str:
    """A `.env.example` listing every setting, commented out at its default."""
    lines = [
        "# Switchyard settings. Copy to .env and uncomment what you change.",
        "# Generated by `python main.py config --env-example`; see README.md for each meaning.",
    ]
    current = None
    for spec in setting_specs():
        if spec.group != current:
            lines += ["", f"# --- {spec.group} ---"]
            current = spec.group
        default = _display(spec.field.get_default(call_default_factory=True))
        if default is None or default in ([], {}):
            default = ""
        elif isinstance(default, list):
            default = ",".join(str(item) for item in default)
        lines.append(f"# {spec.field.description}")
        lines.append(f"# {spec.env}={default}")
    return "\n".join(lines) + "\n"


def _variable_at(loc: tuple[int | str, ...]) -> str:
    """The variable an error location names: ("analytics", "row_cap") -> ANALYTICS_ROW_CAP."""
    for spec in setting_specs():
        if loc[:2] == (spec.group, spec.name) or (
            len(loc) >= 2 and loc[0] == spec.group and str(loc[1]).upper() in spec.variables
        ):
            return spec.env
    return "_".join(str(part) for part in loc[:2]).upper()


def _format_error(exc: ValidationError) -> str:
    lines = ["Invalid configuration:"]
    for err in exc.errors():
        variable = _variable_at(tuple(err.get("loc") or ("?",)))
        given = err.get("input")
        secret = variable in SECRET_INPUTS or any(
            word in variable for word in ("KEY", "SECRET", "PASSWORD")
        )
        shown = (
            "<secret>" if secret else repr(redact_url(given) if isinstance(given, str) else given)
        )
        lines.append(f"  {variable}: {err.get('msg')} (got {shown})")
    lines.append("Fix the variable(s) above in the environment or .env, then start again.")
    return "\n".join(lines)


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment and `.env`; SettingsError names any bad variable.

    `overrides` name settings by group (``analytics={"row_cap": 5}``) or by variable
    (``analytics_row_cap=5``)."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(_format_error(exc)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return load_settings()
