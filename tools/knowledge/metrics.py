"""Retrieval metrics with the BEIR / trec_eval definitions, plus BEIR file readers.

- nDCG@k: ``DCG = sum_i rel_i / log2(i + 1)`` over the first k results (i is 1-based, linear
  gain as in trec_eval), divided by the DCG of the ideal ordering of the judged documents.
- Recall@k: relevant documents (judgement > 0) in the first k results / all relevant documents.
- Queries without any relevant judgement are left out of the mean (as pytrec_eval does), and,
  like BEIR's default, a result whose id equals the query id is ignored.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tools.knowledge.jsonl import jsonl_lines
from tools.knowledge.loaders import read_jsonl_text

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]


def dedupe(ids: Iterable[str]) -> list[str]:
    """Keep each id at its best (first) position: chunk results -> document ranking."""
    seen: set[str] = set()
    out: list[str] = []
    for item in ids:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def ndcg_at_k(ranking: Sequence[str], judgements: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k of one ranking; 0.0 when nothing is relevant."""
    ideal = sorted((g for g in judgements.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return 0.0
    dcg = sum(judgements.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]))
    return max(dcg, 0.0) / idcg


def recall_at_k(ranking: Sequence[str], judgements: Mapping[str, int], k: int = 100) -> float:
    """Recall@k of one ranking; 0.0 when nothing is relevant."""
    relevant = {doc for doc, g in judgements.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def evaluate(
    run: Run, qrels: Qrels, *, ndcg_k: int = 10, recall_k: int = 100, ignore_identical: bool = True
) -> dict[str, float]:
    """Mean nDCG@k and Recall@k over the judged queries (a query missing from `run` scores 0)."""
    ndcgs: list[float] = []
    recalls: list[float] = []
    for qid, judgements in qrels.items():
        if not any(g > 0 for g in judgements.values()):
            continue
        ranking = dedupe(d for d in run.get(qid, []) if not (ignore_identical and d == qid))
        ndcgs.append(ndcg_at_k(ranking, judgements, ndcg_k))
        recalls.append(recall_at_k(ranking, judgements, recall_k))
    count = len(ndcgs)
    return {
        f"ndcg@{ndcg_k}": sum(ndcgs) / count if count else 0.0,
        f"recall@{recall_k}": sum(recalls) / count if count else 0.0,
        "queries": float(count),
    }


def read_queries(path: Path) -> dict[str, str]:
    """BEIR queries file: ``{"_id", "text"}`` per line, read as the corpus loader reads JSON
    Lines (`jsonl_lines`: records end at "\n" only; raw control characters in strings kept)."""
    out: dict[str, str] = {}
    for _, line in jsonl_lines(read_jsonl_text(path)):
        row = json.loads(line, strict=False)
        out[str(row["_id"])] = str(row["text"])
    return out


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV ``query-id, corpus-id, score`` (a header line is skipped)."""
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if len(row) < 3 or row[0] == "query-id":
                continue
            out.setdefault(row[0], {})[row[1]] = int(row[2])
    return out
