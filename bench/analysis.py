"""Test-analysis throughput: ``python -m bench.analysis [--suite DIR] [--repeats N]``.

Part (a), rules-only throughput on a real test suite found on this machine (the test folders
shipped inside installed packages, numpy's by default; ``--suite`` points at any directory,
e.g. pytest's own ``testing/`` folder where the anchors were measured), printed beside:

- the floor: plain ``ast.parse`` + ``ast.walk`` of the same files (a pure-Python analyser
  cannot beat it), measured here, interleaved with the engine runs so machine load hits both;
- the anchors of SMELLS.md / issue 6: pytest-tidy ~50,000 lines/s on pytest's suite, target
  >= 60,000 lines/s end to end through the graph, floor ~160,000 lines/s on the reference box.

Because the shared machine's speed varies, the table also gives each figure as a multiple of
the floor measured in the same run, and what that multiple means at the reference floor.

Part (a) through the graph: what ``POST /api/v1/analyze`` runs, minus HTTP and JSON:
``prepare()`` (input processing) then ``run_sync()`` on the full Switchyard graph (ingest and
route -> plan_analysis -> parse_files ∥ check_rules -> synthesize_findings -> enhance_findings
-> assure_quality, the agent then ending the turn) compiled WITHOUT a checkpointer, exactly as
``app.services.Services.sync_graph`` is that graph. Cold runs
clear the graph's parse cache first.

Part (b), fan-out: a hybrid analysis whose review batches go to the stub OpenAI server
answering in 300 ms per call, through the graph (parse_files ∥ check_rules ∥ one
review_with_llm task per batch), against the same stage functions called one after another.
Target: wall time <= the slowest branch + 15%.

Over 400 lines because it is one benchmark script: its three measurements (rules only, through the
graph, the LLM fan-out) share the suite, the timing and the printed report.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import gc
import glob
import os
import re
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from agents.contract.context import AgentServices, RunContext
from agents.test_analysis.planning import plan_analysis
from agents.test_analysis.requests import AnalyzeRequest, FileIn, prepare
from agents.test_analysis.review import make_review_node
from agents.test_analysis.spec import assure_quality
from agents.test_analysis.stages import (
    check_rules,
    enhance_findings,
    parse_files,
    synthesize_findings,
)
from agents.test_analysis.state import AnalysisRequestData, ReviewTask
from app.analyses import run_sync
from config import Settings
from graph.workflow import compile_graph
from tools.test_analysis.cache import ParseCache
from tools.test_analysis.filework import FileWork
from tools.test_analysis.parsing import count_lines, parse_file
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig, SourceFile
from tools.test_analysis.synthesis import synthesize

REFERENCE_FLOOR_LPS = 160_000  # ast.parse + walk on pytest's testing/, reference 2-core box
PYTEST_TIDY_LPS = 50_000  # pytest-tidy on pytest's testing/, same box
TARGET_LPS = 60_000  # issue 6: rules-only, end to end through the graph
FANOUT_LATENCY = 0.3  # issue 6 (b): the stub answers every review call in 300 ms
FANOUT_TARGET = 1.15  # issue 6 (b): wall time <= slowest branch + 15%
#: Package test folders to look for, best first (numpy ships ~190 test files).
CANDIDATES = ("numpy", "scipy", "sklearn", "pandas", "networkx")


@dataclass
class Suite:
    """Test files of one suite, read into memory (I/O is not what is measured)."""

    name: str
    root: Path
    files: list[SourceFile]

    @property
    def lines(self) -> int:
        return sum(count_lines(_text(f)) for f in self.files)


@dataclass
class Measurement:
    """Best wall time of a few runs over a suite."""

    label: str
    files: int
    lines: int
    seconds: float

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds else float("inf")


def _text(f: SourceFile) -> str:
    return f.content if isinstance(f.content, str) else f.content.decode("utf-8")


def _site_packages() -> list[Path]:
    paths = {Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"])}
    paths.update(Path(p) for p in sys.path if p.endswith("site-packages"))
    return [p for p in paths if p.is_dir()]


def _read_suite(name: str, root: Path, paths: list[str]) -> Suite:
    files: list[SourceFile] = []
    for path in sorted(paths):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        files.append(SourceFile(path=os.path.relpath(path, root), content=text))
    return Suite(name, root, files)


def find_suite(directory: str | None = None) -> Suite:
    """``directory`` (every ``*.py`` below it), else the first installed package with tests."""
    if directory:
        root = Path(directory).resolve()
        if not root.is_dir():
            raise SystemExit(f"--suite {directory}: not a directory")
        paths = glob.glob(str(root / "**" / "*.py"), recursive=True)
        return _read_suite(root.name, root, paths)
    for package in CANDIDATES:
        for site in _site_packages():
            base = site / package
            if not base.is_dir():
                continue
            paths = [
                p
                for pattern in ("test_*.py", "*_test.py")
                for p in glob.glob(str(base / "**" / "tests" / "**" / pattern), recursive=True)
            ]
            if paths:
                return _read_suite(f"{package} (installed tests)", site, paths)
    raise SystemExit(
        "no test suite found: install numpy (or scipy, scikit-learn, pandas, networkx), or "
        "pass --suite DIR"
    )


# --------------------------------------------------------------------------- measured work


def run_floor(suite: Suite) -> None:
    """Plain ``ast.parse`` + a full ``ast.walk``: the floor of any pure-Python analyser."""
    for f in suite.files:
        for _ in ast.walk(ast.parse(_text(f))):
            pass


def run_rule_engine(suite: Suite, config: AnalysisConfig) -> None:
    """Parse + rules + synthesis, cold (a fresh parse cache, so nothing is memoised)."""
    cache = ParseCache()
    findings = []
    for f in suite.files:
        parsed = parse_file(f.path, _text(f), cache=cache)
        findings.extend(check_file(parsed, config))
    synthesize(findings, max_findings=config.max_findings)


def run_core_pipeline(suite: Suite, config: AnalysisConfig, cache: ParseCache) -> None:
    """``analyze_files``: validation, parse, rules, synthesis and enhancement."""
    analyze_files(
        suite.files, config, cache=cache, max_total_bytes=1 << 40, max_files=len(suite.files)
    )


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure_rules_only(suite: Suite, repeats: int = 3) -> list[Measurement]:
    """Part (a), core only: floor, rule engine, full core pipeline (cold and warm cache).

    The runs are interleaved (floor, engine, pipeline, floor, ...) and the best of each is
    kept, so a burst of load from other processes does not favour one of them.
    """
    config = AnalysisConfig(max_findings=None)
    best: dict[str, float] = {}
    for _ in range(repeats):
        for label, fn in (
            ("floor: ast.parse + ast.walk", lambda: run_floor(suite)),
            ("rule engine: parse + rules + synthesis", lambda: run_rule_engine(suite, config)),
            (
                "analyze_files, cold cache (+ enhance)",
                lambda: run_core_pipeline(suite, config, ParseCache()),
            ),
        ):
            seconds = _timed(fn)
            best[label] = min(best.get(label, seconds), seconds)
    warm = ParseCache()
    run_core_pipeline(suite, config, warm)
    best["analyze_files, warm cache (same files again)"] = min(
        _timed(lambda: run_core_pipeline(suite, config, warm)) for _ in range(repeats)
    )
    files, lines = len(suite.files), suite.lines
    return [Measurement(label, files, lines, seconds) for label, seconds in best.items()]


class _Models:
    """The LLM factory's interface with one fixed model (or none) for every role."""

    provider = "bench"

    def __init__(self, model: BaseChatModel | None) -> None:
        self.model = model

    def get_llm(self, role: str = "chat") -> BaseChatModel | None:
        return self.model


