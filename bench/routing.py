"""Routing accuracy on labeled sets of messages, through the real router, without a model.

    python -m bench.routing [--data bench/data/routing.jsonl] [--handbook bench/data/handbook]
        [--frozen bench/data/frozen/routing | --no-frozen] [--threshold X] [--json]

Two sets are routed in one run, each in its own fresh knowledge base:
- the project's own older set (``bench/data/routing.jsonl`` over ``bench/data/handbook``);
- the frozen independent set of issue 28 (``bench/data/frozen/routing``: ``messages.jsonl``
  over its own ``handbook/`` and one user's ``personal.json``: tasks, meals and events stored
  as the bench's user, which the personal agents' data probes search). It was written by
  someone who never read the router; its ``frozen`` split is reported beside its
  ``calibration`` split, per agent, and is never used to choose anything (the misrouted list
  names frozen messages by id only, so nobody tunes on their texts). Later calibration rows
  over the same data, by another labeler, sit beside it as ``calibration*.jsonl`` and join
  its ``calibration`` split. ``--data`` alone routes
  that one set (``--frozen DIR`` adds the frozen set back).

What it does per set:
1. opens a FRESH knowledge base (a temporary DATA_DIR: the embedded Postgres with pgvector) and
   ingests the set's handbook with the bundled all-MiniLM-L6-v2 (and, for a set with personal
   data, stores it in the personal engine on the same Postgres);
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
answer together); ``kind`` is a free label reported per kind; ``split`` is ``calibration``, or
``test`` / ``frozen`` (held out). Adding an agent is appending its rows: rows whose expected
agent is not registered are counted as skipped, not as errors. An agent whose probe reads stored
data gets it from a fixture in `FIXTURES` (the handbook; the personal data).

Over 400 lines because it is one benchmark script: the labelled sets, their knowledge and personal
fixtures, the routing run and its report are one run that nothing else imports.
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
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from agents.contract.context import AgentServices, RunContext  # noqa: E402
from agents.contract.spec import AgentSpec  # noqa: E402
from config import Settings, load_settings
from graph.nodes import RouterCache  # noqa: E402
from graph.routing import Router  # noqa: E402
from graph.workflow import build_registry  # noqa: E402
from tools.embedded import EmbeddedPostgres  # noqa: E402
from tools.knowledge.store import KnowledgeStore  # noqa: E402
from tools.personal.models import EventCreate, MealCreate, TaskCreate  # noqa: E402
from tools.personal.service import PersonalLimits, PersonalService  # noqa: E402
from tools.providers.embeddings import get_embeddings  # noqa: E402
from tools.providers.settings import LLMRole  # noqa: E402  # noqa: E402

HERE = Path(__file__).parent
DEFAULT_DATA = HERE / "data" / "routing.jsonl"
DEFAULT_HANDBOOK = HERE / "data" / "handbook"
DEFAULT_FROZEN = HERE / "data" / "frozen" / "routing"
SPLITS = ("calibration", "test")
#: Splits never used to choose a threshold: the older set's ``test``, the independent ``frozen``.
HELD_OUT = ("test", "frozen")
ANCHOR = "aim >= 0.95 (issues 10 and 28)"
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
        if row.split not in (*SPLITS, *HELD_OUT) or not row.expected or row.id in seen:
            raise SystemExit(f"{path}:{number}: split must be one of {SPLITS}, expected "
                             f"non-empty and the id {row.id!r} unique")  # fmt: skip
        seen.add(row.id)
        rows.append(row)
    return rows


# --- fixtures: the stored data of agents with a data probe ------------------------------------


@dataclass(frozen=True)
class LabeledSet:
    """One labeled set and the data its messages are written against."""

    name: str
    data: Path
    handbook: Path
    personal: Path | None = None
    """The user's own tasks, meals and events (JSON, see bench/data/frozen/routing/README)."""
    extra: tuple[Path, ...] = ()
    """Further calibration rows over the same data (``calibration*.jsonl`` beside the frozen
    set's messages, written later by another labeler): tuning data only, every row's split
    must be ``calibration``."""

    def rows(self) -> list[Row]:
        """The set's rows and its extra calibration rows (ids unique across the files)."""
        rows = load_rows(self.data)
        seen = {r.id for r in rows}
        for path in self.extra:
            for row in load_rows(path):
                if row.split != "calibration" or row.id in seen:
                    raise SystemExit(f"{path}: row {row.id!r} must be a calibration row with an "
                                     "id no other file of the set uses")  # fmt: skip
                seen.add(row.id)
                rows.append(row)
        return rows


