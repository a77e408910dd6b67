"""The sandbox's limits, read once from the settings (`SANDBOX_*`, `CODING_RESULT_HEAD_ROWS`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # config composes tools.*.settings: importing it here at run time would be circular.
    from config import Settings


MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed execution may use. Build it with `from_settings`."""

    bwrap_path: str = "bwrap"
    timeout_seconds: float = 10.0
    cpu_seconds: int = 5
    memory_mb: int = 1024
    max_tasks: int = 16
    max_file_mb: int = 16
    max_open_files: int = 64
    tmp_mb: int = 64
    output_bytes: int = 65_536
    result_bytes: int = MIB
    packages: tuple[str, ...] = ("pandas", "numpy")
    uid: int = 65534
    max_concurrency: int = 2
    #: Executions one owner (API key) may have running or waiting at once; None: no share.
    max_per_owner: int | None = None
    head_rows: int = 5
    describe_max_items: int = 50
    describe_max_chars: int = 2000

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxLimits:
        """The limits the settings configure."""
        return cls(
            bwrap_path=settings.sandbox.bwrap_path,
            timeout_seconds=settings.sandbox.timeout_seconds,
            cpu_seconds=settings.sandbox.cpu_seconds,
            memory_mb=settings.sandbox.memory_mb,
            max_tasks=settings.sandbox.max_tasks,
            max_file_mb=settings.sandbox.max_file_mb,
            max_open_files=settings.sandbox.max_open_files,
            tmp_mb=settings.sandbox.tmp_mb,
            output_bytes=settings.sandbox.output_bytes,
            result_bytes=settings.sandbox.result_bytes,
            packages=tuple(settings.sandbox.packages),
            uid=settings.sandbox.uid,
            max_concurrency=settings.sandbox.max_concurrency,
            max_per_owner=settings.sandbox.max_per_owner,
            head_rows=settings.coding.result_head_rows,
        )

    def rlimits(self) -> dict[str, int]:
        """The rlimits the runner applies to itself before running the user's code."""
        return {
            "cpu_seconds": self.cpu_seconds,
            "memory_bytes": self.memory_mb * MIB,
            "tasks": self.max_tasks,
            "file_bytes": self.max_file_mb * MIB,
            "open_files": self.max_open_files,
        }