def _settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "llm_provider": "none",
        "max_files": 100_000,
        "max_request_bytes": 1 << 30,
        "llm_cache_ttl_seconds": 0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


def _endpoint(
    deps: AgentServices, runner: asyncio.Runner
) -> Callable[[AnalyzeRequest], dict[str, Any]]:
    """``POST /api/v1/analyze`` minus HTTP: input processing, then the graph compiled as the
    app compiles its ``sync_graph`` (the same builder and nodes, no saver)."""
    graph = compile_graph(None, deps)
    context = graph.context_schema(services=deps)  # type: ignore[misc]
    has_model = deps.llm(deps.settings.analysis.llm_role) is not None

    def analyse(body: AnalyzeRequest) -> dict[str, Any]:
        request, _, _ = prepare(body, deps.settings, has_model=has_model)
        return runner.run(run_sync(graph, context, request, owner="bench", timeout=3600))

    return analyse


def measure_graph_rules_only(suite: Suite, repeats: int = 3) -> tuple[list[Measurement], str]:
    """Part (a) through the whole graph: cold (parse cache cleared) and warm, interleaved
    with the floor."""
    deps = AgentServices(_settings(), _Models(None))
    deps.provide(FileWork.from_settings(deps.settings))  # what the app's component opens
    analyse = _endpoint(deps, asyncio.Runner())
    cache = deps.engine(FileWork).cache
    body = AnalyzeRequest(
        files=[FileIn(path=f.path, content=_text(f)) for f in suite.files],
        mode="rules-only",
        config=AnalysisConfig(max_findings=None),
    )

    def cold() -> None:
        cache.clear()
        analyse(body)

    best: dict[str, float] = {}
    for _ in range(repeats):
        for label, fn in (
            ("floor: ast.parse + ast.walk", lambda: run_floor(suite)),
            ("graph, rules-only, cold parse cache", cold),
        ):
            seconds = _timed(fn)
            best[label] = min(best.get(label, seconds), seconds)
    result = analyse(body)  # warm: every file is a parse-cache and rule-memo hit
    best["graph, rules-only, warm cache (same files again)"] = min(
        _timed(lambda: analyse(body)) for _ in range(repeats)
    )
    assert result["quality"]["passed"], result["quality"]
    files, lines = len(suite.files), suite.lines
    assert result["metrics"]["lines_analyzed"] == lines, "the graph saw other lines"
    note = (
        f"    the graph's result: {result['summary']['total']:,} findings in "
        f"{result['metrics']['tests_analyzed']:,} tests, quality checks passed"
    )
    return [Measurement(label, files, lines, seconds) for label, seconds in best.items()], note


