"""The embedded servers' owner rule (tools/embedded.py), with real processes on one DATA_DIR.

The API (`main.py serve`) and Studio (`langgraph dev`) share the embedded Redis and Postgres;
whichever stops last stops them, in either order. An API killed with SIGKILL leaves its servers
running; the next start adopts them, and once that one stops nothing is left. Processes that
start at once start ONE server of each kind; a killed user never keeps a server alive.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest
import redis

from tests.support.pgvector import reachable_dir
from tests.support.processes import REPO, ApiProcess, StudioProcess
from tools.embedded import EmbeddedPostgres, EmbeddedRedis, Users

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

KINDS = ("redis", "postgres")

#: A process that uses both servers until its stdin says "release" (it releases them) or
#: closes (it exits, leaving the release to its exit hook); it prints the servers' pids first.
USER = """
import sys
from pathlib import Path
from tools.embedded import EmbeddedPostgres, EmbeddedRedis

uses = [EmbeddedRedis(Path(sys.argv[1])), EmbeddedPostgres(Path(sys.argv[1]))]
print(" ".join(str(use.pid) for use in uses), flush=True)
if sys.stdin.readline().strip() == "release":
    for use in uses:
        use.release()
"""


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A DATA_DIR the embedded Postgres's own system user can reach (tests run as root)."""
    root = reachable_dir("sy-owner-")
    yield root / "data"
    _stop_leftovers(root / "data")
    shutil.rmtree(root, ignore_errors=True)


