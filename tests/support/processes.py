"""Real server processes for tests: `python main.py serve` (the API) and `langgraph dev`
(Studio), started from the repo; wait until they answer, stop or kill them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ApiProcess:
    """One `main.py serve` process (or `python -m <module> --port P`) with its own
    environment."""

    env: dict[str, str]
    port: int = field(default_factory=free_port)
    log_path: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    module: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0) -> ApiProcess:
        env = {**os.environ, **self.env, "PYTHONPATH": str(REPO)}
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        command = (
            ["-m", self.module, "--port", str(self.port)]
            if self.module
            else ["main.py", "serve", "--port", str(self.port)]
        )
        self.process = subprocess.Popen(
            [sys.executable, *command],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"API exited with {self.process.returncode}; see {self.log_path}"
                )
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise TimeoutError(f"API on port {self.port} not healthy after {timeout} s")

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful stop (SIGTERM), as an operator would."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: the process dies mid-whatever, as in a crash."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        self.process = None


@dataclass
class StudioProcess:
    """One `langgraph dev` process (LangGraph Studio's server) serving langgraph.json, offline,
    with its own environment on top of this one's."""

    env: dict[str, str]
    log_path: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> StudioProcess:
        binary = Path(sys.executable).with_name("langgraph")
        if not binary.exists():
            binary = Path(shutil.which("langgraph") or "langgraph")
        env = {
            **os.environ,
            "LLM_PROVIDER": "none",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "HF_HUB_OFFLINE": "1",
            **self.env,
            "PYTHONPATH": str(REPO),
        }
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [str(binary), "dev", "--no-browser", "--no-reload", "--port", str(self.port)],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"langgraph dev exited with {self.process.returncode}:\n"
                    + self.log_path.read_text()[-3000:]
                )
            try:
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError("langgraph dev did not come up")
            time.sleep(0.5)

    def stop(self, timeout: float = 20.0) -> None:
        """Graceful stop (SIGTERM), as Ctrl-C or an operator would."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: the process dies mid-whatever, as in a crash."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait()
        self.process = None
