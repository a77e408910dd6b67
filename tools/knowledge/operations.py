"""The knowledge capability's operations: search, list, show and delete documents.

Each is a typed function ``(ctx, payload) -> result`` on the process's `KnowledgeStore`
(``ctx.engine(KnowledgeStore)``: `EngineNotOpen` when the knowledge component did not open it),
served by ``app/routers/knowledge.py`` and listed in :data:`OPERATIONS` for agents and MCP.

Who sees and changes what (README, "Collections: who sees what"): every document is in one
collection (`tools.knowledge.scope`). ``ctx.owner`` reads its private collection plus every
shared one -- searching, listing and showing cover exactly that, as the knowledge agent's
retrieval and the routing probe do. Only the owner changes its private documents; shared ones
are changed by the owners in KNOWLEDGE_SHARED_WRITERS, and an upload made before collections
(migrated into ``shared``, source ``upload:<owner>/...``) also by its uploader. Without API keys
every caller is the one :data:`ANONYMOUS` owner, who may change everything. Uploading stays in
the route (multipart files, progress events), on the same store.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from tools.knowledge.scope import (
    PRIVATE,
    Filters,
    Scope,
    check_shared_name,
    is_private,
    private_collection,
)
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import DocumentRecord
from tools.operations import (
    Arguments,
    NotFound,
    Operation,
    OperationContext,
    OperationError,
    operation,
)

CAPABILITY = "knowledge"
#: The owner of every caller when no API keys are set (the app's ``app.security.ANONYMOUS``
#: and a run context's default owner): it may change every document.
ANONYMOUS = "anonymous"
#: Longest query searched: a question is far shorter, and the embedding model reads ~256 word
#: pieces of it anyway.
MAX_QUERY_CHARS = 2000
#: ``mode`` -> the semantic leg's weight (``hybrid`` uses ``lambda_mult``).
MODES = {"lexical": 0.0, "semantic": 1.0}


def upload_namespace(owner: str) -> str:
    """Where ``owner``'s uploads live (``upload:<namespace><name>``): ``<owner>/`` per API key,
    nothing for the anonymous owner."""
    return "" if owner == ANONYMOUS else f"{owner}/"


def may_write_shared(store: KnowledgeStore, owner: str) -> bool:
    """Whether ``owner`` may upload to and delete from shared collections."""
    return owner == ANONYMOUS or owner in store.settings.knowledge.shared_writers


def upload_collection(store: KnowledgeStore, owner: str, name: str | None) -> str:
    """The stored collection an upload by ``owner`` to ``name`` goes to (default: the owner's
    private one); `OperationError` 422 for a bad name, 403 for a shared one it may not write."""
    if not name or name == PRIVATE:
        return private_collection(owner)
    try:
        check_shared_name(name)
    except ValueError as exc:
        raise OperationError(str(exc), status=422) from exc
    if not may_write_shared(store, owner):
        raise OperationError(
            f"This API key may not write the shared collection {name!r}: upload to your private "
            "collection (leave 'collection' out), or ask the operator to add your owner id to "
            "KNOWLEDGE_SHARED_WRITERS.",
            status=403,
        )
    return name


def may_delete(store: KnowledgeStore, owner: str, record: DocumentRecord, stored: str) -> bool:
    """Whether ``owner`` may delete ``record`` (in stored collection ``stored``): its own
    private document; a shared one when it may write shared collections, or when it uploaded it
    before collections existed (``upload:<owner>/...``, migrated into ``shared``)."""
    if is_private(stored):
        return stored == private_collection(owner)
    return may_write_shared(store, owner) or record.source.startswith(f"upload:{owner}/")


def scope_of(ctx: OperationContext, filters: Filters | None = None) -> Scope:
    """What ``ctx``'s caller reads."""
    return Scope(owner=ctx.owner, filters=filters)


def not_found(document_id: uuid.UUID) -> NotFound:
    return NotFound(
        f"Document {str(document_id)!r} not found; GET /documents lists the ones you can read."
    )


# --- models -------------------------------------------------------------------------------------