def embedded_env(data_dir: Path) -> dict[str, str]:
    """Embedded defaults: no server URL, one DATA_DIR, no model."""
    return {
        "DATA_DIR": str(data_dir),
        "REDIS_URL": "",
        "DATABASE_URL": "",
        "QDRANT_URL": "",
        "LLM_PROVIDER": "none",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def server_pids(data_dir: Path) -> dict[str, int]:
    """The pids of the embedded servers of `data_dir` that run (from their pid files)."""
    found: dict[str, int] = {}
    files = {
        "redis": (data_dir / "redis" / "redis.pid", "redis-server"),
        "postgres": (data_dir / "postgres" / "postmaster.pid", "postgres"),
    }
    for kind, (path, name) in files.items():
        try:
            pid = int(path.read_text().splitlines()[0])
            if psutil.Process(pid).name() == name:
                found[kind] = pid
        except (FileNotFoundError, IndexError, ValueError, psutil.Error):
            pass
    return found


def users(data_dir: Path) -> dict[str, list[int]]:
    return {kind: Users(data_dir, kind).pids() for kind in KINDS}


def assert_nothing_runs(data_dir: Path, before: dict[str, int]) -> None:
    """No server of `data_dir` runs: not the ones seen before, no pid file names one, and
    nothing answers on their sockets; no process is registered."""
    assert server_pids(data_dir) == {}
    assert not any(psutil.pid_exists(pid) for pid in before.values()), before
    assert not (data_dir / "postgres" / "postmaster.pid").exists()
    socket = data_dir / "redis" / "redis.sock"
    with pytest.raises(redis.ConnectionError):
        redis.Redis(unix_socket_path=str(socket), socket_timeout=5).ping()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://postgres:@/postgres?host={data_dir / 'postgres'}").close()
    assert users(data_dir) == {"redis": [], "postgres": []}


def _stop_leftovers(data_dir: Path) -> None:
    """After a failed test: stop what it left running (a passing test leaves nothing)."""
    for pid in server_pids(data_dir).values():
        try:
            process = psutil.Process(pid)
            process.terminate()
            process.wait(60)
        except psutil.Error:
            pass


# --- The API and Studio -----------------------------------------------------------------------


def build_the_graph(studio: StudioProcess) -> None:
    """Ask Studio for the graph's drawing: it builds the graph (opening its engines) first."""
    with httpx.Client(base_url=studio.url, timeout=300) as client:
        found = client.post("/assistants/search", json={"graph_id": "switchyard"})
        assert found.status_code == 200 and found.json(), found.text
        drawing = client.get(f"/assistants/{found.json()[0]['assistant_id']}/graph")
        assert drawing.status_code == 200, drawing.text


@pytest.mark.parametrize("first", ["api", "studio"])
def test_the_last_of_the_api_and_studio_to_stop_stops_both_servers(
    first: str, data_dir: Path, tmp_path: Path
) -> None:
    env = embedded_env(data_dir)
    api = ApiProcess(env, log_path=tmp_path / "api.log")
    studio = StudioProcess(env, log_path=tmp_path / "studio.log")
    try:
        api.start(timeout=300)
        started = server_pids(data_dir)
        assert set(started) == set(KINDS)
        studio.start(timeout=300)
        build_the_graph(studio)  # Studio opens its engines (uses both servers) with the graph
        assert studio.process is not None and api.process is not None
        both = sorted([api.process.pid, studio.process.pid])
        assert {kind: sorted(pids) for kind, pids in users(data_dir).items()} == {
            kind: both for kind in KINDS
        }
        assert server_pids(data_dir) == started  # Studio attached: one server of each kind

        one, other = (api, studio) if first == "api" else (studio, api)
        one.stop(timeout=120)
        # the other one still uses them: both keep running
        assert server_pids(data_dir) == started
        assert all(len(pids) == 1 for pids in users(data_dir).values())
        other.stop(timeout=120)
    finally:
        api.kill()
        studio.kill()
    assert_nothing_runs(data_dir, started)


# --- A killed API --------------------------------------------------------------------------


def test_the_next_start_adopts_a_killed_apis_servers(data_dir: Path, tmp_path: Path) -> None:
    env = embedded_env(data_dir)
    log = tmp_path / "api.log"
    killed = ApiProcess(env, log_path=log).start(timeout=300)
    started = server_pids(data_dir)
    assert set(started) == set(KINDS)
    killed.kill()  # SIGKILL: nothing of it runs, its servers keep running
    assert server_pids(data_dir) == started

    api = ApiProcess(env, log_path=log)
    try:
        api.start(timeout=300)
        # adopted (they answer), not started again; the registry names only the live API
        assert server_pids(data_dir) == started
        assert api.process is not None
        assert users(data_dir) == {kind: [api.process.pid] for kind in KINDS}
        assert "adopting the embedded Redis" in log.read_text()
        assert "adopting the embedded Postgres" in log.read_text()
        api.stop(timeout=120)
    finally:
        api.kill()
    assert_nothing_runs(data_dir, started)


# --- Lighter users: the rule itself ---------------------------------------------------------


def start_user(data_dir: Path) -> tuple[subprocess.Popen[str], dict[str, int]]:
    """A process using both servers, once it has started (or attached to) them."""
    process = subprocess.Popen(
        [sys.executable, "-c", USER, str(data_dir)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until its servers answer
    assert line, f"the user process failed ({process.wait()})"
    redis_pid, postgres_pid = (int(pid) for pid in line.split())
    return process, {"redis": redis_pid, "postgres": postgres_pid}


def end_user(process: subprocess.Popen[str], how: str) -> None:
    """'release' the servers, 'exit' without releasing (the exit hook does), or 'kill'."""
    assert process.stdin is not None
    if how == "kill":
        process.kill()
    else:
        process.stdin.write("release\n" if how == "release" else "\n")
        process.stdin.flush()
    assert process.wait(timeout=180) == (-9 if how == "kill" else 0)


def test_processes_starting_at_once_share_one_server_of_each_kind(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    processes: list[subprocess.Popen[str]] = []
    try:
        for _ in range(3):  # all wait on the lock together; the first starts, the others attach
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", USER, str(data_dir)],
                    cwd=REPO,
                    env={**os.environ, "PYTHONPATH": str(REPO)},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        seen = {process.stdout.readline() for process in processes if process.stdout}
        assert len(seen) == 1 and "" not in seen, seen
        started = server_pids(data_dir)
        assert seen == {f"{started['redis']} {started['postgres']}\n"}
        for process, how in zip(processes, ("release", "exit", "release"), strict=True):
            end_user(process, how)
            if process is not processes[-1]:
                assert server_pids(data_dir) == started  # the others still use them
    finally:
        for process in processes:
            process.kill()
            process.wait()
    assert_nothing_runs(data_dir, started)


def test_a_killed_user_never_keeps_the_servers_alive(data_dir: Path) -> None:
    killed, started = start_user(data_dir)
    survivor, attached = start_user(data_dir)
    assert attached == started
    end_user(killed, "kill")
    assert server_pids(data_dir) == started
    end_user(survivor, "release")  # the last LIVE user: it stops them
    assert_nothing_runs(data_dir, started)


def test_a_reused_pid_is_not_taken_for_a_user(data_dir: Path) -> None:
    """An entry whose pid now names another process (this one, started at another time) is
    pruned: it keeps nothing alive."""
    user, started = start_user(data_dir)
    for kind in KINDS:
        registry = Users(data_dir, kind).path
        entries = registry.read_text().replace("[", f'[{{"pid": {os.getpid()}, "started": 1.0}}, ')
        registry.write_text(entries)
    end_user(user, "release")
    assert_nothing_runs(data_dir, started)


def test_a_use_in_this_process_is_one_more_user(data_dir: Path) -> None:
    """Uses inside one process count: the server stops when the last one is released."""
    first, second = EmbeddedRedis(data_dir), EmbeddedPostgres(data_dir)
    third = EmbeddedRedis(data_dir)
    started = server_pids(data_dir)
    assert first.pid == third.pid == started["redis"] and second.pid == started["postgres"]
    first.release()
    first.release()  # idempotent: it does not release the other use
    assert server_pids(data_dir) == started
    third.release()
    assert server_pids(data_dir) == {"postgres": started["postgres"]}
    second.release()
    assert_nothing_runs(data_dir, started)
