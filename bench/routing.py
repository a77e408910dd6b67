"""Routing accuracy on a labeled set of messages, through the real router, without a model.

    python -m bench.routing [--data bench/data/routing.jsonl] [--handbook bench/data/handbook]
        [--threshold X] [--json]

What it does, in one run:
1. opens a FRESH knowledge base (a temporary DATA_DIR: the embedded Postgres with pgvector) and
   ingests the handbook (policies, runbooks, an FAQ: ``bench/data/handbook``) with the bundled
   all-MiniLM-L6-v2;
2. builds the router exactly as the graph's ``route`` node does (`graph.nodes.RouterCache`,
   the shipped agents, the settings' thresholds, no chat model: the LLM tier is off);
3. calibrates the data threshold on the ``calibration`` split only: every cut between two
   observed probe scores is tried, and the middle of the widest best-scoring range is reported
   (the ``test`` split never informs it);
4. routes every message with the threshold in use (ROUTE_DATA_THRESHOLD, or ``--threshold``)
   and prints accuracy overall and per split, precision / recall per agent, the confusions
   and every misrouted message; the same messages without the data tier are the "before".

The labeled set is JSON Lines, one message per line::

    {"id": "knowledge-implicit-01", "text": "How do I restart the payments worker?",
     "expected": "knowledge", "kind": "implicit-document-question", "split": "test"}

``expected`` is an agent's registry name (or a list of names, for a message that two agents
answer together); ``kind`` is a free label reported per kind; ``split`` is ``calibration`` or
``test``. Adding an agent is appending its rows: rows whose expected agent is not registered
are counted as skipped, not as errors. An agent whose probe reads stored data gets it from a
fixture in `FIXTURES` (the knowledge agent's ingests the handbook).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from agents.contract.context import AgentServices  # noqa: E402
from agents.contract.spec import AgentSpec  # noqa: E402
from agents.knowledge.store import KnowledgeStore  # noqa: E402
from config import LLMRole, Settings, load_settings  # noqa: E402
from graph.nodes import RouterCache  # noqa: E402
from graph.routing import Router  # noqa: E402
from graph.workflow import build_registry  # noqa: E402
from tools.providers.embeddings import get_embeddings  # noqa: E402

HERE = Path(__file__).parent
DEFAULT_DATA = HERE / "data" / "routing.jsonl"
DEFAULT_HANDBOOK = HERE / "data" / "handbook"
SPLITS = ("calibration", "test")
ANCHOR = "aim >= 0.95 (issue 10)"
OWNER = "bench"


@dataclass(frozen=True)
class Row:
    """One labeled message."""

    id: str
    text: str
    expected: tuple[str, ...]
    kind: str
    split: str


@dataclass
class Routed:
    """A row and where the router sent it."""

    row: Row
    agents: tuple[str, ...]
    method: str
    reason: str
    ms: float

    @property
    def correct(self) -> bool:
        return set(self.agents) == set(self.row.expected)


def load_rows(path: Path) -> list[Row]:
    """The labeled set; a malformed line stops the bench with its line number."""
    rows: list[Row] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            expected = raw["expected"]
            agents = (expected,) if isinstance(expected, str) else tuple(expected)
            row = Row(str(raw["id"]), str(raw["text"]), agents, str(raw["kind"]),
                      str(raw["split"]))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{number}: not a labeled message ({exc})") from exc
        if row.split not in SPLITS or not row.expected or row.id in seen:
            raise SystemExit(f"{path}:{number}: split must be one of {SPLITS}, expected "
                             f"non-empty and the id {row.id!r} unique")  # fmt: skip
        seen.add(row.id)
        rows.append(row)
    return rows


# --- fixtures: the stored data of agents with a data probe ------------------------------------

Fixture = Callable[[AgentServices, argparse.Namespace], Awaitable[str]]


async def knowledge_fixture(services: AgentServices, args: argparse.Namespace) -> str:
    """Ingest the handbook into the knowledge base the knowledge agent's probe searches."""
    store = await KnowledgeStore.open(services.settings, embeddings=services.embeddings())
    services.provide(store)
    report = await store.ingest_paths([args.handbook])
    if not report.ok:
        raise SystemExit(f"the handbook did not ingest: {report.to_dict()['files']}")
    stats = await store.stats()
    return f"knowledge: {stats['documents']} handbook documents, {stats['chunks']} chunks"


#: agent name -> how its stored data is set up (agents whose probe reads no stored data need
#: none). Adding an agent with such a probe adds one entry here.
FIXTURES: dict[str, Fixture] = {"knowledge": knowledge_fixture}


class NoModels:
    """No chat model: the router's LLM tier is off, as with LLM_PROVIDER=none."""

    provider = "none"

    def get_llm(self, role: LLMRole = "chat") -> None:
        return None


