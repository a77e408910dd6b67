"""Retrieval benchmark on a BEIR dataset, through the same `KnowledgeStore.search` the agent uses.

    python -m bench.retrieval --data ../shared/data/beir/scifact [--mode bm25|dense|hybrid|adaptive]
        [--queries FILE] [--qrels FILE] [--json] [--index-dir DIR] [--database-url URL]

Ingests ``corpus.jsonl`` into a FRESH knowledge base (a temporary DATA_DIR with the embedded
Postgres 16 + pgvector, the engine every process shares) unless ``--index-dir`` names one to
reuse, or ``--database-url`` a Postgres server (with pgvector) to use, then runs every query of
each mode and prints nDCG@10, Recall@100, p50/p95 latency per query (query embedding, both legs,
fusion and payload fetch included), the ingestion rate, and the raw embedding throughput of the
same model on the same chunk texts (`SentenceTransformer.encode` at its best batch size), beside
the published anchors.

Any folder in the BEIR layout works (``corpus.jsonl``, ``queries.jsonl`` or
``queries-test.jsonl``, ``qrels/test.tsv`` or ``qrels-test.tsv``): `bench.classic_sets` converts
Cranfield and Vaswani/NPL, the held-out corpora of the fusion (the anchors printed are
SciFact's).

Modes (every one is one `KnowledgeStore.search` call per query, as the agent makes it):
- bm25: lambda 0, the lexical leg alone;  dense: lambda 1, the dense leg alone;
- rrf: weighted RRF at ``--lambda`` (0.5) and nothing else (no reranking stage);
- hybrid: the agent's default pipeline at ``--lambda``: the query's own weight from the legs'
  agreement (`tools.knowledge.fusion`, FUSION_ADAPTIVE), weighted RRF, then the best
  ``--fetch-k`` (RERANKER_FETCH_K) candidates reordered by their relevance score;
- adaptive: like hybrid with lambda from `evaluate_query` per query (its cost is timed too).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from agents.knowledge.strategies import evaluate_query  # noqa: E402
from config import load_settings  # noqa: E402
from tools.knowledge.chunking import chunk_text  # noqa: E402
from tools.knowledge.ingest import embedding_input  # noqa: E402
from tools.knowledge.jsonl import jsonl_lines  # noqa: E402
from tools.knowledge.loaders import load_bytes, read_jsonl_text  # noqa: E402
from tools.knowledge.metrics import evaluate, read_qrels, read_queries  # noqa: E402
from tools.knowledge.store import KnowledgeStore  # noqa: E402

MODES = ("bm25", "dense", "rrf", "hybrid", "adaptive")
ANCHORS = {
    "bm25": "BM25 0.665 (BEIR) - 0.679 (Anserini)",
    "dense": "all-MiniLM-L6-v2 dense 0.645 (MTEB)",
    "rrf": "BM25+dense RRF 0.7175 (Qdrant)",
    "hybrid": "target >= 0.72, p50 <= 50 ms",
    "adaptive": "target >= 0.72, p50 <= 50 ms",
}
EXTRA_ANCHOR = "BM25 + cross-encoder rerank (top 100): 0.688 (BEIR)"


def _find(data: Path, names: list[str]) -> Path:
    for name in names:
        if (data / name).exists():
            return data / name
    raise SystemExit(f"none of {names} found in {data}; pass the file explicitly")


def _chunk_texts(corpus: Path, chunk_size: int, overlap: int) -> list[str]:
    """What the indexer embeds for `corpus`: every chunk's embedding input."""
    loaded = load_bytes(corpus.name, corpus.read_bytes(), str(corpus))
    return [
        embedding_input(doc.title, chunk)
        for doc in loaded.documents
        for chunk in chunk_text(doc.text, chunk_size, overlap)
    ]


def corpus_records(corpus: Path) -> list[str]:
    """The records of a JSON Lines corpus, split as the loader splits them (`jsonl_lines`: at
    "\n" only, the file read without newline translation), so a string holding U+0085, U+2028
    or a raw "\r" stays in its record."""
    return [line for _, line in jsonl_lines(read_jsonl_text(corpus))]


