"""Real API processes for tests: start `python main.py serve`, wait for health, stop or kill."""

from __future__ import annotations

import os
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

    def start(self, timeout: float = 90.0) -> ApiProcess:
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