# --- routing ------------------------------------------------------------------------------------


@dataclass
class Probes:
    """Remembers each probe's score per message, so calibration re-routes without searching."""

    scores: dict[tuple[str, str], float | None] = field(default_factory=dict)
    timings_ms: list[float] = field(default_factory=list)

    def wrap(self, spec: AgentSpec) -> AgentSpec:
        probe = spec.probe
        if probe is None:
            return spec

        async def cached(message: str, services: AgentServices, owner: str) -> float | None:
            key = (spec.name, message)
            if key not in self.scores:
                started = time.perf_counter()
                self.scores[key] = await probe(message, services, owner)
                self.timings_ms.append((time.perf_counter() - started) * 1000)
            return self.scores[key]

        return replace(spec, probe=cached)


async def route_all(router: Router, rows: Sequence[Row]) -> list[Routed]:
    out = []
    for row in rows:
        started = time.perf_counter()
        chosen = await router.decide(row.text, owner=OWNER)
        ms = (time.perf_counter() - started) * 1000
        out.append(Routed(row, tuple(chosen["agents"]), chosen["method"], chosen["reason"], ms))
    return out


def accuracy(routed: Sequence[Routed]) -> float:
    return sum(r.correct for r in routed) / len(routed) if routed else 0.0


async def calibrate(router: Router, rows: Sequence[Row], probes: Probes) -> tuple[float, str]:
    """The data threshold that routes the calibration rows best: the middle of the widest
    range of cuts with the best accuracy (cuts lie between observed probe scores)."""
    await route_all(router, rows)  # fills the probe cache
    observed = sorted({s for s in probes.scores.values() if s is not None})
    if not observed:
        return router.data_threshold, "no probe scored any calibration message"
    cuts = [0.0] + [(a + b) / 2 for a, b in zip(observed, observed[1:], strict=False)] + [1.0]
    results: list[tuple[float, float]] = []
    kept = router.data_threshold
    try:
        for cut in cuts:
            router.data_threshold = cut
            results.append((cut, accuracy(await route_all(router, rows))))
    finally:
        router.data_threshold = kept
    best = max(acc for _, acc in results)
    # the widest run of consecutive cuts that reach the best accuracy; its middle is chosen
    runs: list[list[float]] = []
    for i, (cut, acc) in enumerate(results):
        if acc != best:
            continue
        if runs and results[i - 1][1] == best:
            runs[-1].append(cut)
        else:
            runs.append([cut])
    widest = max(runs, key=lambda run: run[-1] - run[0])
    low, high = widest[0], widest[-1]
    chosen = round((low + high) / 2, 3)
    return chosen, f"calibration accuracy {best:.3f} for cuts {low:.3f} .. {high:.3f}"


# --- report ---------------------------------------------------------------------------------


def per_agent(
    routed: Sequence[Routed], agents: Sequence[str]
) -> list[tuple[str, float, float, int]]:
    """(agent, precision, recall, support) per agent, a message counting for each agent it
    expects or was routed to."""
    rows = []
    for agent in agents:
        tp = sum(1 for r in routed if agent in r.agents and agent in r.row.expected)
        predicted = sum(1 for r in routed if agent in r.agents)
        support = sum(1 for r in routed if agent in r.row.expected)
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        rows.append((agent, precision, recall, support))
    return rows


