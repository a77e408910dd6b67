"""What a person sees in agent-chat-ui, checked with the JS SDK's own client-side logic.

`harness.mjs` (beside this file) drives `@langchain/langgraph-sdk`'s `StreamOrchestrator`
(the logic under `useStream`, which agent-chat-ui renders) with agent-chat-ui's request shapes,
against a real API process started here (its own redis-server, the machine's Postgres, no
model). It checks: the message list never loses a conversation message while a run streams;
regenerate runs the agent that answered again; an edit shows a branch switcher within the 10
checkpoints the UI reads (also after a reload); an agent's name as the Assistant ID lists its
threads, and the no-model reply suggests what works in agent-chat-ui; an analytics answer shows
its chart (a markdown image on a signed link that loads without the API key).

The SDK comes from the npm registry: `npm ci` in tests/ui_harness, which `.ci/run` runs first
and this test runs itself when the packages are missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer, free_port

HERE = Path(__file__).parent
KEY = "ui-key-0123456789"
NODE = shutil.which("node")
#: The harness's own bound: four scenarios of a few runs each, on a loaded 2-core machine.
HARNESS_TIMEOUT_SECONDS = 900

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed: the agent-chat-ui harness runs the JS SDK"
)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[ApiProcess]:
    folder = tmp_path_factory.mktemp("ui-harness")
    redis_server = RedisServer(port=free_port(), workdir=folder / "redis")
    redis_server.start()
    env = {
        "REDIS_URL": redis_server.url,
        "DATABASE_URL": postgres_url,
        "DATA_DIR": str(folder / "data"),
        "API_KEYS": KEY,
        "LLM_PROVIDER": "none",
        "HF_HUB_OFFLINE": "1",
        "RUN_HEARTBEAT_SECONDS": "0.3",
        "LOG_LEVEL": "INFO",
    }
    process = ApiProcess(env, log_path=folder / "api.log").start(timeout=180)
    yield process
    process.stop()
    redis_server.stop()


def test_what_a_person_sees_in_agent_chat_ui(api: ApiProcess) -> None:
    assert NODE is not None
    if not (HERE / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        # The README's test command is the whole set-up: install the pinned packages (npm
        # registry, package-lock.json) the first time, as `.ci/run` does before the suite.
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(
                "npm is not installed: install Node.js's npm, or run `npm ci` in tests/ui_harness"
            )
        installed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=HARNESS_TIMEOUT_SECONDS,
            check=False,
        )
        assert installed.returncode == 0, (
            f"`npm ci` in tests/ui_harness failed: {installed.stderr[-2000:]}"
        )
    done = subprocess.run(
        [NODE, "harness.mjs", "--url", api.url, "--api-key", KEY],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=HARNESS_TIMEOUT_SECONDS,
        check=False,
    )
    print(done.stdout)  # the harness's report: what each scenario saw (pytest -s shows it)
    lines = done.stdout.strip().splitlines()
    assert lines, f"the harness printed nothing; stderr:\n{done.stderr}"
    summary = json.loads(lines[-1])
    assert set(summary["results"]) == {"conversation", "regenerate", "edit", "by-name", "chart"}
    assert done.returncode == 0 and summary["ok"], (
        "what a person would see in agent-chat-ui is wrong:\n"
        + "\n".join(summary["failures"])
        + f"\n\n{done.stdout}\n{done.stderr}"
    )
