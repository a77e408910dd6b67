"""Sessions outlive API processes: state is in Redis, not in the process."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.processes import ApiProcess
from tests.support.stub_openai import StubOpenAI


@pytest.mark.slow
def test_the_second_turn_sees_the_first_after_a_restart(
    tmp_path: Path, redis_url: str, postgres_url: str, stub_openai: StubOpenAI
) -> None:
    env = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(tmp_path / "data"),
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": stub_openai.base_url,
        "HF_HUB_OFFLINE": "1",
    }
    api = ApiProcess(env, log_path=tmp_path / "api.log").start()
    try:
        first = httpx.post(f"{api.url}/chat", json={"message": "hello, I am Grace"}, timeout=30)
        assert first.status_code == 200
        session = first.json()["session_id"]
    finally:
        api.stop()

    api = ApiProcess(env, log_path=tmp_path / "api.log").start()
    try:
        second = httpx.post(
            f"{api.url}/chat",
            json={"message": "thanks, do you remember me?", "session_id": session},
            timeout=30,
        )
        summary = httpx.get(f"{api.url}/session/{session}", timeout=10).json()
    finally:
        api.stop()
    assert second.status_code == 200 and second.json()["turn"] == 2
    sent = [m.get("content") for m in stub_openai.requests[-1]["messages"]]
    assert "hello, I am Grace" in sent  # the new process sent the first turn to the model
    assert summary["turns"] == 2
    assert [m["content"] for m in summary["last_messages"] if m["role"] == "user"] == [
        "hello, I am Grace",
        "thanks, do you remember me?",
    ]