def confusions(routed: Sequence[Routed]) -> Counter[tuple[str, str]]:
    return Counter(("+".join(r.row.expected), "+".join(r.agents)) for r in routed if not r.correct)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report(
    routed: list[Routed],
    before: list[Routed],
    agents: list[str],
    header: list[str],
    probes: Probes,
) -> dict[str, Any]:
    for line in header:
        print(line)
    by_split = {s: [r for r in routed if r.row.split == s] for s in SPLITS}
    total = accuracy(routed)
    print(f"accuracy (all)            {total:.3f}  ({sum(r.correct for r in routed)}/"
          f"{len(routed)})   {ANCHOR}")  # fmt: skip
    for split, items in by_split.items():
        note = " (held out: never used to choose a threshold)" if split == "test" else ""
        print(f"accuracy ({split:<11})     {accuracy(items):.3f}  "
              f"({sum(r.correct for r in items)}/{len(items)}){note}")  # fmt: skip
    print(f"before (no data tier)     {accuracy(before):.3f}  "
          f"({sum(r.correct for r in before)}/{len(before)})")  # fmt: skip
    print("per agent        precision  recall  support")
    table = per_agent(routed, agents)
    for agent, precision, recall, support in table:
        print(f"  {agent:<15} {precision:9.3f} {recall:7.3f} {support:8d}")
    kinds: dict[str, list[Routed]] = defaultdict(list)
    for r in routed:
        kinds[r.row.kind].append(r)
    print("per kind")
    for kind, items in sorted(kinds.items()):
        print(f"  {kind:<30} {accuracy(items):.3f}  ({sum(r.correct for r in items)}/"
              f"{len(items)})")  # fmt: skip
    methods = Counter(r.method for r in routed)
    print("by method: " + ", ".join(f"{m} {n}" for m, n in methods.most_common()))
    mixed = confusions(routed)
    print(
        "confusions (expected -> routed): "
        + (", ".join(f"{e} -> {g}: {n}" for (e, g), n in mixed.most_common()) or "none")
    )
    latencies = [r.ms for r in routed]
    print(
        f"route latency: p50 {percentile(latencies, 0.5):.1f} ms, "
        f"p95 {percentile(latencies, 0.95):.1f} ms; data probe p50 "
        f"{percentile(probes.timings_ms, 0.5):.1f} ms, p95 "
        f"{percentile(probes.timings_ms, 0.95):.1f} ms ({len(probes.timings_ms)} probes)"
    )
    for r in routed:
        if not r.correct:
            print(
                f"  MISROUTED [{r.row.split}] {r.row.id}: expected {'+'.join(r.row.expected)}, "
                f"got {'+'.join(r.agents)} by {r.method} ({r.reason}): {r.row.text[:70]!r}"
            )
    return {
        "accuracy": round(total, 4),
        "accuracy_by_split": {s: round(accuracy(v), 4) for s, v in by_split.items()},
        "accuracy_without_data_tier": round(accuracy(before), 4),
        "per_agent": {
            a: {"precision": round(p, 4), "recall": round(r, 4), "support": n}
            for a, p, r, n in table
        },  # fmt: skip
        "confusions": {f"{e} -> {g}": n for (e, g), n in mixed.items()},
        "methods": dict(methods),
        "misrouted": [r.row.id for r in routed if not r.correct],
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rows = load_rows(args.data)
    workdir = Path(tempfile.mkdtemp(prefix="switchyard-routing-"))
    workdir.chmod(0o711)  # pgserver runs Postgres as its own user when started by root
    try:
        settings: Settings = load_settings(
            data_dir=workdir,
            database_url=None,
            qdrant_url=None,
            llm_provider="none",
            enable_reranking=False,
        )
        embeddings = get_embeddings(settings)
        services = AgentServices(settings, NoModels(), embeddings_factory=lambda: embeddings)
        probes = Probes()
        registry = build_registry([probes.wrap(spec) for spec in build_registry()])
        known = [r for r in rows if all(a in registry for a in r.expected)]
        skipped = Counter(a for r in rows for a in r.expected if a not in registry)
        notes = [await FIXTURES[a.name](services, args) for a in registry if a.name in FIXTURES]
        router = RouterCache(registry).for_services(services)
        calibration = [r for r in known if r.split == "calibration"]
        started = time.perf_counter()
        calibrated, how = await calibrate(router, calibration, probes)
        if args.threshold is not None:
            router.data_threshold = args.threshold
        routed = await route_all(router, known)
        blind = Router(registry, embeddings=lambda: embeddings, llm=lambda: None,
                       semantic_threshold=settings.route_semantic_threshold,
                       semantic_margin=settings.route_semantic_margin)  # fmt: skip
        before = await route_all(blind, known)
        header = [
            f"routing bench: {len(known)} labeled messages ("
            + ", ".join(f"{s} {sum(r.split == s for r in known)}" for s in SPLITS)
            + f"), agents {', '.join(registry.names)}; embeddings {settings.embedding_model}, "
            "no chat model (LLM tier off)",
            *notes,
            "skipped rows (agent not registered): "
            + (", ".join(f"{a} {n}" for a, n in skipped.items()) or "none"),
            f"data threshold in use {router.data_threshold:.3f} "
            f"({'--threshold' if args.threshold is not None else 'ROUTE_DATA_THRESHOLD'}); "
            f"calibrated on the calibration split: {calibrated:.3f} ({how})",
            f"python {platform.python_version()}, {os.cpu_count()} CPUs; "
            f"{time.perf_counter() - started:.1f} s",
        ]
        result = report(routed, before, registry.names, header, probes)
        result["calibrated_threshold"] = calibrated
        result["threshold"] = router.data_threshold
        for resource in (KnowledgeStore,):
            try:
                await services.resource(resource).close()
            except LookupError:
                pass
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="labeled JSON Lines")
    parser.add_argument("--handbook", type=Path, default=DEFAULT_HANDBOOK,
                        help="documents the knowledge base holds")  # fmt: skip
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="data threshold to route with (default: ROUTE_DATA_THRESHOLD)",
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
