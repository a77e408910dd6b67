"""Cold and warm throughput of ``POST /api/v1/analyze`` end to end, beside the ast floor.

``python -m bench.analysis_api [--suite DIR] [--repeats N]`` starts a real API process
(``main.py serve``, embedded storage in a temporary DATA_DIR, no chat model), sends a whole
test suite as one rules-only request over HTTP and times the answer: JSON in, validation,
the graph, JSON out. By default the suite is pytest's ``testing/`` folder from its sdist (the
anchor of issue 12: 72,774 lines took 3.05 s cold = 24,000 lines/s; issue 29: 59.6-72.8k
lines/s cold; target cold >= 120,000 lines/s, warm >= 300,000).

- cold: nothing of the request is in the parse cache. The cache key includes the path, so
  each cold run sends the same files under a fresh folder prefix (same content and lines);
- warm: the same request again (parse-cache and rule-memo hits);
- floor: ``ast.parse`` + a full ``ast.walk`` of the same files in this process, interleaved
  with the requests so machine load hits both;
- RSS: the service's resident memory (``/proc/<pid>/status``) after the first cold request and
  at the end; the load average is printed at the start and at the end.
"""

from __future__ import annotations

import argparse
import ast
import gc
import glob
import json
import os
import tempfile
import time
from pathlib import Path

import httpx

from bench.precision import DEFAULT_CACHE, Suite, fetch
from tests.support.processes import ApiProcess

ANCHOR = Suite("pytest", "9.2.0", "testing", "anchor")
TARGET_LPS = 120_000  # issue 29 (cold)
WARM_TARGET_LPS = 300_000  # issue 29 (warm)
ISSUE29_COLD_LPS = (59_600, 72_800)  # issue 29's anchor: cold through the API before
REFERENCE_FLOOR_LPS = 160_000  # ast.parse + walk of pytest's testing/ on the reference box
ISSUE_COLD_S, ISSUE_LINES = 3.05, 72_774


