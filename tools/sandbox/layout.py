"""What the sandbox sees: the bubblewrap command line (namespaces, mounts, environment).

Inside the sandbox there is: the system's `/usr` (and the `/lib*`, `/bin` links or binds),
read-only; the Python interpreter's own prefix, read-only, with its site-packages hidden; the
allowed distributions (`SANDBOX_PACKAGES` plus their dependencies), each bound read-only under
`/opt/site`; the execution's input directory, read-only at `/sandbox`; a private size-capped
tmpfs at `/tmp` (the only writable place); a fresh `/proc` (its own pid namespace) and a minimal
`/dev`. The root is a read-only tmpfs: no `/etc`, `/home`, `/root`, `/work`, `/var`, `/run`, no
project file and no socket of the host exist there. The environment is cleared and rebuilt
from a few fixed variables. Namespaces: mount, pid, network (only a loopback of its own), ipc,
uts, cgroup; plus a user namespace when the server does not run as root (see `Mode`).
"""

from __future__ import annotations

import glob
import importlib.metadata as metadata
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from tools.sandbox.errors import SandboxUnavailable

SITE_DIR = "/opt/site"
INPUT_DIR = "/sandbox"

#: Environment of the sandboxed process: nothing of the server's, one thread per math library.
SANDBOX_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


class Mode(StrEnum):
    """How the sandbox gets an unprivileged process.

    - `userns`: the server is not root. bubblewrap runs unprivileged and puts the code in a new
      user namespace as uid 65534 with no capabilities (needs unprivileged user namespaces).
    - `root-drop`: the server is root. bubblewrap runs as root WITHOUT a user namespace (its
      mounts need root's right to read paths such as a Python under /root), keeps only
      CAP_SETUID/CAP_SETGID, and the runner drops to `SANDBOX_UID` (a real, unprivileged host
      uid, so RLIMIT_NPROC applies and nothing owned by root is writable) before the user's
      code runs. A user namespace here would only map the code to host root.
    """

    USERNS = "userns"
    ROOT_DROP = "root-drop"


@dataclass(frozen=True)
class Layout:
    """The host paths the sandbox binds, resolved once per process."""

    python: str
    prefix: str
    site_entries: tuple[tuple[str, str], ...]
    hidden_site_dirs: tuple[str, ...]
    preload: tuple[str, ...]


def _distribution_closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    seen: dict[str, metadata.Distribution] = {}
    queue = list(names)
    while queue:
        name = queue.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in names:
                raise SandboxUnavailable(
                    f"SANDBOX_PACKAGES names {name!r}, which is not installed: pip install "
                    f"{name} (or remove it from SANDBOX_PACKAGES)"
                ) from None
            continue  # an optional dependency for another platform
        seen[key] = dist
        for text in dist.requires or []:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(requirement.name)
    return list(seen.values())


def _top_level_entries(dist: metadata.Distribution) -> list[Path]:
    base = Path(str(dist.locate_file("")))
    entries = {Path(str(f)).parts[0] for f in dist.files or [] if Path(str(f)).parts}
    return [base / e for e in sorted(entries) if e not in ("..", "__pycache__")]


def _import_names(dist: metadata.Distribution) -> list[str]:
    top_level = dist.read_text("top_level.txt")
    if top_level:
        return [line.strip() for line in top_level.splitlines() if line.strip()]
    names = []
    for entry in _top_level_entries(dist):
        stem = entry.name.removesuffix(".py")
        if stem.isidentifier() and (entry.is_dir() and (entry / "__init__.py").exists()):
            names.append(stem)
        elif entry.suffix == ".py" and stem.isidentifier():
            names.append(stem)
    return names


@lru_cache(maxsize=8)
def allowed_import_names(packages: tuple[str, ...]) -> frozenset[str]:
    """Top-level modules the sandboxed code may import besides the standard library."""
    names: set[str] = set()
    for dist in _distribution_closure(packages):
        names.update(_import_names(dist))
    return frozenset(names)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


@lru_cache(maxsize=8)
def resolve_layout(packages: tuple[str, ...]) -> Layout:
    """The interpreter, its prefix and the allowed distributions' files on this host."""
    python = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    entries: list[tuple[str, str]] = []
    for dist in _distribution_closure(packages):
        for entry in _top_level_entries(dist):
            if entry.exists():
                entries.append((str(entry), f"{SITE_DIR}/{entry.name}"))
    preload: list[str] = []
    for name in packages:
        preload += _import_names(metadata.distribution(name))
    bound = ("/usr", prefix)
    candidates = set(site.getsitepackages())
    for key in ("purelib", "platlib"):
        candidates.add(sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})[key])
    # Distribution Pythons keep packages under /usr too (Debian: dist-packages).
    for pattern in ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages"):
        candidates.update(glob.glob(pattern))
    hidden = tuple(
        sorted(
            real
            for real in {os.path.realpath(c) for c in candidates}
            if os.path.isdir(real) and _under(real, bound)
        )
    )
    return Layout(
        python=python,
        prefix=prefix,
        site_entries=tuple(sorted(set(entries))),
        hidden_site_dirs=hidden,
        preload=tuple(preload),
    )


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    if os.path.exists("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def bwrap_command(
    bwrap: str,
    layout: Layout,
    input_dir: str,
    *,
    mode: Mode,
    tmp_bytes: int,
) -> list[str]:
    """The full bubblewrap command that runs the runner on `input_dir`."""
    args = [bwrap]
    if mode is Mode.USERNS:
        args += ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534"]
        args += ["--disable-userns", "--cap-drop", "ALL"]
    else:
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += _system_binds()
    if not _under(layout.prefix, ("/usr",)):
        # bubblewrap gives created parents the host's modes (/root is 0700): open them up, so
        # the unprivileged code can reach the interpreter's files.
        for parent in reversed(Path(layout.prefix).parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", layout.prefix, layout.prefix]
    for hidden in layout.hidden_site_dirs:
        args += ["--tmpfs", hidden]
    args += ["--dir", SITE_DIR]
    for host_path, sandbox_path in layout.site_entries:
        args += ["--ro-bind", host_path, sandbox_path]
    args += ["--ro-bind", input_dir, INPUT_DIR]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
    for key, value in SANDBOX_ENV.items():
        args += ["--setenv", key, value]
    args += [layout.python, "-I", "-S", "-B", f"{INPUT_DIR}/runner.py"]
    return args


def current_mode() -> Mode:
    """`root-drop` when this process is root, else `userns`."""
    return Mode.ROOT_DROP if os.geteuid() == 0 else Mode.USERNS
