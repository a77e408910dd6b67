"""Settings: defaults, aliases, list parsing, and clear errors for invalid values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config import Settings, SettingsError, load_settings, redact_url, setting_specs

REPO = Path(__file__).resolve().parents[2]


def test_defaults_match_the_documented_values() -> None:
    s = Settings(_env_file=None)
    assert s.llm.provider == "auto"
    assert (s.llm.temperature, s.llm.max_tokens, s.llm.timeout_seconds, s.llm.max_retries) == (
        0.1,
        2000,
        30.0,
        3,
    )
    assert (s.knowledge.reflection_max_iterations, s.knowledge.reflection_min_relevant_docs) == (
        2,
        1,
    )
    assert s.knowledge.reflection_doc_score_threshold == 0.5
    assert (s.knowledge.reranker_fetch_k, s.knowledge.retrieval_top_k, s.knowledge.rrf_k) == (
        15,
        4,
        60,
    )
    assert s.state.message_keep_last == 20
    assert (s.api.rate_limit_per_minute, s.api.max_files, s.api.max_request_bytes) == (
        100,
        1000,
        10 * 2**20,
    )
    assert s.storage.redis_url is None and s.storage.database_url is None
    assert not hasattr(s.storage, "qdrant_url")  # personal vectors are in Postgres (pgvector)


def test_deepseek_variables_are_the_openai_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deep")
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "https://api.deepseek.com/v1")
    monkeypatch.setenv("DEEPSEEK_MODEL", "deepseek-chat")
    s = load_settings(_env_file=None)
    assert s.llm.openai_api_key is not None and s.llm.openai_api_key.get_secret_value() == "sk-deep"
    assert s.llm.openai_base_url == "https://api.deepseek.com/v1"
    assert s.llm.openai_model == "deepseek-chat"


def test_lists_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_KEYS", "one, two,,three ")
    monkeypatch.setenv("CORS_ORIGINS", "http://a.example,http://b.example")
    s = load_settings(_env_file=None)
    assert [k.get_secret_value() for k in s.api.api_keys] == ["one", "two", "three"]
    assert s.api.cors_origins == ["http://a.example", "http://b.example"]


def test_dotenv_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("LLM_PROVIDER=none\nRETRIEVAL_TOP_K=7\n")
    monkeypatch.chdir(tmp_path)
    s = load_settings()
    assert s.llm.provider == "none" and s.knowledge.retrieval_top_k == 7


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("LLM_PROVIDER", "gpt", "'auto', 'openai', 'ollama' or 'none'"),
        ("LLM_TEMPERATURE", "hot", "valid number"),
        ("LLM_TEMPERATURE", "3", "less than or equal to 2"),
        ("PORT", "70000", "less than or equal to 65535"),
        ("ENABLE_REFLECTION", "maybe", "valid boolean"),
        ("CHUNK_OVERLAP", "5000", "smaller than CHUNK_SIZE"),
        ("LOG_LEVEL", "LOUD", "'DEBUG', 'INFO', 'WARNING' or 'ERROR'"),
    ],
)
def test_invalid_value_names_the_variable_and_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as info:
        load_settings(_env_file=None)
    message = str(info.value)
    assert f"{variable}:" in message
    assert expected in message
    assert "Fix the variable" in message


def test_invalid_secret_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_KEYS", "supersecretvalue")
    monkeypatch.setenv("LLM_PROVIDER", "nope")
    with pytest.raises(SettingsError) as info:
        load_settings(_env_file=None)
    assert "supersecretvalue" not in str(info.value)


def test_serve_refuses_to_start_on_an_invalid_setting() -> None:
    env = {**os.environ, "LLM_PROVIDER": "bogus", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "main.py", "serve"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "LLM_PROVIDER" in result.stderr and "'auto', 'openai'" in result.stderr


def test_redacted_settings_hide_secrets_and_url_passwords() -> None:
    s = Settings(
        _env_file=None,
        openai_api_key="sk-hidden",
        api_keys="k-hidden",
        database_url="postgresql://app:pw-hidden@db:5432/app",
    )
    shown = repr(s.redacted())
    assert "sk-hidden" not in shown and "k-hidden" not in shown and "pw-hidden" not in shown
    assert "postgresql://app:***@db:5432/app" in shown
    # and the settings' own repr never shows them either
    assert "sk-hidden" not in repr(s)


@given(
    user=st.text(alphabet="abcdefgh", min_size=1, max_size=8),
    password=st.text(alphabet="ABCDEFGHxyz0123456789", min_size=1, max_size=20),
    host=st.sampled_from(["localhost", "db.internal", "10.0.0.5"]),
    port=st.integers(1, 65535),
)
def test_redact_url_never_leaks_the_password(
    user: str, password: str, host: str, port: int
) -> None:
    url = f"redis://{user}:{password}@{host}:{port}/0"
    redacted = redact_url(url)
    assert f":{password}@" not in redacted
    assert redacted == f"redis://{user}:***@{host}:{port}/0"


def test_an_empty_value_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """docker compose passes `${CHECKPOINT_TTL_MINUTES:-}` as an empty string."""
    monkeypatch.setenv("CHECKPOINT_TTL_MINUTES", "")
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    monkeypatch.setenv("RETRIEVAL_TOP_K", "")
    settings = Settings(_env_file=None)
    assert settings.storage.checkpoint_ttl_minutes is None and settings.llm.openai_base_url is None
    assert settings.knowledge.retrieval_top_k == Settings.spec("retrieval_top_k").field.default


def test_config_table_into_a_closed_pipe_is_quiet() -> None:
    """`main.py config --table | head -1`: the reader leaves early; no traceback."""
    done = subprocess.run(
        f"{sys.executable} main.py config --table | head -1",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("| variable |")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_setting_is_read_into_its_group_under_its_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Groups keep every variable name; the environment wins over `.env`, as before."""
    env_file = tmp_path / ".env"
    env_file.write_text("ANALYTICS_ROW_CAP=7\nANALYTICS_PREVIEW_ROWS=9\nDEEPSEEK_MODEL=from-file\n")
    monkeypatch.setenv("ANALYTICS_ROW_CAP", "8")
    s = Settings(_env_file=env_file)
    assert (s.analytics.row_cap, s.analytics.preview_rows) == (8, 9)
    assert s.llm.openai_model == "from-file"


def test_overrides_name_a_setting_by_variable_or_by_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANALYTICS_PREVIEW_ROWS", "30")
    by_variable = load_settings(_env_file=None, analytics_row_cap=5, deepseek_api_key="sk-x")
    by_group = load_settings(_env_file=None, analytics={"row_cap": 5})
    for s in (by_variable, by_group):
        # an override of one field keeps the environment's value of its neighbours
        assert (s.analytics.row_cap, s.analytics.preview_rows) == (5, 30)
    assert by_variable.llm.openai_api_key is not None
    with pytest.raises(SettingsError, match="ANALYTICS_ROW_CAP"):
        load_settings(_env_file=None, analytics_row_cap=0)


def test_every_variable_names_one_setting() -> None:
    variables = [name for spec in setting_specs() for name in spec.variables]
    assert len(variables) == len(set(variables))
    assert Settings.spec("ANALYTICS_ROW_CAP").name == "row_cap"


def test_config_imports_first_without_a_cycle() -> None:
    """config composes tools.<cap>.settings: importing it first, in a fresh interpreter, must
    not run into a package that imports config back at import time."""
    done = subprocess.run(
        [sys.executable, "-c", "import config; config.Settings(_env_file=None)"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