# --------------------------------------------------------------------------- (b) fan-out

_HEADER = re.compile(r"^### (\S+) :: \S+ \(lines (\d+)-", re.M)


def _review_answer(request: dict[str, Any]) -> dict[str, Any]:
    """The stub's answer to a review call: one finding on the batch's first test."""
    prompt = str(next(m for m in request["messages"] if m["role"] == "user")["content"])
    match = _HEADER.search(prompt)
    assert match is not None, "not a review prompt"
    return {
        "findings": [
            {
                "file": match.group(1),
                "line": int(match.group(2)),
                "smell": "magic-number",
                "message": "A literal.",
                "confidence": 0.9,
            }
        ]
    }


def _fanout_suite(tests: int) -> list[FileIn]:
    files = []
    for start in range(0, tests, 10):
        body = ["import time", ""]
        for i in range(start, min(start + 10, tests)):
            body += [f"def test_case_{i}():", f"    value = {i} * 3", "    time.sleep(0)", ""]
        files.append(FileIn(path=f"tests/test_part_{start // 10}.py", content="\n".join(body)))
    return files


def _apply(state: dict[str, Any], update: dict[str, Any]) -> None:
    """A node's update applied the way the graph's reducers would."""
    for key, value in update.items():
        if isinstance(value, Overwrite):
            state[key] = value.value
        elif key == "llm_reviews":
            state[key] = {**state.get(key, {}), **value}
        elif key in ("analysis_stages", "stage_ms", "errors"):
            continue
        else:
            state[key] = value


