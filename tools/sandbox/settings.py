"""The code sandbox's settings group (SANDBOX_*: bubblewrap, rlimits, concurrency).

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import Field, field_validator

from tools.settings_group import SettingsGroup


class SandboxSettings(SettingsGroup):
    """The OS sandbox of untrusted code (group `sandbox`)."""

    env_prefix: ClassVar[str] = "SANDBOX_"

    bwrap_path: str = Field(
        "bwrap",
        min_length=1,
        description="The bubblewrap binary (name on PATH or absolute path). Without a working "
        "bwrap, code execution is refused (install: apt-get install -y bubblewrap).",
    )
    timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Wall-clock limit of one sandboxed execution (start-up included); past it "
        "the whole sandbox is killed.",
    )
    cpu_seconds: int = Field(
        5,
        ge=1,
        le=300,
        description="CPU-time limit (RLIMIT_CPU) of the sandboxed code.",
    )
    memory_mb: int = Field(
        1024,
        ge=256,
        le=65_536,
        description="Address-space limit (RLIMIT_AS) of the sandboxed process, in MiB.",
    )
    max_tasks: int = Field(
        16,
        ge=2,
        le=1024,
        description="Processes + threads the sandboxed code may have (RLIMIT_NPROC); new "
        "processes are denied regardless (seccomp).",
    )
    max_file_mb: int = Field(
        16,
        ge=1,
        le=4096,
        description="Largest file the sandboxed code may write (RLIMIT_FSIZE), in MiB.",
    )
    max_open_files: int = Field(
        64,
        ge=16,
        le=4096,
        description="Open file descriptors of the sandboxed code (RLIMIT_NOFILE).",
    )
    tmp_mb: int = Field(
        64,
        ge=1,
        le=4096,
        description="Size of the sandbox's private, writable /tmp (a tmpfs), in MiB.",
    )
    output_bytes: int = Field(
        65_536,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Cap of the code's stdout and of its stderr (each); past it the sandbox is "
        "stopped and the run fails with an output-limit error.",
    )
    result_bytes: int = Field(
        1024 * 1024,
        ge=4096,
        le=64 * 1024 * 1024,
        description="Largest JSON result the sandbox may hand back.",
    )
    packages: list[str] = Field(
        default_factory=lambda: ["pandas", "numpy"],
        description="Comma-separated distributions (with their dependencies) the sandboxed code "
        "may import, besides the standard library; read-only.",
    )
    uid: int = Field(
        65534,
        ge=1,
        le=2**31 - 2,
        description="When the server runs as root, the sandboxed code runs as this uid/gid "
        "(default nobody).",
    )
    max_concurrency: int = Field(
        2,
        ge=1,
        le=256,
        description="Sandboxed executions one process runs at the same time (others wait).",
    )
    max_per_owner: int = Field(
        1,
        ge=1,
        le=256,
        description="Sandboxed executions one API key may have running or waiting at once "
        "(its share of SANDBOX_MAX_CONCURRENCY); more are refused with 429.",
    )

    @field_validator("packages", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("packages")
    @classmethod
    def _package_names(cls, value: list[str]) -> list[str]:
        if len(value) > 50:
            raise ValueError("at most 50 packages")
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
                raise ValueError(f"{name!r} is not a distribution name")
        return value
