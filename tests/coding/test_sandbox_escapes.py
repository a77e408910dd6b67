"""Untrusted code tries to escape the sandbox; each attempt fails with a clear error, and the
host (this test process) stays healthy: no sandbox process survives, the next run works."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pandas as pd
import pytest
import redis

from tests.coding.conftest import TEST_LIMITS, sandbox_processes
from tools.sandbox import ExecutionOutcome, Sandbox
from tools.sandbox.layout import Mode

REPO = Path(__file__).resolve().parents[2]


def _assert_host_healthy(sandbox: Sandbox) -> None:
    deadline = time.monotonic() + 30
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_processes() == [], "a sandboxed process outlived its run"
    after = sandbox.run("def ok(df):\n    return len(df)\n", "ok", pd.DataFrame({"a": [1, 2]}))
    assert after.success and after.result == {"type": "int", "value": 2}


def _run(sandbox: Sandbox, code: str) -> ExecutionOutcome:
    outcome = sandbox.run(code, "attack", pd.DataFrame({"a": [1]}))
    _assert_host_healthy(sandbox)
    return outcome


def test_no_network_to_the_hosts_redis(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "def attack(df):\n"
        "    with socket.create_connection(('127.0.0.1', 6379), timeout=3) as s:\n"
        "        s.sendall(b'SET sandbox-escaped 1\\r\\n')\n"
        "        return s.recv(100)\n"
    )
    outcome = _run(sandbox, code)
    # seccomp refuses the AF_INET socket itself (EAFNOSUPPORT): no socket, no connection
    assert outcome.status == "error" and outcome.error_type == "OSError"
    assert "[Errno 97]" in (outcome.error or "") and "no network" in (outcome.error or "")
    client = redis.Redis(host="127.0.0.1", port=6379, socket_timeout=3)
    assert client.ping() and client.get("sandbox-escaped") is None


def test_no_network_outside(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "def attack(df):\n"
        "    return socket.create_connection(('192.0.2.1', 80), timeout=3)\n"
    )
    outcome = _run(sandbox, code)
    assert outcome.status == "error" and "no network" in (outcome.error or "")


def test_host_environment_secret_is_invisible(sandbox: Sandbox, host_secret: str) -> None:
    direct = _run(
        sandbox, "import os\ndef attack(df):\n    return os.environ['SWITCHYARD_TEST_SECRET']\n"
    )
    assert direct.status == "error" and direct.error_type == "KeyError"
    assert "SWITCHYARD_TEST_SECRET" in (direct.error or "")
    # Through /proc: the host's processes are not in the sandbox's pid namespace.
    scan = _run(
        sandbox,
        "import os\n"
        "def attack(df):\n"
        f"    host = open('/proc/{os.getpid()}/environ', 'rb').read()\n"
        "    return host\n",
    )
    assert scan.status == "error" and scan.error_type == "FileNotFoundError"
    everything = _run(
        sandbox,
        "import os\n"
        "def attack(df):\n"
        "    found = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        try:\n"
        "            found.append(open(f'/proc/{pid}/environ', 'rb').read().decode())\n"
        "        except OSError:\n"
        "            pass\n"
        "    found.append(str(dict(os.environ)))\n"
        "    if not any('sk-host-secret' in text for text in found):\n"
        "        raise PermissionError('no secret visible')\n"
        "    return found\n",
    )
    assert everything.status == "error" and "no secret visible" in (everything.error or "")
    assert host_secret not in everything.model_dump_json()


def test_project_files_are_invisible(sandbox: Sandbox) -> None:
    target = REPO / "config.py"
    assert target.exists()
    outcome = _run(sandbox, f"def attack(df):\n    return open({str(target)!r}).read()\n")
    assert outcome.status == "error" and outcome.error_type == "FileNotFoundError"
    listing = _run(sandbox, "import os\ndef attack(df):\n    return sorted(os.listdir('/'))\n")
    assert listing.success and listing.result is not None
    assert "work" not in listing.result["value"] and "home" not in listing.result["value"]


@pytest.mark.parametrize("path", ["/usr/evil", "/evil", "/sandbox/evil", "/root/evil"])
def test_writes_outside_the_private_tmp_fail(sandbox: Sandbox, path: str) -> None:
    outcome = _run(sandbox, f"def attack(df):\n    open({path!r}, 'w').write('x')\n    return 1\n")
    assert outcome.status == "error"
    assert outcome.error_type in ("OSError", "PermissionError", "FileNotFoundError")
    assert not Path(path).exists()


def test_private_tmp_is_private_and_capped(sandbox: Sandbox, tmp_path: Path) -> None:
    marker = f"sandbox-marker-{os.urandom(4).hex()}"
    wrote = _run(
        sandbox, f"def attack(df):\n    open('/tmp/{marker}', 'w').write('x')\n    return 1\n"
    )
    assert wrote.success
    assert not (Path("/tmp") / marker).exists()
    big = TEST_LIMITS.tmp_mb * 2
    flood = _run(
        sandbox,
        "def attack(df):\n"
        f"    with open('/tmp/flood', 'wb') as f:\n"
        f"        for _ in range({big}):\n"
        "            f.write(b'x' * 1024 * 1024)\n",
    )
    assert flood.status in ("error", "killed")
    assert "limit" in (flood.error or "")


def test_fork_bomb(sandbox: Sandbox) -> None:
    outcome = _run(sandbox, "import os\ndef attack(df):\n    while True:\n        os.fork()\n")
    assert outcome.status == "error" and outcome.error_type == "PermissionError"
    assert "does not allow starting processes" in (outcome.error or "")


def test_thread_bomb_hits_the_task_limit(sandbox: Sandbox) -> None:
    code = (
        "import threading, time\n"
        "def attack(df):\n"
        "    while True:\n"
        "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    )
    outcome = _run(sandbox, code)
    assert outcome.status == "error" and outcome.error_type == "RuntimeError"
    assert "thread" in (outcome.error or "")


def test_allocating_4_gb(sandbox: Sandbox) -> None:
    outcome = _run(sandbox, "def attack(df):\n    return bytearray(4 * 1024 ** 3)\n")
    assert outcome.status == "error" and outcome.error_type == "MemoryError"
    assert "memory limit" in (outcome.error or "")
    numpy = _run(sandbox, "import numpy as np\ndef attack(df):\n    return np.ones(2**29)\n")
    assert numpy.status == "error" and numpy.error_type in ("MemoryError", "_ArrayMemoryError")


def test_infinite_loop_hits_the_cpu_limit(sandbox: Sandbox) -> None:
    started = time.monotonic()
    outcome = _run(sandbox, "def attack(df):\n    while True:\n        pass\n")
    assert outcome.status == "error" and outcome.error_type == "CpuTimeExceeded"
    assert "CPU-time limit" in (outcome.error or "")
    assert time.monotonic() - started < TEST_LIMITS.timeout_seconds + 30


def test_sleeping_forever_hits_the_wall_clock(sandbox: Sandbox) -> None:
    fast = Sandbox(dataclasses.replace(TEST_LIMITS, timeout_seconds=3.0))
    fast.ensure_available()
    outcome = fast.run("import time\ndef attack():\n    time.sleep(3600)\n", "attack")
    assert outcome.status == "timeout" and outcome.error_type == "TimeoutError"
    assert "wall clock" in (outcome.error or "")
    _assert_host_healthy(sandbox)


@pytest.mark.parametrize(
    "call",
    [
        "subprocess.run(['/usr/bin/id'], capture_output=True)",
        "os.execv('/usr/bin/id', ['id'])",
        "os.posix_spawn('/usr/bin/id', ['id'], {})",
    ],
)
def test_spawning_a_subprocess(sandbox: Sandbox, call: str) -> None:
    outcome = _run(sandbox, f"import os, subprocess\ndef attack(df):\n    return {call}\n")
    assert outcome.status == "error" and outcome.error_type == "PermissionError"
    assert "does not allow starting processes" in (outcome.error or "")


def test_100_mb_of_output(sandbox: Sandbox) -> None:
    code = "import sys\ndef attack(df):\n    sys.stdout.write('x' * (100 * 1024 * 1024))\n"
    outcome = _run(sandbox, code)
    assert outcome.status == "output_limit" and outcome.error_type == "OutputLimitExceeded"
    assert f"more than {TEST_LIMITS.output_bytes} bytes to stdout" in (outcome.error or "")
    assert len(outcome.stdout) <= TEST_LIMITS.output_bytes
    endless = _run(sandbox, "def attack(df):\n    while True:\n        print('spam' * 100)\n")
    assert endless.status == "output_limit"


def test_huge_result_is_capped(sandbox: Sandbox) -> None:
    code = "def attack(df):\n    return 'x' * (10 * 1024 * 1024)\n"
    outcome = _run(sandbox, code)
    # The description truncates long strings, so the result stays small and the call succeeds.
    assert outcome.success and outcome.result is not None
    assert len(outcome.result["value"]) <= 2000


def test_cannot_raise_its_own_limits(sandbox: Sandbox) -> None:
    code = (
        "import resource\n"
        "def attack(df):\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2)\n"
    )
    outcome = _run(sandbox, code)
    assert outcome.status == "error" and outcome.error_type in ("ValueError", "PermissionError")


def test_runs_unprivileged(sandbox: Sandbox) -> None:
    outcome = _run(
        sandbox,
        "import os\n"
        "def attack(df):\n"
        "    status = open('/proc/self/status').read()\n"
        "    keys = ('CapEff', 'NoNewPrivs', 'Seccomp:')\n"
        "    caps = [l for l in status.splitlines() if l.startswith(keys)]\n"
        "    return [os.getuid(), os.geteuid(), caps]\n",
    )
    assert outcome.success and outcome.result is not None
    uid, euid, caps = outcome.result["value"]
    assert uid != 0 and euid != 0
    assert "CapEff:\t0000000000000000" in caps
    assert "NoNewPrivs:\t1" in caps and "Seccomp:\t2" in caps


def test_only_the_allowed_packages_are_importable(sandbox: Sandbox) -> None:
    for module in ("langchain", "pydantic", "redis", "tools.sandbox"):
        outcome = _run(sandbox, f"def attack(df):\n    import {module}\n")
        assert outcome.status == "error" and outcome.error_type == "ModuleNotFoundError"
        assert "allowed packages only" in (outcome.error or "")


NESTED_NAMESPACE = """
import ctypes, os
def attack(df):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER: a way to regain capabilities
        error = ctypes.get_errno()
        raise PermissionError(error, os.strerror(error))
    return "escaped"
