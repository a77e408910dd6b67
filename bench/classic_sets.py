"""Converts two classic IR test collections to the BEIR layout `bench.retrieval` reads.

    python -m bench.classic_sets cranfield SRC_DIR OUT_DIR   # cran.all.1400, cran.qry,
                                                            # QRelsCorrectedforTRECeval
    python -m bench.classic_sets vaswani SRC_DIR OUT_DIR     # corpus/doc-text.trec,
                                                            # query-text.trec, qrels

Held-out corpora for the fusion (issue 24 item 7) when the BEIR sets beyond SciFact cannot be
downloaded: Cranfield (1,400 aeronautics abstracts, 225 queries, graded judgments) and
Vaswani / NPL (11,429 physics abstracts, 93 queries), both public test collections of the
Glasgow IR group, shipped for example by Terrier (``share/vaswani_npl`` of terrier-core) and
by many course repositories (Cranfield). The output is ``corpus.jsonl``, ``queries.jsonl``
and ``qrels/test.tsv`` in OUT_DIR; nothing is committed (see the README).

Cranfield's queries are numbered 1..225 in the judgments in file order (the ``.I`` numbers of
``cran.qry`` skip some), as every evaluation of it does.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path


def _fields(text: str, marker: str) -> Iterator[tuple[str, dict[str, str]]]:
    """SMART-format records (``.I id`` then ``.X`` fields) as (id, {field: text})."""
    for block in re.split(r"^\.I\s+", text, flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        fields: dict[str, str] = {}
        for part in re.split(r"^\.(?=[A-Z]\s*$)", rest, flags=re.M):
            key, _, body = part.partition("\n")
            if key.strip():
                fields[key.strip()] = " ".join(body.split())
        yield head.strip(), fields


def cranfield(src: Path) -> tuple[list[dict[str, str]], dict[str, str], list[tuple[str, str, int]]]:
    docs_text = (src / "cran.all.1400").read_text(encoding="utf-8", errors="replace")
    corpus = [
        {"_id": doc_id, "title": f.get("T", ""), "text": f.get("W", "") or f.get("T", "")}
        for doc_id, f in _fields(docs_text, "I")
        if f.get("W") or f.get("T")  # 471 and 995 are empty records: left out
    ]
    queries_text = (src / "cran.qry").read_text(encoding="utf-8", errors="replace")
    queries = {
        str(n): f.get("W", "") for n, (_, f) in enumerate(_fields(queries_text, "I"), start=1)
    }
    qrels = []
    for line in (src / "QRelsCorrectedforTRECeval").read_text().split("\n"):
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            qrels.append((parts[0], parts[2], int(parts[3])))
    return corpus, queries, qrels


def vaswani(src: Path) -> tuple[list[dict[str, str]], dict[str, str], list[tuple[str, str, int]]]:
    docs_text = (src / "corpus" / "doc-text.trec").read_text(encoding="utf-8", errors="replace")
    corpus = [
        {"_id": m.group(1).strip(), "title": "", "text": " ".join(m.group(2).split())}
        for m in re.finditer(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", docs_text, flags=re.S)
    ]
    topics = (src / "query-text.trec").read_text(encoding="utf-8", errors="replace")
    queries = {
        m.group(1).strip(): " ".join(m.group(2).split()).lower()
        for m in re.finditer(r"<num>(.*?)</num>\s*<title>(.*?)</title>", topics, flags=re.S)
    }
    qrels = []
    for line in (src / "qrels").read_text().split("\n"):
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            qrels.append((parts[0], parts[2], int(parts[3])))
    return corpus, queries, qrels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection", choices=("cranfield", "vaswani"))
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    corpus, queries, qrels = (cranfield if args.collection == "cranfield" else vaswani)(args.src)
    (args.out / "qrels").mkdir(parents=True, exist_ok=True)
    with (args.out / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc in corpus:
            out.write(json.dumps(doc) + "\n")
    with (args.out / "queries.jsonl").open("w", encoding="utf-8") as out:
        for qid, text in queries.items():
            out.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with (args.out / "qrels" / "test.tsv").open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for qid, did, rel in qrels:
            out.write(f"{qid}\t{did}\t{rel}\n")
    judged = len({q for q, _, _ in qrels})
    print(f"{args.collection}: {len(corpus)} documents, {len(queries)} queries "
          f"({judged} judged), {len(qrels)} judgments -> {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