def write_sample(corpus: Path, documents: int, sample: Path) -> Path:
    """The first ``documents`` records of ``corpus``, written as they are to ``sample``."""
    records = corpus_records(corpus)[:documents]
    sample.write_bytes(("\n".join(records) + "\n").encode("utf-8"))
    return sample


async def throughput(
    store: KnowledgeStore, corpus: Path, documents: int, batches: tuple[int, ...], work: Path
) -> dict[str, Any]:
    """Ingestion vs raw encoding on the same texts: the first `documents` of `corpus` go into
    an empty knowledge base of their own (timed, the CLI's path), then
    `SentenceTransformer.encode` embeds the same chunk texts at its best batch size."""
    sample = write_sample(corpus, documents, work / f"throughput-{os.getpid()}.jsonl")
    report = await store.ingest_paths([sample])
    for doc in await store.list_documents():  # leave nothing behind in a reused DATA_DIR
        await store.delete_document(doc.id)
    settings = store.settings
    texts = _chunk_texts(sample, settings.knowledge.chunk_size, settings.knowledge.chunk_overlap)
    sample.unlink()
    raw = raw_encoding(getattr(store.embeddings, "_model", None), texts, batches)
    return _versus(report.added, report.chunks, report.seconds, raw)


def full_throughput(
    model: Any, corpus: Path, ingest: dict[str, Any], batches: tuple[int, ...], settings: Any
) -> dict[str, Any]:
    """The full ingestion just timed vs `SentenceTransformer.encode` on all its chunk texts."""
    texts = _chunk_texts(corpus, settings.knowledge.chunk_size, settings.knowledge.chunk_overlap)
    raw = raw_encoding(model, texts, batches)
    return _versus(ingest["indexed"], len(texts), ingest["seconds"], raw)


def _versus(documents: int, chunks: int, seconds: float, raw: dict[str, Any]) -> dict[str, Any]:
    """An ingestion of `documents` in `seconds` beside the raw encoding of its chunk texts."""
    return {
        "documents": documents,
        "chunks": chunks,
        "ingest_seconds": seconds,
        "ingest_documents_per_second": documents / seconds,
        "raw": raw,
        "raw_documents_per_second": documents / raw["seconds"],
        "ratio": raw["seconds"] / seconds,
    }