def load(directory: Path) -> list[tuple[str, str]]:
    """(relative path, text) of every ``*.py`` below ``directory``."""
    out = []
    for path in sorted(glob.glob(str(directory / "**" / "*.py"), recursive=True)):
        try:
            out.append((os.path.relpath(path, directory), Path(path).read_text("utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def floor(files: list[tuple[str, str]]) -> tuple[float, float]:
    """Seconds (wall, CPU of this process) for ``ast.parse`` + ``ast.walk`` of every file."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    for _, text in files:
        for _ in ast.walk(ast.parse(text)):
            pass
    return time.perf_counter() - start, time.process_time() - cpu


def body(files: list[tuple[str, str]], prefix: str) -> bytes:
    payload = {
        "files": [{"path": f"{prefix}{path}", "content": text} for path, text in files],
        "mode": "rules-only",
        "config": {"max_findings": None},
    }
    return json.dumps(payload).encode()


def main(argv: list[str] | None = None) -> None:
    """Run the bench and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.analysis_api", description=__doc__)
    parser.add_argument("--suite", type=Path, help="a folder of test files (default: pytest's)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="sdist cache dir")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    suite_dir = args.suite or fetch(ANCHOR, args.cache) / ANCHOR.tests
    files = load(suite_dir)
    load_start = _load_average()
    size = sum(len(t.encode()) for _, t in files)
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            "DATA_DIR": data_dir,
            "LLM_PROVIDER": "none",
            "LOG_LEVEL": "WARNING",
            "MAX_REQUEST_BYTES": str(max(size * 2, 10 << 20)),
            "MAX_FILES": str(max(len(files) + 1, 1000)),
            "RATE_LIMIT_PER_MINUTE": "10000",
        }
        api = ApiProcess(env, log_path=Path(data_dir) / "api.log").start(timeout=300)
        try:
            assert api.process is not None
            rows = run(api.url, files, args.repeats, api.process.pid)
        finally:
            api.stop()
    report(suite_dir, files, rows, (load_start, _load_average()))


def _load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; NaN elsewhere).

    On a loaded machine wall time measures the neighbours as much as the service; the CPU the
    service spent on a request does not depend on how long it waited for a core.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (Linux ``/proc``; NaN elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run(url: str, files: list[tuple[str, str]], repeats: int, pid: int) -> dict[str, list[float]]:
    """Interleaved floor, cold and warm runs: seconds per run (and the service's RSS)."""
    times: dict[str, list[float]] = {
        "floor": [], "cold": [], "warm": [], "rss": [], "floor_cpu": [], "cold_cpu": [],
        "warm_cpu": [],
    }  # fmt: skip
    lines = None
    with httpx.Client(base_url=url, timeout=600) as client:

        def post(payload: bytes, label: str) -> None:
            nonlocal lines
            cpu = cpu_seconds(pid)
            start = time.perf_counter()
            response = client.post(
                "/api/v1/analyze", content=payload, headers={"content-type": "application/json"}
            )
            seconds = time.perf_counter() - start
            times[f"{label}_cpu"].append(cpu_seconds(pid) - cpu)
            times[label].append(seconds)
            response.raise_for_status()
            lines = response.json()["metrics"]["lines_analyzed"]

        post(body(files[:3], "warmup/"), "warm")  # imports and first-request set-up
        times["warm"].clear()
        times["warm_cpu"].clear()
        times["rss"].append(rss_mb(pid))
        for i in range(repeats):
            wall, cpu = floor(files)
            times["floor"].append(wall)
            times["floor_cpu"].append(cpu)
            cold = body(files, f"cold{i}/")
            post(cold, "cold")
            if i == 0:
                times["rss"].append(rss_mb(pid))
            post(cold, "warm")
        times["rss"].append(rss_mb(pid))
    times["lines"] = [float(lines or 0)]
    return times


def report(
    suite_dir: Path,
    files: list[tuple[str, str]],
    rows: dict[str, list[float]],
    load_avg: tuple[float, float],
) -> None:
    lines = int(rows["lines"][0])
    print(
        f"POST /api/v1/analyze end to end on {suite_dir} ({len(files)} files, {lines:,} lines), "
        f"{os.cpu_count()} cores, load average {load_avg[0]:.2f} at start, "
        f"{load_avg[1]:.2f} at end"
    )
    best_floor = min(rows["floor"])
    for label in ("floor", "cold", "warm"):
        values = rows[label]
        best = min(values)
        name = {
            "floor": "floor: ast.parse + ast.walk (this process)",
            "cold": "API cold (nothing cached), best",
            "warm": "API warm (same request again), best",
        }[label]
        print(
            f"    {name:45} {best:7.3f} s {lines / best:>10,.0f} lines/s "
            f"{best / best_floor:5.2f} x floor   (runs: {', '.join(f'{v:.3f}' for v in values)})"
        )
    cold = min(rows["cold"])
    warm = min(rows["warm"])
    ratio = cold / best_floor
    verdict = "met" if lines / cold >= TARGET_LPS else "NOT met"
    print(
        f"    target: cold >= {TARGET_LPS:,} lines/s end to end: best cold {lines / cold:,.0f} "
        f"lines/s -> {verdict} here; at {ratio:.2f} x floor that is "
        f"{REFERENCE_FLOOR_LPS / ratio:,.0f} lines/s where the floor is "
        f"{REFERENCE_FLOOR_LPS:,} lines/s (SMELLS.md's 2-core reference box)"
    )
    print(
        f"    target: warm >= {WARM_TARGET_LPS:,} lines/s: best warm {lines / warm:,.0f} lines/s "
        f"-> {'met' if lines / warm >= WARM_TARGET_LPS else 'NOT met'}"
    )
    floor_cpu, cold_cpu, warm_cpu = (min(rows[k]) for k in ("floor_cpu", "cold_cpu", "warm_cpu"))
    print(
        f"    CPU seconds (load-independent): floor {floor_cpu:.3f} s; service cold "
        f"{cold_cpu:.3f} s = {lines / cold_cpu:,.0f} lines per CPU-s, {cold_cpu / floor_cpu:.2f} x "
        f"floor -> {REFERENCE_FLOOR_LPS * floor_cpu / cold_cpu:,.0f} lines/s where the floor is "
        f"{REFERENCE_FLOOR_LPS:,}; warm {warm_cpu:.3f} s = {lines / warm_cpu:,.0f} lines per CPU-s"
    )
    before, after_cold, end = rows["rss"]
    print(
        f"    service RSS: {before:,.0f} MiB before, {after_cold:,.0f} MiB after the first cold "
        f"request, {end:,.0f} MiB at the end"
    )
    low, high = ISSUE29_COLD_LPS
    print(f"    anchor (issue 29): cold {low:,}-{high:,} lines/s through the API before")
    print(
        f"    anchor (issue 12): {ISSUE_LINES:,} lines cold in {ISSUE_COLD_S} s = "
        f"{ISSUE_LINES / ISSUE_COLD_S:,.0f} lines/s; now {cold / ISSUE_COLD_S * 100:.0f}% of that "
        "time for this suite"
    )


if __name__ == "__main__":
    main()
