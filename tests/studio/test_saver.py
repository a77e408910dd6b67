"""The langgraph.json checkpointer factory: settings from the environment, and langgraph-api's
own loader accepts it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.studio import make_saver
from checkpointer import AsyncRedisSaver

REPO = Path(__file__).resolve().parents[2]


async def test_make_saver_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("CHECKPOINT_TTL_MINUTES", "90")
    monkeypatch.setenv("CHECKPOINT_REFRESH_ON_READ", "false")
    async with make_saver() as saver:
        assert isinstance(saver, AsyncRedisSaver)
        assert saver.ttl_ms == 90 * 60_000 and not saver.context().refresh_on_read
        assert await saver.client.ping()
    monkeypatch.delenv("CHECKPOINT_TTL_MINUTES")
    async with make_saver() as saver:
        assert saver.ttl_ms == 0


@pytest.mark.slow
def test_langgraph_api_loads_the_factory(redis_url: str) -> None:
    """What `langgraph dev` does with {"checkpointer": {"path": "./app/studio.py:
    make_saver"}}, in a subprocess (langgraph-api configures itself from the environment)."""
    script = textwrap.dedent(
        """
        import asyncio
        from langgraph_api._checkpointer import _adapter

        async def main():
            value = _adapter._load_checkpointer("./app/studio.py:make_saver")
            async with _adapter._yield_checkpointer(value) as saver:
                caps = _adapter.CheckpointerCapabilities.from_type(type(saver))
                print(type(saver).__name__, caps.has_adelete_thread, caps.has_adelete_for_runs,
                      caps.has_acopy_thread, caps.has_aprune)

        asyncio.run(main())
        """
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "REDIS_URL": redis_url,
        "REDIS_URI": "fake",
        "DATABASE_URI": ":memory:",
        "MIGRATIONS_PATH": "__inmem",
        "LANGGRAPH_RUNTIME_EDITION": "inmem",
        "LANGGRAPH_CHECKPOINTER": '{"path": "./app/studio.py:make_saver"}',
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-5:] == ["AsyncRedisSaver", "True", "True", "True", "True"]
