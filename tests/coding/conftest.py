"""Fixtures of the coding tests: a real bubblewrap sandbox with tight limits, test data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tools.sandbox import Sandbox, SandboxLimits

#: Tight limits keep the limit tests fast; the wall clock stays generous for a busy machine.
TEST_LIMITS = SandboxLimits(
    timeout_seconds=20.0,
    cpu_seconds=2,
    memory_mb=768,
    max_tasks=8,
    max_file_mb=4,
    tmp_mb=8,
    output_bytes=16_384,
    result_bytes=256 * 1024,
    max_concurrency=2,
)


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """A working sandbox, or a clear failure naming the fix (never a silent skip)."""
    box = Sandbox(TEST_LIMITS)
    box.ensure_available()
    return box


@pytest.fixture
def sales() -> pd.DataFrame:
    """A small frame whose index does not start at 0 (to catch loc/iloc confusion)."""
    return pd.DataFrame(
        {"region": ["north", "south", "north", "east"], "amount": [10.0, 20.5, 7.25, 3.0]},
        index=[10, 11, 12, 13],
    )


def sandbox_processes() -> list[int]:
    """Pids of processes still running the sandbox runner (there must be none after a run)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"/sandbox/runner.py" in cmdline:
            pids.append(int(entry.name))
    return pids


@pytest.fixture
def host_secret() -> Iterator[str]:
    """A secret in this (the host) process's environment."""
    value = "sk-host-secret-" + os.urandom(8).hex()
    os.environ["SWITCHYARD_TEST_SECRET"] = value
    yield value
    os.environ.pop("SWITCHYARD_TEST_SECRET", None)