#: ``fixture(services, labeled_set, stack)``: stores a set's data where a probe searches it and
#: says what it stored (None: the set has no such data); closers go on ``stack``.
Fixture = Callable[[AgentServices, LabeledSet, AsyncExitStack], Awaitable[str | None]]


async def knowledge_fixture(
    services: AgentServices, labeled: LabeledSet, stack: AsyncExitStack
) -> str | None:
    """Ingest the handbook into the knowledge base the knowledge agent's probe searches."""
    store = await KnowledgeStore.open(services.settings, embeddings=services.embeddings())
    stack.push_async_callback(store.close)
    services.provide(store)
    report = await store.ingest_paths([labeled.handbook])
    if not report.ok:
        raise SystemExit(f"the handbook did not ingest: {report.to_dict()['files']}")
    stats = await store.stats()
    return f"knowledge: {stats['documents']} handbook documents, {stats['chunks']} chunks"


#: personal.json's priorities -> the engine's (it has no "medium")
PRIORITIES = {"low": "low", "medium": "normal", "high": "high", "urgent": "urgent"}


def meal_type(eaten_at: datetime) -> str:
    """personal.json gives no meal type: the local hour of the meal decides it."""
    hour = eaten_at.hour
    if 5 <= hour < 11:
        return "breakfast"
    if 11 <= hour < 16:
        return "lunch"
    if 18 <= hour < 23:
        return "dinner"
    return "snack"


async def personal_fixture(
    services: AgentServices, labeled: LabeledSet, stack: AsyncExitStack
) -> str | None:
    """Store the user's tasks, meals and events (as the bench's user, in the embedded Postgres
    of the set's DATA_DIR, vectors in pgvector) where the personal agents' probes search."""
    if labeled.personal is None:
        return None
    raw = json.loads(labeled.personal.read_text(encoding="utf-8"))
    server = EmbeddedPostgres(services.settings.storage.data_dir)
    stack.callback(server.release)
    pool = AsyncConnectionPool(
        server.url, min_size=1, max_size=4, open=False,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )  # fmt: skip
    await pool.open()
    stack.push_async_callback(pool.close)
    service = PersonalService(
        pool, services.embeddings(),
        PersonalLimits.from_settings(services.settings),
    )  # fmt: skip
    await service.setup()
    services.provide(service)
    zone = str(raw["timezone"])
    for item in raw["tasks"]:
        task = await service.create_task(OWNER, TaskCreate(
            title=item["title"], due_at=item["due"], priority=PRIORITIES[item["priority"]],
        ), tz=zone)  # fmt: skip
        if item["status"] == "done":
            await service.complete_task(OWNER, task.id)
    for item in raw["meals"]:
        eaten = datetime.fromisoformat(item["eaten_at"]).astimezone(ZoneInfo(zone))
        await service.create_meal(OWNER, MealCreate(
            eaten_at=eaten, meal_type=meal_type(eaten), description=item["name"],
            calories=item["calories"], protein_g=item["protein"],
        ), tz=zone)  # fmt: skip
    for item in raw["events"]:
        await service.create_event(OWNER, EventCreate(
            title=item["title"], starts_at=item["start"], ends_at=item["end"],
            location=item["location"],
        ), tz=zone)  # fmt: skip
    return (
        f"personal: {len(raw['tasks'])} tasks, {len(raw['meals'])} meals, "
        f"{len(raw['events'])} events of one user ({zone})"
    )


#: what a set's stored data needs (each returns None when the set has no such data). Adding an
#: agent whose probe reads new stored data adds one entry here.
FIXTURES: dict[str, Fixture] = {"knowledge": knowledge_fixture, "personal": personal_fixture}


class NoModels:
    """No chat model: the router's LLM tier is off, as with LLM_PROVIDER=none."""

    provider = "none"

    def get_llm(self, role: LLMRole = "chat") -> None:
        return None


