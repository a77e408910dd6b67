"""Calibrates CHAT_ANSWER_THRESHOLD: when the chat agent without a model answers from the
knowledge base instead of listing the agents (issue 24 item 6).

    python -m bench.chat_answer [--data bench/data/routing.jsonl] [--no-frozen] [--json]

For each labelled set of the routing bench (`bench.routing`: the project's set over
``bench/data/handbook`` and the frozen independent set over its own handbook), in a fresh
knowledge base holding the set's handbook, every message gets the knowledge agent's probe score
(`agents.knowledge.probe.probe`, the number `answer_from_documents` compares with the
threshold). A message labelled ``knowledge`` should be answered from the documents; any other
(small talk, another agent's request) must not be. The threshold is chosen on the
``calibration`` split of the project's set only: the middle between the highest score of a
message that is not about the documents and the next score above it (a wrong quote is worse
than the capability list). Held-out splits (``test``, ``frozen``) report how many document
questions it answers and how many other messages it would wrongly answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from agents.contract.context import AgentServices
from agents.knowledge.probe import probe
from bench.routing import (
    DEFAULT_DATA,
    DEFAULT_FROZEN,
    DEFAULT_HANDBOOK,
    OWNER,
    LabeledSet,
    NoModels,
    Row,
    knowledge_fixture,
    load_rows,
)
from config import load_settings
from tools.knowledge.scope import Scope
from tools.providers.embeddings import get_embeddings


async def scores_of(labeled: LabeledSet) -> list[tuple[Row, float]]:
    """Every message of the set with its probe score (0 when the probe skips it)."""
    rows = load_rows(labeled.data)
    workdir = Path(tempfile.mkdtemp(prefix="switchyard-chat-answer-"))
    workdir.chmod(0o711)  # pgserver runs Postgres as its own user when started by root
    try:
        async with AsyncExitStack() as stack:
            settings = load_settings(data_dir=workdir, database_url=None, llm_provider="none")
            embeddings = get_embeddings(settings)
            services = AgentServices(settings, NoModels(), embeddings_factory=lambda: embeddings)
            await knowledge_fixture(services, labeled, stack)
            out: list[tuple[Row, float]] = []
            for row in rows:
                found = await probe(row.text, services, Scope(owner=OWNER))
                out.append((row, found.score if found is not None else 0.0))
            return out
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def calibrate(scored: list[tuple[Row, float]]) -> tuple[float, str]:
    """The middle between the best non-document message and the next score above it."""
    negatives = [s for r, s in scored if "knowledge" not in r.expected]
    ceiling = max(negatives, default=0.0)
    above = [s for _, s in scored if s > ceiling]
    if not above:
        return round(ceiling + 0.01, 3), "no score above the best non-document message"
    nxt = min(above)
    return round((ceiling + nxt) / 2, 3), f"between {ceiling:.3f} (not about the documents) " \
        f"and {nxt:.3f}"  # fmt: skip


def outcome(scored: list[tuple[Row, float]], threshold: float) -> dict[str, Any]:
    """Per split: document questions answered, other messages wrongly answered."""
    table: dict[str, Any] = {}
    for split in dict.fromkeys(r.split for r, _ in scored):
        part = [(r, s) for r, s in scored if r.split == split]
        docs = [s for r, s in part if "knowledge" in r.expected]
        other = [(r, s) for r, s in part if "knowledge" not in r.expected]
        wrong = [r.id for r, s in other if s >= threshold]
        table[split] = {
            "document_questions": len(docs),
            "answered": sum(s >= threshold for s in docs),
            "other_messages": len(other),
            "wrongly_answered": len(wrong),
            "wrong_ids": wrong,
        }
    return table


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sets = [LabeledSet("project", args.data, args.handbook)]
    if not args.no_frozen:
        sets.append(
            LabeledSet("frozen", DEFAULT_FROZEN / "messages.jsonl", DEFAULT_FROZEN / "handbook")
        )
    scored = {labeled.name: await scores_of(labeled) for labeled in sets}
    calibration = [(r, s) for r, s in scored["project"] if r.split == "calibration"]
    threshold, how = calibrate(calibration)
    if args.threshold is not None:
        threshold = args.threshold
    return {
        "threshold": threshold,
        "calibrated": how,
        "sets": {name: outcome(rows, threshold) for name, rows in scored.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--handbook", type=Path, default=DEFAULT_HANDBOOK)
    parser.add_argument("--no-frozen", action="store_true")
    parser.add_argument("--threshold", type=float, help="report this threshold instead")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"CHAT_ANSWER_THRESHOLD {result['threshold']:.3f} (calibration split of the project "
          f"set: {result['calibrated']})")  # fmt: skip
    for name, table in result["sets"].items():
        for split, row in table.items():
            print(f"{name:<8} {split:<12} document questions answered {row['answered']}/"
                  f"{row['document_questions']}; other messages wrongly answered "
                  f"{row['wrongly_answered']}/{row['other_messages']} "
                  f"{' '.join(row['wrong_ids'][:8])}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