async def _sequential(deps: AgentServices, request: AnalysisRequestData) -> dict[str, float]:
    """The same stage functions, called one after another: ms per stage (and per batch)."""
    message = HumanMessage("analyse", id="bench")
    state: dict[str, Any] = {
        "messages": [message],
        "agent_input": {**request, "source": "api"},
    }
    runtime: Any = Runtime(context=RunContext(services=deps), stream_writer=lambda c: None)
    times: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], dict[str, Any]]) -> None:
        start = time.perf_counter()
        _apply(state, fn())
        times[name] = (time.perf_counter() - start) * 1000

    s: Any = state
    timed("plan_analysis", lambda: plan_analysis(s, runtime))
    timed("parse_files", lambda: parse_files(s, runtime))
    timed("check_rules", lambda: check_rules(s, runtime))
    review = make_review_node()
    bar = float(state["analysis_plan"]["config"]["llm_min_confidence"])
    for i, batch in enumerate(state["llm_batches"]):
        start = time.perf_counter()
        _apply(state, await review(ReviewTask(batch=batch, min_confidence=bar), runtime))
        times[f"review_with_llm[{i}]"] = (time.perf_counter() - start) * 1000
    timed("synthesize_findings", lambda: synthesize_findings(s))
    timed("enhance_findings", lambda: enhance_findings(s, runtime))
    timed("assure_quality", lambda: assure_quality(s))
    return times


@dataclass
class FanOut:
    """Part (b)'s figures (milliseconds)."""

    batches: int
    concurrency: int
    stages: dict[str, float]
    graph_ms: float

    @property
    def branches(self) -> dict[str, float]:
        return {
            k: v
            for k, v in self.stages.items()
            if k in ("parse_files", "check_rules") or k.startswith("review_with_llm")
        }

    @property
    def slowest(self) -> tuple[str, float]:
        return max(self.branches.items(), key=lambda kv: kv[1])


def measure_fanout(repeats: int = 3, batches: int = 8) -> FanOut:
    """Part (b): hybrid mode, stub at 300 ms per call, graph fan-out vs one after another."""
    from tests.support.stub_openai import StubOpenAI
    from tools.providers.chat_models import LLMFactory, ProviderChoice

    stub = StubOpenAI(_review_answer, latency=FANOUT_LATENCY).start()
    try:
        # every batch may be in flight at once: the fan-out is what is measured, not the cap
        settings = _settings(
            llm_provider="openai",
            openai_api_key="sk-bench",
            openai_base_url=stub.base_url,
            llm_max_concurrency=4 * batches,
            llm_rate_limit_per_minute=60_000,
        )
        factory = LLMFactory(
            settings, ProviderChoice("openai", "bench stub", "stub-model", stub.base_url)
        )
        deps = AgentServices(settings, factory)
        deps.provide(FileWork.from_settings(settings))  # what the app's component opens
        runner = asyncio.Runner()  # one loop: the HTTP client's connections belong to it
        analyse = _endpoint(deps, runner)
        cache = deps.engine(FileWork).cache
        body = AnalyzeRequest(files=_fanout_suite(batches * 5), mode="hybrid")
        analyse(body)  # warm-up: HTTP connections, imports
        graph_ms = float("inf")
        stages: dict[str, float] = {}
        for _ in range(repeats):
            cache.clear()
            start = time.perf_counter()
            result = analyse(body)
            graph_ms = min(graph_ms, (time.perf_counter() - start) * 1000)
            assert result["metrics"]["llm_batches"] == batches and result["quality"]["passed"]
            cache.clear()
            request, _, _ = prepare(body, settings, has_model=True)
            run = runner.run(_sequential(deps, request))
            if not stages or sum(run.values()) < sum(stages.values()):
                stages = run
        runner.run(factory.aclose())
        runner.close()
    finally:
        stub.stop()
    return FanOut(batches, settings.llm.max_concurrency, stages, graph_ms)


# --------------------------------------------------------------------------- report