def raw_encoding(model: Any, texts: list[str], batches: tuple[int, ...]) -> dict[str, Any]:
    """`SentenceTransformer.encode` throughput on `texts`: each batch size timed on a sample,
    then the best one on every text (one call, as a user of the library would write it)."""
    sample = texts[:: max(1, len(texts) // 128)][:128]
    timing: dict[int, float] = {}
    for size in batches:
        started = time.perf_counter()
        model.encode(sample, batch_size=size, normalize_embeddings=True, show_progress_bar=False)
        timing[size] = len(sample) / (time.perf_counter() - started)
    best = max(timing, key=lambda k: timing[k])
    started = time.perf_counter()
    model.encode(texts, batch_size=best, normalize_embeddings=True, show_progress_bar=False)
    seconds = time.perf_counter() - started
    return {
        "best_batch_size": best,
        "sample_texts_per_second": {str(k): round(v, 1) for k, v in timing.items()},
        "texts": len(texts),
        "seconds": seconds,
        "texts_per_second": len(texts) / seconds,
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


async def _ingest(store: KnowledgeStore, corpus: Path, quiet: bool) -> dict[str, Any]:
    from tqdm import tqdm

    total = len(corpus_records(corpus))
    bar = tqdm(total=total, unit="doc", desc="ingest", disable=quiet, file=sys.stderr)

    def progress(event: Any) -> None:
        bar.update(event.documents_done - bar.n)

    report = await store.ingest_paths([corpus], progress=progress)
    bar.close()
    if not report.ok:
        raise SystemExit(f"ingestion failed: {json.dumps(report.to_dict())[:2000]}")
    stats = await store.stats()
    return {
        "documents": report.added + report.replaced + report.unchanged,
        "indexed": report.added + report.replaced,
        "skipped_unchanged": report.unchanged,
        "chunks": stats["chunks"],
        "seconds": report.seconds,
        "documents_per_second": report.documents_per_second,
    }


async def _run_mode(
    store: KnowledgeStore,
    mode: str,
    queries: dict[str, str],
    lam: float,
    depth: int,
    fetch_k: int,
) -> tuple[dict[str, list[str]], list[float], float]:
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    lambdas: list[float] = []
    for qid, text in queries.items():
        started = time.perf_counter()
        weight = {"bm25": 0.0, "dense": 1.0, "rrf": lam, "hybrid": lam}.get(mode)
        if weight is None:
            weight = evaluate_query(text).lambda_mult
        result = await store.search(
            text,
            lambda_mult=weight,
            top_k=depth,
            fetch_k=fetch_k,
            rerank=False,
            score_rerank=mode != "rrf",
            distinct_documents=True,
        )
        latencies.append((time.perf_counter() - started) * 1000)
        lambdas.append(weight)
        run[qid] = [h.external_id or h.document_id for h in result.hits]
    return run, latencies, statistics.fmean(lambdas)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="BEIR dataset folder")
    parser.add_argument("--mode", choices=MODES, action="append", help="repeatable; default all")
    parser.add_argument("--queries", type=Path, help="default: queries-test.jsonl / queries.jsonl")
    parser.add_argument("--qrels", type=Path, help="default: qrels-test.tsv / qrels/test.tsv")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("--lambda", dest="lam", type=float, default=0.5, help="hybrid weight")
    parser.add_argument("--index-dir", type=Path, help="reuse/keep this DATA_DIR (default: fresh)")
    parser.add_argument(
        "--database-url", help="a Postgres with pgvector (default: the embedded one in DATA_DIR)"
    )
    parser.add_argument(
        "--batch-sizes", default="8,16,32,64", help="encode batch sizes to try (raw encoding)"
    )
    parser.add_argument(
        "--throughput-docs",
        type=int,
        default=-1,
        help="ingestion vs raw encoding: -1 (default) compares the full ingestion above with "
        "encoding every chunk text of the corpus; N > 0 ingests the first N documents into a "
        "side knowledge base instead (quicker); 0 skips it",
    )
    parser.add_argument("--depth", type=int, default=100, help="documents ranked per query")
    parser.add_argument(
        "--fetch-k", type=int, help="candidates reranked (default: RERANKER_FETCH_K)"
    )
    args = parser.parse_args(argv)

    corpus = _find(args.data, ["corpus.jsonl"])
    queries_path = args.queries or _find(args.data, ["queries-test.jsonl", "queries.jsonl"])
    qrels_path = args.qrels or _find(args.data, ["qrels-test.tsv", "qrels/test.tsv"])
    qrels = read_qrels(qrels_path)
    queries = {q: t for q, t in read_queries(queries_path).items() if q in qrels}
    modes = args.mode or list(MODES)

    data_dir = args.index_dir or Path(tempfile.mkdtemp(prefix="switchyard-bench-"))
    if args.index_dir is None:
        data_dir.chmod(0o711)  # pgserver runs Postgres as its own user when started by root
    settings = load_settings(
        data_dir=data_dir,
        database_url=args.database_url,
        max_document_bytes=max(corpus.stat().st_size, 20 * 1024 * 1024),
    )
    fetch_k = args.fetch_k or settings.knowledge.reranker_fetch_k
    try:
        store = await KnowledgeStore.open(settings, name="bench")
        ingest = await _ingest(store, corpus, args.json)
        batches = tuple(int(b) for b in args.batch_sizes.split(","))
        raw: dict[str, Any] | None = None
        model = getattr(store.embeddings, "_model", None)
        if args.throughput_docs < 0 and model is not None and ingest["indexed"]:
            raw = full_throughput(model, corpus, ingest, batches, settings)
        elif args.throughput_docs > 0 and model is not None:
            side = await KnowledgeStore.open(
                settings, name=f"throughput_{os.getpid()}", embeddings=store.embeddings
            )
            raw = await throughput(side, corpus, args.throughput_docs, batches, data_dir)
            await side.close()
        for text in list(queries.values())[:5]:  # warm-up: first-call costs are not per-query
            await store.search(text, lambda_mult=0.5, top_k=10, fetch_k=10, rerank=False)
        rows: list[dict[str, Any]] = []
        for mode in modes:
            cache = getattr(store.embeddings, "queries", None)
            if cache is not None:  # each mode pays its queries' embedding, as a new query would
                cache.clear()
            run, latencies, mean_lambda = await _run_mode(
                store, mode, queries, args.lam, args.depth, fetch_k
            )
            scores = evaluate(run, qrels, ndcg_k=10, recall_k=100)
            rows.append(
                {
                    "mode": mode,
                    "ndcg@10": round(scores["ndcg@10"], 4),
                    "recall@100": round(scores["recall@100"], 4),
                    "p50_ms": round(_percentile(latencies, 0.5), 2),
                    "p95_ms": round(_percentile(latencies, 0.95), 2),
                    "mean_lambda": round(mean_lambda, 3),
                    "anchor": ANCHORS[mode],
                }
            )
        await store.close()
    finally:
        if args.index_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)

    out: dict[str, Any] = {
        "dataset": str(args.data),
        "queries": len(queries),
        "engine": f"Postgres {'server' if args.database_url else 'embedded (pgserver 16)'}: "
        f"pgvector HNSW (dense) + SQL BM25 (lexical), weighted RRF k={settings.knowledge.rrf_k}, "
        f"relevance rerank of the top {fetch_k}",
        "embedding_model": settings.embeddings.model,
        "machine": f"{platform.machine()} x{os.cpu_count()} CPU, "
        f"Python {platform.python_version()}",
        "ingestion": {k: round(v, 2) if isinstance(v, float) else v for k, v in ingest.items()},
        "raw_encoding": raw,
        "modes": rows,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    ing = out["ingestion"]
    print(f"dataset  {out['dataset']}  ({ing['documents']} documents, {ing['chunks']} chunks, "
          f"{len(queries)} queries)")  # fmt: skip
    print(f"engine   {out['engine']}; {out['embedding_model']}; {out['machine']}")
    print(f"ingest   {ing['indexed']} indexed + {ing['skipped_unchanged']} unchanged in "
          f"{ing['seconds']} s = {ing['documents_per_second']} documents/s")  # fmt: skip
    if raw is not None:
        enc = raw["raw"]
        print(f"speed    {raw['documents']} documents, {raw['chunks']} chunks into an empty "
              f"knowledge base: ingestion {raw['ingest_seconds']:.1f} s = "
              f"{raw['ingest_documents_per_second']:.1f} documents/s; raw "
              f"SentenceTransformer.encode of the same chunk texts (batch "
              f"{enc['best_batch_size']}, best of {enc['sample_texts_per_second']} texts/s) "
              f"{enc['seconds']:.1f} s = {raw['raw_documents_per_second']:.1f} documents/s; "
              f"ingestion = {raw['ratio']:.2f} x raw encoding (target >= 0.8)")  # fmt: skip
    print()
    header = f"{'mode':<9} {'nDCG@10':>8} {'R@100':>7} {'p50 ms':>7} {'p95 ms':>7} {'λ':>5}  anchor"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['mode']:<9} {row['ndcg@10']:>8.4f} {row['recall@100']:>7.4f} "
            f"{row['p50_ms']:>7.2f} {row['p95_ms']:>7.2f} {row['mean_lambda']:>5.2f}  "
            f"{row['anchor']}"
        )
    print(f"{'':<43}  also: {EXTRA_ANCHOR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