class SearchDocuments(Arguments):
    """A search of the documents the caller reads (its private collection and the shared ones),
    as the knowledge agent retrieves: hybrid lexical + semantic by default."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to find.")
    top_k: int | None = Field(
        None, ge=1, le=100, description="Chunks returned (default RETRIEVAL_TOP_K)."
    )
    filters: Filters | None = Field(
        None,
        description="Only documents matching these: collection, source, title, and metadata "
        "conditions (value, list, or {eq, in, gt, gte, lt, lte}); applied inside the search.",
    )
    mode: Literal["hybrid", "lexical", "semantic"] = Field(
        "hybrid", description="hybrid (both legs, weighted by lambda_mult), lexical or semantic."
    )
    lambda_mult: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of the semantic leg in hybrid mode."
    )


class DocumentHit(BaseModel):
    """One chunk found: its document, collection, place and text, with its score (0..1)."""

    document_id: str
    chunk_id: str
    title: str
    source: str
    collection: str = Field(description="'private' (the caller's own) or a shared collection.")
    page: str | None = Field(description="Page, slide or sheet the chunk came from, if known.")
    chunk: int = Field(description="The chunk's position in its document (0-based).")
    score: float = Field(description="Relevance (the cross-encoder's when reranked).")
    text: str


class DocumentSearch(BaseModel):
    """The chunks found, best first, and how they were ordered."""

    query: str
    mode: str
    lambda_mult: float
    ordering: str = Field(description="What ordered the best hits: rrf, relevance, cross-encoder.")
    reranked: bool
    hits: list[DocumentHit]


class ListDocuments(Arguments):
    """One page of the documents the caller reads, sorted by source then title."""

    collection: str | None = Field(
        None, max_length=80, description="Only this collection ('private' or a shared one)."
    )

    @field_validator("collection")
    @classmethod
    def _a_collection(cls, value: str | None) -> str | None:
        if value is not None and value != PRIVATE:
            check_shared_name(value)
        return value

    limit: int = Field(100, ge=1, le=1000, description="Page size.")
    # bounded: an offset past Postgres's bigint was a 500 (NumericValueOutOfRange)
    offset: int = Field(0, ge=0, le=1_000_000, description="Documents to skip.")


class DocumentPage(BaseModel):
    """A page of documents (registry entries), the total, and where the next page starts."""

    documents: list[DocumentRecord]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class DocumentRef(Arguments):
    """One document, by its id."""

    document_id: uuid.UUID


class DocumentEntry(BaseModel):
    """One document's registry entry (title, source, chunks, content hash, times)."""

    document: DocumentRecord


class DocumentDeleted(BaseModel):
    """The document that was removed with its chunks."""

    document_id: uuid.UUID


# --- operations ---------------------------------------------------------------------------------


@operation(CAPABILITY, read_only=True)
async def search_documents(ctx: OperationContext, payload: SearchDocuments) -> DocumentSearch:
    """Search the documents you can read (your private collection and the shared ones) for the
    chunks that answer a query, optionally filtered by collection, source, title or metadata:
    hybrid lexical + semantic search, best first, each with its document's title, source,
    collection and page."""
    store = ctx.engine(KnowledgeStore)
    lam = MODES.get(payload.mode, payload.lambda_mult)
    try:
        result = await store.search(
            payload.query,
            lambda_mult=lam,
            top_k=payload.top_k,
            scope=scope_of(ctx, payload.filters),
        )
    except ValueError as exc:  # e.g. a collection filter naming a private one of another key
        raise OperationError(str(exc), status=422) from exc
    return DocumentSearch(
        query=result.query,
        mode=payload.mode,
        lambda_mult=result.lambda_mult,
        ordering=result.ordering,
        reranked=result.reranked,
        hits=[
            DocumentHit(
                document_id=h.document_id, chunk_id=h.chunk_id, title=h.title, source=h.source,
                collection=h.collection, page=h.page, chunk=h.chunk_index,
                score=round(h.score, 6), text=h.text,
            )
            for h in result.hits
        ],
    )  # fmt: skip


@operation(CAPABILITY, read_only=True)
async def list_documents(ctx: OperationContext, payload: ListDocuments) -> DocumentPage:
    """List the documents you can read (your private collection and the shared ones), with
    their collection, sorted by source then title, one page at a time."""
    store = ctx.engine(KnowledgeStore)
    filters = Filters(collection=payload.collection) if payload.collection else None
    scope = scope_of(ctx, filters)
    try:
        page = await store.list_documents(scope, limit=payload.limit, offset=payload.offset)
    except ValueError as exc:
        raise OperationError(str(exc), status=422) from exc
    total = (await store.stats(scope))["documents"]
    following = payload.offset + len(page)
    return DocumentPage(
        documents=page,
        total=total,
        limit=payload.limit,
        offset=payload.offset,
        next_offset=following if following < total else None,
    )


@operation(CAPABILITY, read_only=True)
async def get_document(ctx: OperationContext, payload: DocumentRef) -> DocumentEntry:
    """Show one document you can read: title, source, collection, metadata, chunk count,
    content hash, times."""
    found = await ctx.engine(KnowledgeStore).get_document(str(payload.document_id), scope_of(ctx))
    if found is None:
        raise not_found(payload.document_id)
    return DocumentEntry(document=found)


@operation(CAPABILITY)
async def delete_document(ctx: OperationContext, payload: DocumentRef) -> DocumentDeleted:
    """Delete a document with its chunks: one of your private collection, or a shared one when
    your key may write shared collections."""
    store = ctx.engine(KnowledgeStore)
    document_id = payload.document_id
    found = await store.locate(str(document_id), scope_of(ctx))
    if found is None:
        raise not_found(document_id)
    record, stored = found
    if not may_delete(store, ctx.owner, record, stored):
        raise OperationError(
            f"Document {str(document_id)!r} is in the shared collection {record.collection!r}, "
            "which this API key may not change (the operator lists the keys that may in "
            "KNOWLEDGE_SHARED_WRITERS).",
            status=403,
        )
    if not await store.delete_document(str(document_id), stored):  # deleted meanwhile
        raise not_found(document_id)
    return DocumentDeleted(document_id=document_id)


#: The knowledge capability's operations (the app composes every capability's tuple).
OPERATIONS: tuple[Operation[Any, Any], ...] = (
    search_documents,
    list_documents,
    get_document,
    delete_document,
)
