"""Tunes the hybrid fusion offline: each leg's evidence per query, dumped once, fused many ways.

    python -m bench.fusion_tune dump --index-dir DIR --queries Q.jsonl --qrels QRELS.tsv OUT.json
    python -m bench.fusion_tune eval OUT.json [OUT2.json ...]

``dump`` opens a knowledge base `bench.retrieval` built (``--index-dir``), and for every judged
query stores both legs' top ``--depth`` chunks with what the retriever's relevance stage reads:
the BM25 score and rank, the cosine and rank, and the chunk's idf-weighted query-term coverage.
``eval`` replays `tools.knowledge.fusion.fuse` on the dump (no database, no model: seconds per
variant) and prints nDCG@10 per leg, for the fixed-weight relevance rerank the engine used
before (weighted RRF, head of 15 reordered by ``0.5 * dense + 0.5 * coverage``), and for the
per-query agreement weighting the engine uses now, over a grid of its constants.

Tuning is done on ONE split (SciFact's train queries, which the test split never sees); the
other corpora are only reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from config import load_settings  # noqa: E402
from tools.knowledge.analysis import analyze  # noqa: E402
from tools.knowledge.fusion import Candidate, FusionParams, fuse  # noqa: E402
from tools.knowledge.ingest import lexical_text  # noqa: E402
from tools.knowledge.metrics import evaluate, read_qrels, read_queries  # noqa: E402
from tools.knowledge.retriever import SHARED_TARGET  # noqa: E402
from tools.knowledge.scope import SHARED  # noqa: E402
from tools.knowledge.store import KnowledgeStore  # noqa: E402


async def dump(args: argparse.Namespace) -> None:
    qrels = read_qrels(args.qrels)
    queries = {q: t for q, t in read_queries(args.queries).items() if q in qrels}
    settings = load_settings(data_dir=args.index_dir, database_url=None)
    store = await KnowledgeStore.open(settings, name="bench")
    retriever = store.retriever
    out: dict[str, Any] = {"qrels": qrels, "queries": {}}
    try:
        for n, (qid, text) in enumerate(queries.items(), start=1):
            lexical, _ = await asyncio.to_thread(
                retriever._lexical, SHARED_TARGET, text, args.depth
            )
            qvec, dense, _, _ = await asyncio.to_thread(
                retriever._dense, SHARED_TARGET, text, args.depth
            )
            ids = list(dict.fromkeys([h.chunk_id for h in dense] + [h.chunk_id for h in lexical]))
            records = await asyncio.to_thread(store.engine.fetch_chunks, [SHARED], ids, qvec)
            terms = sorted(set(analyze(text, store.analyzer)))
            idf = await asyncio.to_thread(store.engine.idf, [SHARED], terms) if terms else {}
            total = sum(idf.values())
            lex = {h.chunk_id: h for h in lexical}
            den = {h.chunk_id: h for h in dense}
            rows = []
            for cid in ids:
                payload = records.get(cid)
                if payload is None:
                    continue
                chunk = lexical_text(str(payload["title"]), str(payload["text"]))
                present = set(idf).intersection(analyze(chunk, store.analyzer))
                rows.append({
                    "id": cid, "doc": payload.get("external_id") or payload["document_id"],
                    "bm25": lex[cid].score if cid in lex else None,
                    "lexical_rank": lex[cid].rank if cid in lex else None,
                    "cosine": float(payload["cosine"]),
                    "dense_rank": den[cid].rank if cid in den else None,
                    "coverage": sum(idf[t] for t in present) / total if total else 0.0,
                })  # fmt: skip
            out["queries"][qid] = rows
            if n % 100 == 0:
                print(f"{n}/{len(queries)}", file=sys.stderr)
    finally:
        await store.close()
    args.out.write_text(json.dumps(out))


def _candidates(rows: list[dict[str, Any]]) -> list[Candidate]:
    return [
        Candidate(
            r["id"],
            r["doc"],
            r["bm25"],
            r["lexical_rank"],
            r["cosine"],
            r["dense_rank"],
            r["coverage"],
        )  # fmt: skip
        for r in rows
    ]


def score(data: dict[str, Any], params: FusionParams, mode: str = "hybrid") -> float:
    run = {}
    for qid, rows in data["queries"].items():
        ranked = fuse(_candidates(rows), params, mode=mode)
        run[qid] = list(dict.fromkeys(c.document for c in ranked))
    return evaluate(run, data["qrels"], ndcg_k=10, recall_k=100)["ndcg@10"]


def grid(data_sets: list[dict[str, Any]], names: list[str]) -> None:
    base = FusionParams()
    rows = [("lexical", base, "lexical"), ("dense", base, "dense"),
            ("fixed 0.5 (before)", FusionParams(adaptive=False), "hybrid")]  # fmt: skip
    for gain in (0.0, 0.5, 1.0, 2.0, 4.0):
        for depth in (5, 10, 20):
            params = FusionParams(agreement_gain=gain, agreement_depth=depth)
            rows.append((f"agreement gain={gain} depth={depth}", params, "hybrid"))
    print(f"{'variant':<36}" + "".join(f"{n:>14}" for n in names))
    for label, params, mode in rows:
        print(f"{label:<36}" + "".join(f"{score(d, params, mode):>14.4f}" for d in data_sets))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--index-dir", type=Path, required=True)
    d.add_argument("--queries", type=Path, required=True)
    d.add_argument("--qrels", type=Path, required=True)
    d.add_argument("--depth", type=int, default=100)
    d.add_argument("out", type=Path)
    e = sub.add_parser("eval")
    e.add_argument("dumps", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "dump":
        asyncio.run(dump(args))
    else:
        grid([json.loads(p.read_text()) for p in args.dumps], [p.stem for p in args.dumps])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
