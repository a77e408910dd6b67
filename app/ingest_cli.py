"""``python main.py ingest PATH...``: index files and folders into the knowledge base.

Folders are walked recursively for .md, .txt, .rst, .html, .pdf, BEIR-style .jsonl, .docx,
.pptx, .xlsx, .csv and .json files; a progress bar runs on stderr, and a per-file summary
follows on stdout. The files go to a shared collection (``--collection``, default ``shared``)
that every API key reads. Exit status: 0 when every file went in, 1 when some failed (the others
are still ingested), 2 when the knowledge base could not be opened (e.g. DATABASE_URL names a
Postgres without pgvector). It runs next to a running API, Studio or other ingests on the same
DATA_DIR: they all share the one Postgres.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from tqdm import tqdm

from tools.knowledge.types import FileResult, IngestProgress, IngestReport

if TYPE_CHECKING:
    from config import Settings

EXIT_OK, EXIT_SOME_FAILED, EXIT_CANNOT_OPEN = 0, 1, 2


def file_line(result: FileResult) -> str:
    """One line of the summary: status, path, and what happened to its documents."""
    if result.status == "error" and not result.documents:
        return f"  error     {result.path}\n            {result.error}"
    counts: dict[str, int] = {}
    chunks = 0
    for doc in result.documents:
        counts[doc.status] = counts.get(doc.status, 0) + 1
        chunks += doc.chunks if doc.status in ("added", "replaced") else 0
    done = ", ".join(f"{n} {state}" for state, n in counts.items()) or "no documents"
    line = f"  {result.status:<9} {result.path}  ({done}; {chunks} chunks)"
    extra = [result.error] if result.error else []
    extra += result.warnings[:5] + ([f"... {len(result.warnings) - 5} more warnings"]
                                    if len(result.warnings) > 5 else [])  # fmt: skip
    extra += [d.error for d in result.documents if d.error][:5]
    return "\n".join([line, *(f"            {e}" for e in extra if e)])


def summary(report: IngestReport) -> str:
    """The per-file lines and the totals."""
    failed = len(report.failed_files)
    totals = (
        f"{len(report.files)} file(s): {report.added} document(s) added, {report.replaced} "
        f"replaced, {report.unchanged} unchanged, {report.failed_documents} failed; "
        f"{report.chunks} chunk(s) written in {report.seconds:.1f} s "
        f"({report.documents_per_second:.1f} documents/s)"
    )
    if failed:
        totals += f". {failed} file(s) had errors (see above); the others were ingested."
    return "\n".join([*(file_line(f) for f in report.files), totals])


class ProgressBar:
    """A tqdm bar over files, fed by the store's progress events."""

    def __init__(self, *, disable: bool, stream: TextIO | None = None) -> None:
        self.bar = tqdm(
            total=None, unit="file", desc="ingest", disable=disable, file=stream or sys.stderr
        )

    def __call__(self, event: IngestProgress) -> None:
        self.bar.total = event.files_total
        self.bar.update(event.files_done - self.bar.n)
        self.bar.set_postfix(documents=event.documents_done, chunks=event.chunks_indexed)

    def close(self) -> None:
        self.bar.close()


async def ingest(
    settings: Settings,
    paths: Sequence[str],
    *,
    quiet: bool,
    as_json: bool,
    collection: str = "shared",
) -> int:
    """Open the knowledge base, ingest `paths` into the shared `collection`, print the summary;
    returns the exit status."""
    from tools.knowledge.schema import KnowledgeEngineError
    from tools.knowledge.scope import check_shared_name
    from tools.knowledge.store import KnowledgeStore
    from tools.providers.embeddings import EmbeddingError

    try:
        check_shared_name(collection)
    except ValueError as exc:
        print(f"--collection: {exc}", file=sys.stderr)
        return EXIT_CANNOT_OPEN

    try:
        store = await KnowledgeStore.open(settings)
    except (KnowledgeEngineError, EmbeddingError) as exc:
        print(f"Cannot open the knowledge base: {exc}", file=sys.stderr)
        return EXIT_CANNOT_OPEN
    bar = ProgressBar(disable=quiet or as_json)
    try:
        report = await store.ingest_paths(paths, progress=bar, collection=collection)
    except KnowledgeEngineError as exc:
        print(f"Cannot write to the knowledge base: {exc}", file=sys.stderr)
        return EXIT_CANNOT_OPEN
    finally:
        bar.close()
        await store.close()
    print(json.dumps(report.to_dict(), indent=2) if as_json else summary(report))
    return EXIT_OK if report.ok else EXIT_SOME_FAILED


def run(settings: Settings, paths: Sequence[str], *, quiet: bool = False,
        as_json: bool = False, collection: str = "shared") -> int:  # fmt: skip
    """The ``ingest`` command (synchronous entry for `main.py`)."""
    return asyncio.run(ingest(settings, paths, quiet=quiet, as_json=as_json, collection=collection))
