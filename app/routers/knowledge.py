"""REST for the knowledge base: upload (`POST /documents`), search, list, show and delete.

Every endpoint needs the caller's API key when API_KEYS is set (and counts toward the rate
limit). Documents are in collections (README, "Collections: who sees what"): an upload goes to
the key's private collection unless the form names a shared one (``collection``), which only
the owners in KNOWLEDGE_SHARED_WRITERS may write; every key reads its private collection plus
the shared ones (``main.py ingest`` writes ``shared``). An upload may carry ``metadata`` (a JSON
object of string, number and boolean values, at most MAX_DOCUMENT_METADATA_KEYS keys and
MAX_DOCUMENT_METADATA_BYTES bytes) that ``filters`` of ``POST /documents/search`` and of the chat
options match. With API_KEYS set, an upload is stored as ``upload:<owner>/<name>``, so one
key's upload never replaces another's. Without API_KEYS there is one anonymous owner, who may
change everything. Uploads are checked per file: a file that cannot be ingested (unsupported,
binary, empty, not UTF-8, above MAX_DOCUMENT_BYTES) gets its own error while the others go in,
and nothing already indexed is lost. A body above MAX_REQUEST_BYTES is refused with 413 before
it is read. An upload holding more documents or chunks than one upload may
(MAX_DOCUMENTS_PER_UPLOAD, MAX_CHUNKS_PER_UPLOAD) is refused whole with 413, and one that
would pass the key's quota (MAX_DOCUMENTS_PER_OWNER, MAX_CHUNKS_PER_OWNER, counted over every
collection the key wrote) with 429, before anything of it is embedded.
``POST /documents/stream`` is the same upload with progress events (Server-Sent Events).

Searching, listing, showing and deleting are the knowledge operations
(`tools.knowledge.operations`), which hold the rules above; uploads call the store the knowledge
component opened.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile, status
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette.sse import EventSourceResponse

from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, DEPENDENCIES, SSE, dependency_of, error_responses
from app.operations import OperationContextDep
from app.security import Caller, CallerDep
from app.services import get_services
from tools.knowledge import operations as ops
from tools.knowledge.loaders import IngestLimitExceeded
from tools.knowledge.scope import Scope, check_value
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import FileResult, IngestProgress, IngestReport
from tools.operations import OperationError

log = logging.getLogger(__name__)
router = APIRouter(tags=["knowledge"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

#: Longest upload name kept (the name becomes the document's source ``upload:<name>``).
MAX_NAME_CHARS = 200
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


def _store(request: Request) -> KnowledgeStore:
    """The process's knowledge store (`EngineNotOpen`, answered 503, when it is not open)."""
    return get_services(request).agents.engine(KnowledgeStore)


def upload_name(raw: str | None, index: int) -> str:
    """A safe display name for an upload: its base name without control characters."""
    name = PurePosixPath((raw or "").replace("\\", "/")).name
    name = _UNSAFE.sub("", name).strip()[:MAX_NAME_CHARS]
    return name if name and name not in (".", "..") else f"upload-{index + 1}"


def _too_large(name: str, limit: int) -> FileResult:
    return FileResult(
        path=name,
        status="error",
        error=f"{name}: larger than MAX_DOCUMENT_BYTES ({limit:,} bytes); split the file or "
        "raise MAX_DOCUMENT_BYTES",
    )


def _refusal(exc: IngestLimitExceeded) -> tuple[int, dict[str, Any]]:
    """An upload refused whole: 429 for the key's quota, 413 for the upload's own size."""
    code = status.HTTP_429_TOO_MANY_REQUESTS if exc.per_owner else 413
    return code, {"error": {"status": code, "message": exc.message, "setting": exc.setting}}


def _response_body(report: IngestReport) -> dict[str, Any]:
    body = report.to_dict()
    body["failed_files"] = len(report.failed_files)
    return body


Uploads = Annotated[
    list[UploadFile],
    File(
        description="One or more files: .md, .txt, .rst, .html, .pdf, .docx, .pptx, .xlsx, "
        ".csv, .json or BEIR .jsonl."
    ),
]
CollectionField = Annotated[
    str | None,
    Form(
        description="Where the files go: 'private' (default: this key's own collection) or a "
        "shared collection (keys in KNOWLEDGE_SHARED_WRITERS only)."
    ),
]
MetadataField = Annotated[
    str | None,
    Form(
        description='A JSON object of string, number and boolean values, e.g. {"team": "ops", '
        '"year": 2024}; every uploaded document gets it (filters match it).'
    ),
]
#: An upload's files in order: a ready error, or the index of its bytes among those to ingest.
Slots = list[FileResult | int]