# --- routing ------------------------------------------------------------------------------------


@dataclass
class Probes:
    """Remembers each probe's score per message, so calibration re-routes without searching.

    A score is kept per agent, message AND run (the owner and the run's options, e.g. the
    knowledge ``filters``): the same text searched for another owner or under other filters is
    another search, never this one's score."""

    scores: dict[tuple[str, str, str, str], float | None] = field(default_factory=dict)
    timings_ms: list[float] = field(default_factory=list)

    def wrap(self, spec: AgentSpec) -> AgentSpec:
        probe = spec.probe
        if probe is None:
            return spec

        async def cached(message: str, context: RunContext) -> float | None:
            key = (spec.name, message, context.owner, context.model_dump_json())
            if key not in self.scores:
                started = time.perf_counter()
                self.scores[key] = await probe(message, context)
                self.timings_ms.append((time.perf_counter() - started) * 1000)
            return self.scores[key]

        return replace(spec, probe=cached)


async def route_all(router: Router, rows: Sequence[Row]) -> list[Routed]:
    out = []
    for row in rows:
        started = time.perf_counter()
        chosen = await router.decide(row.text, RunContext(owner=OWNER))
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


def split_table(routed: Sequence[Routed], agents: Sequence[str], splits: Sequence[str]) -> None:
    """Accuracy per agent (the share of its messages routed to it) in each split, side by side."""
    print("per agent, accuracy by split: " + "  ".join(f"{s:>17}" for s in splits))
    for agent in agents:
        cells = []
        for split in splits:
            mine = [r for r in routed if r.row.split == split and agent in r.row.expected]
            right = sum(r.correct for r in mine)
            cells.append(f"{(right / len(mine) if mine else 0.0):.3f} ({right:>2}/{len(mine):>2})")
        print(f"  {agent:<27}" + "  ".join(f"{c:>17}" for c in cells))


def report(
    routed: list[Routed],
    before: list[Routed],
    agents: list[str],
    header: list[str],
    probes: Probes,
) -> dict[str, Any]:
    for line in header:
        print(line)
    present = [
        s for s in dict.fromkeys((*SPLITS, *HELD_OUT)) if any(r.row.split == s for r in routed)
    ]
    by_split = {s: [r for r in routed if r.row.split == s] for s in present}
    total = accuracy(routed)
    print(f"accuracy (all)            {total:.3f}  ({sum(r.correct for r in routed)}/"
          f"{len(routed)})   {ANCHOR}")  # fmt: skip
    for split, items in by_split.items():
        note = " (held out: never used to choose a threshold)" if split in HELD_OUT else ""
        print(f"accuracy ({split:<11})     {accuracy(items):.3f}  "
              f"({sum(r.correct for r in items)}/{len(items)}){note}")  # fmt: skip
    print(f"before (no data tier)     {accuracy(before):.3f}  "
          f"({sum(r.correct for r in before)}/{len(before)})")  # fmt: skip
    print("per agent        precision  recall  support")
    table = per_agent(routed, agents)
    for agent, precision, recall, support in table:
        print(f"  {agent:<15} {precision:9.3f} {recall:7.3f} {support:8d}")
    split_table(routed, agents, present)
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
        f"route stage latency (probes searched live): p50 {percentile(latencies, 0.5):.1f} ms, "
        f"p95 {percentile(latencies, 0.95):.1f} ms; data probe p50 "
        f"{percentile(probes.timings_ms, 0.5):.1f} ms, p95 "
        f"{percentile(probes.timings_ms, 0.95):.1f} ms ({len(probes.timings_ms)} probes)"
    )
    for r in routed:
        if r.correct:
            continue
        where = f"  MISROUTED [{r.row.split}] {r.row.id}: expected {'+'.join(r.row.expected)}, "
        if r.row.split == "frozen":  # by id only: the frozen texts are never read to tune
            print(f"{where}got {'+'.join(r.agents)} by {r.method}")
        else:
            print(f"{where}got {'+'.join(r.agents)} by {r.method} ({r.reason}): "
                  f"{r.row.text[:70]!r}")  # fmt: skip
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
        "route_p50_ms": round(percentile(latencies, 0.5), 2),
        "misrouted": [r.row.id for r in routed if not r.correct],
    }