"""


def test_no_new_namespaces(sandbox: Sandbox) -> None:
    outcome = _run(sandbox, NESTED_NAMESPACE)
    assert outcome.status == "error" and outcome.error_type == "PermissionError"
    assert "Operation not permitted" in (outcome.error or "")


# The user-namespace mode is what a non-root server gets; forced here (as root, bubblewrap maps
# the code's uid 65534 to root outside, so the task-count limit cannot be shown in this mode).
USERNS_ATTACKS = {
    "network": ("import socket\n"
                "def attack(df):\n    socket.create_connection(('127.0.0.1', 6379))\n",
                "OSError"),
    "fork": ("import os\ndef attack(df):\n    os.fork()\n", "PermissionError"),
    "exec": ("import subprocess\ndef attack(df):\n    subprocess.run(['/usr/bin/id'])\n",
             "PermissionError"),
    "write": ("def attack(df):\n    open('/usr/evil', 'w')\n", "OSError"),
    "project": (f"def attack(df):\n    open({str(REPO / 'config.py')!r})\n", "FileNotFoundError"),
    "memory": ("def attack(df):\n    return bytearray(4 * 1024 ** 3)\n", "MemoryError"),
    "nested-userns": (NESTED_NAMESPACE, "PermissionError"),
}  # fmt: skip


@pytest.fixture(scope="module")
def userns_sandbox() -> Sandbox:
    box = Sandbox(TEST_LIMITS, mode=Mode.USERNS)
    box.ensure_available()
    return box


@pytest.mark.parametrize("attack", sorted(USERNS_ATTACKS))
def test_userns_mode_holds_too(userns_sandbox: Sandbox, attack: str) -> None:
    code, error_type = USERNS_ATTACKS[attack]
    outcome = userns_sandbox.run(code, "attack", pd.DataFrame({"a": [1]}))
    assert outcome.status == "error" and outcome.error_type == error_type, outcome
    _assert_host_healthy(userns_sandbox)
    who = userns_sandbox.run(
        "import os\ndef attack():\n    return [os.getuid(), open('/proc/self/status').read()]\n",
        "attack",
    )
    assert who.result is not None
    uid, status = who.result["value"]
    assert uid == 65534 and "CapEff:\t0000000000000000" in status and "Seccomp:\t2" in status