def print_rules_only(suite: Suite, rows: list[Measurement], title: str) -> None:
    floor = next(r for r in rows if r.label.startswith("floor"))
    print(f"{title} on {suite.name}: {suite.root}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"    {os.cpu_count()} cores, load average {load:.2f} (other processes share them)")
    header = (
        f"    {'':50} {'files':>6} {'lines':>8} {'seconds':>8} {'lines/s':>9} "
        f"{'x floor':>8} {'at ref floor':>13}"
    )
    print(header)
    for r in rows:
        ratio = r.seconds / floor.seconds
        projected = REFERENCE_FLOOR_LPS / ratio
        print(
            f"    {r.label:50} {r.files:>6} {r.lines:>8} {r.seconds:>8.3f} "
            f"{r.lines_per_second:>9,.0f} {ratio:>8.2f} {projected:>13,.0f}"
        )


def print_anchors(graph_rows: list[Measurement]) -> None:
    print(
        "    anchors (pytest's testing/, 72,774 lines, reference 2-core box): floor "
        f"~{REFERENCE_FLOOR_LPS:,} lines/s (0.45 s), pytest-tidy ~{PYTEST_TIDY_LPS:,} "
        f"lines/s (1.45 s = 3.2 x floor); target >= {TARGET_LPS:,} lines/s end to end "
        f"(<= {REFERENCE_FLOOR_LPS / TARGET_LPS:.2f} x floor)"
    )
    print(
        "    'x floor' = time / floor time in this run; 'at ref floor' = the lines/s that "
        "multiple gives where the floor is 160,000 lines/s"
    )
    floor = next(r for r in graph_rows if r.label.startswith("floor"))
    cold = next(r for r in graph_rows if "cold" in r.label)
    ratio = cold.seconds / floor.seconds
    verdict = "met" if ratio <= REFERENCE_FLOOR_LPS / TARGET_LPS else "NOT met"
    print(
        f"    target through the graph, cold: {ratio:.2f} x floor here = "
        f"{REFERENCE_FLOOR_LPS / ratio:,.0f} lines/s at the reference floor (measured "
        f"{cold.lines_per_second:,.0f} lines/s on this loaded box) -> {verdict}"
    )


def print_fanout(fan: FanOut) -> None:
    print(
        f"(b) fan-out: hybrid mode, {fan.batches} LLM batches of 5 tests, the stub answering "
        f"each call in {FANOUT_LATENCY * 1000:.0f} ms (LLM_MAX_CONCURRENCY={fan.concurrency})"
    )
    reviews = [v for k, v in fan.stages.items() if k.startswith("review_with_llm")]
    others = ", ".join(
        f"{k} {v:.1f}" for k, v in fan.stages.items() if not k.startswith("review_with_llm")
    )
    sequential = sum(fan.stages.values())
    print(
        f"    one after another: {others}; review_with_llm {len(reviews)} x "
        f"{min(reviews):.0f}-{max(reviews):.0f} ms; total {sequential:,.0f} ms"
    )
    name, slowest = fan.slowest
    ratio = fan.graph_ms / slowest
    verdict = "met" if ratio <= FANOUT_TARGET else "NOT met"
    print(f"    slowest branch: {name} {slowest:.0f} ms")
    print(
        f"    through the graph, end to end (ingest ... the answer), best run: "
        f"{fan.graph_ms:,.0f} ms = {ratio:.2f} x slowest branch; target <= "
        f"{FANOUT_TARGET:.2f} x -> {verdict}; {sequential / fan.graph_ms:.1f}x faster than "
        "one after another"
    )


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the tables."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.analysis",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--suite", help="a directory of test files (default: numpy's tests)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (best kept)")
    parser.add_argument("--batches", type=int, default=8, help="LLM batches in part (b)")
    parser.add_argument(
        "--api",
        action="store_true",
        help="only the end-to-end API figures: cold and warm POST /api/v1/analyze beside the "
        "ast floor on pytest's testing/ (bench.analysis_api)",
    )
    args = parser.parse_args(argv)
    if args.api:
        from bench.analysis_api import main as api_main

        api_main(["--repeats", str(args.repeats)] + (["--suite", args.suite] if args.suite else []))
        return
    suite = find_suite(args.suite)
    print_rules_only(
        suite, measure_rules_only(suite, args.repeats), "(a) rules-only throughput, analysis core"
    )
    graph_rows, note = measure_graph_rules_only(suite, args.repeats)
    print_rules_only(suite, graph_rows, "(a) rules-only throughput through the whole graph")
    print(note)
    print_anchors(graph_rows)
    print_fanout(measure_fanout(args.repeats, args.batches))


if __name__ == "__main__":
    main()
