"""Sandbox overhead bench: ``python -m bench.sandbox [--runs N]``.

Per-execution wall time, median of N runs each (interleaved, so load from other processes on
the shared machine hits all of them alike), of:
- `in-process`: the same function called in this process (its data already loaded) — the
  floor, what running untrusted code unsafely would cost;
- `python -c pass`: a bare subprocess of this interpreter (`-I -S`) that does nothing — the
  anchor: the price of any process;
- `python + pandas`: a subprocess of the same interpreter, flags (`-I -S -B`), packages and
  thread settings as the sandbox's runner that imports pandas and numpy — what the runner
  loads, without namespaces, limits or data;
- `sandbox, stdlib`: `Sandbox.run` of `def f(): return 1` in a sandbox allowing no packages:
  the mechanism alone (temp dir, bubblewrap namespaces and mounts, the runner's rlimits, uid
  drop and seccomp filter, the JSON result back, clean-up) — compare with `python -c pass`;
- `sandbox`: `Sandbox.run` of the function on a 1,000-row DataFrame with pandas allowed (the
  default): the above plus importing pandas/numpy and unpickling the data — compare with
  `python + pandas`.
Printed: median and p90 wall time per variant, and the sandbox's overhead over each anchor.
(The runner ends with `os._exit` after writing its result, skipping interpreter teardown,
which the `python + pandas` anchor pays: the sandbox can come out below that anchor.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from tools.sandbox import Sandbox, SandboxLimits
from tools.sandbox.layout import current_mode, resolve_layout

CODE = '''
import pandas as pd


def by_region(df: pd.DataFrame) -> pd.DataFrame:
    """Total amount per region."""
    return df.groupby("region", as_index=False)["amount"].sum()
'''


def _frame(rows: int = 1000) -> pd.DataFrame:
    regions = ["north", "south", "east", "west"]
    return pd.DataFrame(
        {"region": [regions[i % 4] for i in range(rows)], "amount": [i * 0.5 for i in range(rows)]}
    )


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per variant (median)")
    args = parser.parse_args()

    sandbox = Sandbox(SandboxLimits())
    sandbox.ensure_available()
    bare_sandbox = Sandbox(SandboxLimits(packages=()))
    bare_sandbox.ensure_available()
    frame = _frame()
    namespace: dict[str, object] = {}
    exec(compile(CODE, "bench_code.py", "exec"), namespace)
    function = namespace["by_region"]
    python = os.path.realpath(sys.executable)

    def in_process() -> None:
        function(frame)  # type: ignore[operator]

    def bare() -> None:
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)

    # The same packages the sandbox sees (not the whole venv: pandas imports optional
    # dependencies it finds, which would make this anchor slower than the sandbox).
    site = tempfile.mkdtemp(prefix="bench-sandbox-site-")
    for host_path, sandbox_path in resolve_layout(sandbox.limits.packages).site_entries:
        os.symlink(host_path, Path(site) / Path(sandbox_path).name)
    load = f"import sys; sys.path.append({site!r}); import pandas, numpy"

    def with_pandas() -> None:
        env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        subprocess.run([python, "-I", "-S", "-B", "-c", load], check=True, env=env)

    def sandboxed_stdlib() -> None:
        outcome = bare_sandbox.run("def f():\n    return 1\n", "f")
        assert outcome.success, outcome.error

    def sandboxed() -> None:
        outcome = sandbox.run(CODE, "by_region", frame)
        assert outcome.success, outcome.error

    variants = {
        "in-process": in_process,
        "python -c pass": bare,
        "python + pandas": with_pandas,
        "sandbox, stdlib": sandboxed_stdlib,
        "sandbox": sandboxed,
    }
    for call in variants.values():  # warm caches (page cache, seccomp filter, layout)
        call()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, call in variants.items():
            times[name].append(_timed(call))

    print(
        f"Sandbox overhead per execution (median of {args.runs} runs; mode {current_mode()}, "
        f"1,000-row DataFrame, groupby-sum)"
    )
    print(f"{'variant':<16} {'median ms':>10} {'p90 ms':>8}")
    medians = {}
    for name, values in times.items():
        ordered = sorted(values)
        medians[name] = statistics.median(ordered)
        p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
        print(f"{name:<16} {medians[name]:>10.2f} {p90:>8.2f}")
    shutil.rmtree(site, ignore_errors=True)
    stdlib, box = medians["sandbox, stdlib"], medians["sandbox"]
    print(
        f"sandbox mechanism (stdlib) vs python -c pass: {stdlib - medians['python -c pass']:+.1f} "
        f"ms; sandbox with pandas vs python + pandas: {box - medians['python + pandas']:+.1f} ms; "
        f"vs in-process: {box - medians['in-process']:+.1f} ms"
    )


if __name__ == "__main__":
    main()
