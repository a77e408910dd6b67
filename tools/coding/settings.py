"""The coding agent's settings group (CODING_*).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from tools.settings_group import SettingsGroup


class CodingSettings(SettingsGroup):
    """The coding agent's limits (group `coding`)."""

    env_prefix: ClassVar[str] = "CODING_"

    max_iterations: int = Field(
        5,
        ge=1,
        le=20,
        description="Code generations per coding request (a request's max_iterations may lower "
        "or raise it up to 20); at the bound the best code so far is returned.",
    )
    max_code_chars: int = Field(
        20_000,
        ge=100,
        le=1_000_000,
        description="Longest code accepted for checking or running.",
    )
    max_test_rows: int = Field(
        10_000,
        ge=1,
        le=1_000_000,
        description="Rows of test data accepted per request.",
    )
    max_test_columns: int = Field(
        100,
        ge=1,
        le=10_000,
        description="Columns of test data accepted per request.",
    )
    result_head_rows: int = Field(
        5,
        ge=1,
        le=1000,
        description="Rows (or items) of a large result shown in its serialised sample.",
    )
    lint_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=120,
        description="Time limit of the linter (ruff) run of check_code.",
    )