def upload_metadata(raw: str | None, store: KnowledgeStore) -> dict[str, Any]:
    """The upload's ``metadata`` form field as a dict; `OperationError` 422 naming the rule
    (JSON object, scalar values, MAX_DOCUMENT_METADATA_KEYS, MAX_DOCUMENT_METADATA_BYTES)."""
    if raw is None or not raw.strip():
        return {}
    settings = store.settings.knowledge
    most = settings.max_document_metadata_bytes
    if len(raw.encode()) > most:
        raise OperationError(
            f"metadata is larger than MAX_DOCUMENT_METADATA_BYTES ({most:,} bytes); keep fewer "
            "or shorter values",
            status=422,
        )
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise OperationError(f"metadata is not valid JSON ({exc}); send a JSON object, e.g. "
                             '{"team": "ops"}', status=422) from exc  # fmt: skip
    if not isinstance(value, dict):
        raise OperationError('metadata must be a JSON object, e.g. {"team": "ops"}', status=422)
    if len(value) > settings.max_document_metadata_keys:
        raise OperationError(
            f"metadata has {len(value)} keys; at most {settings.max_document_metadata_keys} "
            "(MAX_DOCUMENT_METADATA_KEYS)",
            status=422,
        )
    for key, item in value.items():
        if not key or item is None or not isinstance(item, str | int | float | bool):
            raise OperationError(
                f"metadata {key!r}: keys must be non-empty and values strings, numbers or "
                "booleans (no null, list or object)",
                status=422,
            )
        try:
            check_value(key, "a metadata key")
            check_value(item, f"metadata {key!r}")
        except ValueError as exc:
            raise OperationError(str(exc), status=422) from exc
    return value


def _upload_target(
    who: Caller, store: KnowledgeStore, collection: str | None, metadata: str | None
) -> tuple[str, dict[str, Any]]:
    """The stored collection and metadata of an upload (OperationError 403/422 refusing it)."""
    return ops.upload_collection(store, who.owner, collection), upload_metadata(metadata, store)


async def _read_uploads(
    files: list[UploadFile], limit: int
) -> tuple[list[tuple[str, bytes]], Slots]:
    """The uploads to ingest ``(name, data)``, and every file's slot (see `Slots`)."""
    uploads: list[tuple[str, bytes]] = []
    slots: Slots = []
    seen: set[str] = set()
    for index, upload in enumerate(files):
        name = upload_name(upload.filename, index)
        data = await upload.read(limit + 1)  # never more than the limit in memory
        await upload.close()
        if len(data) > limit:
            slots.append(_too_large(name, limit))
        elif name in seen:  # one name is one document: a second copy would replace the first
            slots.append(FileResult(path=name, status="error", error=f"{name}: sent twice in "
                                    "this upload; rename one of the files"))  # fmt: skip
        else:
            seen.add(name)
            slots.append(len(uploads))
            uploads.append((name, data))
    return uploads, slots


def _outcome(slots: Slots, ingested: IngestReport) -> tuple[int, dict[str, Any]]:
    """The status and body of an upload: 200 with the per-file report when a file went in,
    else 413 (every file too large) or 422, as ``{"error": {...}}``."""
    report = IngestReport(
        files=[s if isinstance(s, FileResult) else ingested.files[s] for s in slots],
        seconds=ingested.seconds,
    )
    body = _response_body(report)
    if any(f.status != "error" for f in report.files):
        return 200, body
    too_large = all(f.error and "MAX_DOCUMENT_BYTES" in f.error for f in report.files)
    code = status.HTTP_413_CONTENT_TOO_LARGE if too_large else 422
    message = "No file could be ingested: " + "; ".join(f.error or f.path for f in report.files)
    return code, {"error": {"status": code, "message": message, **body}}


@router.post("/documents", responses=error_responses(403, 413, 429))
async def upload_documents(
    request: Request,
    who: CallerDep,
    files: Uploads,
    collection: CollectionField = None,
    metadata: MetadataField = None,
) -> Any:
    """Ingest uploaded files into this key's private collection (or the shared ``collection``
    named, for keys allowed to write it), each with ``metadata``; per-file results.

    Uploading a file with the same name again skips it when unchanged and replaces its old
    chunks when changed. Answers 200 when at least one file went in (check each file's
    ``status``), 413 when every file was too large or the upload holds too many documents or
    chunks, 429 when it would pass the key's quota, 422 when no file could be ingested.
    ``POST /documents/stream`` does the same with progress events.
    """
    store = _store(request)
    stored, meta = _upload_target(who, store, collection, metadata)
    uploads, slots = await _read_uploads(files, store.settings.knowledge.max_document_bytes)
    namespace = ops.upload_namespace(who.owner)
    try:
        ingested = (
            await store.ingest_uploads(
                uploads, namespace=namespace, collection=stored, metadata=meta,
                quota_scope=Scope(who.owner),
            )
            if uploads
            else IngestReport()
        )  # fmt: skip
    except IngestLimitExceeded as exc:
        code, body = _refusal(exc)
        return JSONResponse(body, code)
    code, body = _outcome(slots, ingested)
    return body if code == 200 else JSONResponse(body, code)


# Streamed uploads go on when their client leaves (the files were received); the running
# ones are held here so that they are not garbage-collected.
_ingesting: set[asyncio.Task[None]] = set()