async def run_set(labeled: LabeledSet, args: argparse.Namespace) -> dict[str, Any]:
    """Route one labeled set in its own fresh knowledge base (and personal data) and report."""
    rows = labeled.rows()
    workdir = Path(tempfile.mkdtemp(prefix="switchyard-routing-"))
    workdir.chmod(0o711)  # pgserver runs Postgres as its own user when started by root
    try:
        async with AsyncExitStack() as stack:
            settings: Settings = load_settings(
                data_dir=workdir,
                database_url=None,
                llm_provider="none",
                enable_reranking=False,
            )
            embeddings = get_embeddings(settings)
            services = AgentServices(settings, NoModels(), embeddings_factory=lambda: embeddings)
            probes = Probes()
            registry = build_registry([probes.wrap(spec) for spec in build_registry()])
            known = [r for r in rows if all(a in registry for a in r.expected)]
            skipped = Counter(a for r in rows for a in r.expected if a not in registry)
            notes = [
                note
                for fixture in FIXTURES.values()
                if (note := await fixture(services, labeled, stack)) is not None
            ]
            router = RouterCache(registry).for_services(services)
            calibration = [r for r in known if r.split == "calibration"]
            started = time.perf_counter()
            calibrated, how = await calibrate(router, calibration, probes)
            if args.threshold is not None:
                router.data_threshold = args.threshold
            # the probes search again: the route stage is timed as the graph runs it
            probes.scores.clear()
            probes.timings_ms.clear()
            routed = await route_all(router, known)
            blind = Router(registry, embeddings=lambda: embeddings, llm=lambda: None,
                           semantic_threshold=settings.routing.semantic_threshold,
                           semantic_margin=settings.routing.semantic_margin)  # fmt: skip
            before = await route_all(blind, known)
            present = [
                s for s in dict.fromkeys((*SPLITS, *HELD_OUT)) if any(r.split == s for r in known)
            ]
            header = [
                f"=== {labeled.name}: {labeled.data}",
                f"routing bench: {len(known)} labeled messages ("
                + ", ".join(f"{s} {sum(r.split == s for r in known)}" for s in present)
                + f"), agents {', '.join(registry.names)}; embeddings "
                f"{settings.embeddings.model}, no chat model (LLM tier off)",
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
            return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def labeled_sets(args: argparse.Namespace) -> list[LabeledSet]:
    """The project's own set, and the frozen independent one unless ``--data`` alone is given
    or ``--no-frozen``."""
    own = LabeledSet("the project's own set", args.data or DEFAULT_DATA, args.handbook)
    frozen_dir = args.frozen
    if frozen_dir is None and args.data is None and not args.no_frozen:
        frozen_dir = DEFAULT_FROZEN
    sets = [own]
    if frozen_dir is not None and not args.no_frozen:
        sets.append(LabeledSet(
            "the frozen independent set (issue 28)", frozen_dir / "messages.jsonl",
            frozen_dir / "handbook", frozen_dir / "personal.json",
            tuple(sorted(frozen_dir.glob("calibration*.jsonl"))),
        ))  # fmt: skip
    return sets


def summary(results: dict[str, dict[str, Any]]) -> None:
    print("=== summary")
    for name, result in results.items():
        splits = ", ".join(f"{s} {a:.3f}" for s, a in result["accuracy_by_split"].items())
        print(f"  {name}: {splits}; route stage p50 {result['route_p50_ms']:.1f} ms")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    results = {labeled.name: await run_set(labeled, args) for labeled in labeled_sets(args)}
    if len(results) == 1:
        return next(iter(results.values()))
    summary(results)
    return {"sets": results}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None,
                        help=f"labeled JSON Lines (default {DEFAULT_DATA})")  # fmt: skip
    parser.add_argument("--handbook", type=Path, default=DEFAULT_HANDBOOK,
                        help="documents the knowledge base holds")  # fmt: skip
    parser.add_argument("--frozen", type=Path, default=None,
                        help=f"an independent set's folder (default {DEFAULT_FROZEN}, unless "
                        "--data is given)")  # fmt: skip
    parser.add_argument("--no-frozen", action="store_true", help="route only the --data set")
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
