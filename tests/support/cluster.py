"""A throwaway Redis Cluster for tests: N masters on free ports, created with redis-cli."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.support.servers import free_port, redis_server_binary, wait_for_port


def free_cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is valid and free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("found no free port pair (port, port + 10000) for a cluster node")


@dataclass
class RedisClusterServers:
    """`masters` redis-server processes joined into one cluster (no replicas, no persistence)."""

    workdir: Path
    masters: int = 3
    binary: str = field(default_factory=redis_server_binary)
    ports: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not on PATH; install redis-tools to create a cluster")
        self.ports = [free_cluster_port() for _ in range(self.masters)]
        for port in self.ports:
            node_dir = self.workdir / str(port)
            node_dir.mkdir(parents=True, exist_ok=True)
            self.processes.append(
                subprocess.Popen(
                    [
                        self.binary,
                        "--bind",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--dir",
                        str(node_dir),
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        f"nodes-{port}.conf",
                        "--cluster-node-timeout",
                        "5000",
                        "--appendonly",
                        "no",
                        "--save",
                        "",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd=node_dir,
                )
            )
        for port in self.ports:
            wait_for_port(port)
        subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in self.ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        self._wait_ok()

    def _wait_ok(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        for port in self.ports:
            client = redis.Redis(port=port)
            try:
                while client.info("cluster").get("cluster_enabled") != 1 or (
                    client.execute_command("CLUSTER", "INFO").decode().find("cluster_state:ok") < 0
                ):
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"cluster node {port} is not ok after {timeout} s")
                    time.sleep(0.1)
            finally:
                client.close()

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()