def upload_failure(exc: BaseException) -> dict[str, Any]:
    """The ``error`` event of an upload that raised: 503 naming an unavailable dependency."""
    dependency = dependency_of(exc)
    if dependency is None:
        log.error("a streamed upload failed", exc_info=exc)
        return {"error": {"status": 500, "message": f"Internal error ({type(exc).__name__}); "
                          "documents indexed before it are kept"}}  # fmt: skip
    log.warning("a streamed upload failed: %s is unavailable (%s)", dependency, exc)
    what = DEPENDENCIES.get(dependency, dependency)
    message = (f"{what} is unavailable; documents indexed before it are kept, upload the "
               "files again to ingest the rest")  # fmt: skip
    return {"error": {"status": 503, "message": message, "dependency": dependency}}


@router.post(
    "/documents/stream",
    response_class=EventSourceResponse,
    responses={200: SSE, **error_responses(403, 413, 429)},
)
async def upload_documents_stream(
    request: Request,
    who: CallerDep,
    files: Uploads,
    collection: CollectionField = None,
    metadata: MetadataField = None,
) -> Any:
    """``POST /documents`` with progress, as Server-Sent Events.

    ``progress`` after each file is read and after each indexed batch: ``files_total``,
    ``files_done``, ``documents_done``, ``chunks_indexed``, ``current`` (a file name). Then one
    last event: ``done`` with the body ``POST /documents`` answers 200 with, or ``error`` with
    ``{"error": {"status", "message", ...}}`` (422: no file could be ingested; 413 / 429: the
    upload passes a per-upload limit / the key's quota, nothing was indexed; 503: a dependency
    failed part-way, documents indexed before it are kept). When no file can be ingested
    before any work starts (all too large, 413), the answer is that error as JSON. Ingestion
    goes on if the client disconnects.
    """
    store = _store(request)
    stored, meta = _upload_target(who, store, collection, metadata)
    uploads, slots = await _read_uploads(files, store.settings.knowledge.max_document_bytes)
    if not uploads:
        code, body = _outcome(slots, IngestReport())
        return JSONResponse(body, code)
    events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

    async def ingest() -> None:
        def progress(event: IngestProgress) -> None:
            events.put_nowait(("progress", asdict(event)))

        try:
            ingested = await store.ingest_uploads(
                uploads, progress=progress, namespace=ops.upload_namespace(who.owner),
                collection=stored, metadata=meta, quota_scope=Scope(who.owner),
            )  # fmt: skip
        except IngestLimitExceeded as exc:
            events.put_nowait(("error", _refusal(exc)[1]))
            return
        except Exception as exc:
            events.put_nowait(("error", upload_failure(exc)))
            return
        code, body = _outcome(slots, ingested)
        events.put_nowait(("done", body) if code == 200 else ("error", body))

    task = asyncio.create_task(ingest())
    _ingesting.add(task)
    task.add_done_callback(_ingesting.discard)

    async def stream() -> AsyncIterator[dict[str, str]]:
        while True:
            kind, data = await events.get()
            yield {"event": kind, "data": json.dumps(data)}
            if kind != "progress":
                return

    return EventSourceResponse(stream(), ping=15)


@router.post("/documents/search", responses=error_responses(422))
async def search_documents(ctx: OperationContextDep, body: ops.SearchDocuments) -> dict[str, Any]:
    """Search the documents this key reads (its private collection and the shared ones), as
    the knowledge agent retrieves: ``filters`` (collection, source, title, metadata) apply
    inside both legs; ``mode`` hybrid (default), lexical or semantic."""
    return (await ops.search_documents(ctx, body)).model_dump()


@router.get("/documents")
async def list_documents(
    ctx: OperationContextDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="Page size.")] = 100,
    # bounded: an offset past Postgres's bigint was a 500 (NumericValueOutOfRange)
    offset: Annotated[int, Query(ge=0, le=1_000_000, description="Documents to skip.")] = 0,
    collection: Annotated[
        str | None,
        Query(max_length=80, description="Only this collection ('private' or a shared one)."),
    ] = None,
) -> dict[str, Any]:
    """The documents this key reads (its private collection and the shared ones), each with
    its collection, sorted by source then title, one page at a time."""
    try:
        query = ops.ListDocuments(limit=limit, offset=offset, collection=collection)
    except ValidationError as exc:  # a malformed collection name
        raise OperationError(exc.errors()[0]["msg"], status=422) from exc
    page = await ops.list_documents(ctx, query)
    return page.model_dump()


@router.get("/documents/{document_id}", responses=error_responses(404))
async def get_document(ctx: OperationContextDep, document_id: uuid.UUID) -> dict[str, Any]:
    """One document's registry entry (title, source, chunks, content hash, times)."""
    found = await ops.get_document(ctx, ops.DocumentRef(document_id=document_id))
    return found.document.to_dict()


@router.delete(
    "/documents/{document_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(403, 404),
)
async def delete_document(ctx: OperationContextDep, document_id: uuid.UUID) -> Response:
    """Remove a document and its chunks from both indexes (403 for a shared document this key
    may not change; another key's private document is not found)."""
    await ops.delete_document(ctx, ops.DocumentRef(document_id=document_id))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
