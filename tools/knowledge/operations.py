"""The knowledge capability's operations: search, list, show and delete documents.

Each is a typed function ``(ctx, payload) -> result`` on the process's `KnowledgeStore`
(``ctx.engine(KnowledgeStore)``: `EngineNotOpen` when the knowledge component did not open it),
served by ``app/routers/knowledge.py`` and listed in :data:`OPERATIONS` for agents and MCP.

Who sees and changes what (README, "Who sees and changes documents"): the knowledge base is one
collection that every owner reads (a team's handbook), so searching, listing and showing cover
all of it, as the knowledge agent's retrieval does. Changing it is scoped to the owner: an
owner's uploads are stored as ``upload:<owner>/<name>`` and only that owner may delete them
(403 for another owner's document or one from ``main.py ingest``, which is the operator's);
without API keys every caller is the one :data:`ANONYMOUS` owner, who may change everything.
Uploading stays in the route (multipart files, progress events), on the same store.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field

from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import DocumentRecord, SearchHit
from tools.operations import NotFound, Operation, OperationContext, OperationError, operation

CAPABILITY = "knowledge"
#: The owner of every caller when no API keys are set (the app's ``app.security.ANONYMOUS``
#: and a run context's default owner): it may change every document.
ANONYMOUS = "anonymous"
#: Longest query searched: a question is far shorter, and the embedding model reads ~256 word
#: pieces of it anyway.
MAX_QUERY_CHARS = 2000


def upload_namespace(owner: str) -> str:
    """Where ``owner``'s uploads live (``upload:<namespace><name>``): ``<owner>/`` per API key,
    nothing for the anonymous owner."""
    return "" if owner == ANONYMOUS else f"{owner}/"


def may_change(owner: str, record: DocumentRecord) -> bool:
    """Whether ``owner`` may delete ``record``: its uploader (anyone without API keys)."""
    return owner == ANONYMOUS or record.source.startswith(f"upload:{owner}/")


def not_found(document_id: uuid.UUID) -> NotFound:
    return NotFound(
        f"Document {str(document_id)!r} not found; GET /documents lists the ingested ones."
    )


# --- models -------------------------------------------------------------------------------------


class SearchDocuments(BaseModel):
    """A hybrid search of the knowledge base."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to find.")
    top_k: int | None = Field(
        None, ge=1, le=100, description="Chunks returned (default RETRIEVAL_TOP_K)."
    )
    lambda_mult: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of the semantic leg: 0 lexical only, 1 dense only."
    )


class DocumentSearch(BaseModel):
    """The chunks found, best first, and how they were ordered."""

    query: str
    lambda_mult: float
    ordering: str = Field(description="What ordered the best hits: rrf, relevance, cross-encoder.")
    reranked: bool
    hits: list[SearchHit]


class ListDocuments(BaseModel):
    """One page of the ingested documents, sorted by source then title."""

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


class DocumentRef(BaseModel):
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
    """Search the knowledge base (ingested and uploaded documents) for the chunks that answer
    a query: hybrid lexical + semantic search, best first, each with its document's title and
    source."""
    store = ctx.engine(KnowledgeStore)
    result = await store.search(payload.query, lambda_mult=payload.lambda_mult, top_k=payload.top_k)
    return DocumentSearch(
        query=result.query,
        lambda_mult=result.lambda_mult,
        ordering=result.ordering,
        reranked=result.reranked,
        hits=result.hits,
    )


@operation(CAPABILITY, read_only=True)
async def list_documents(ctx: OperationContext, payload: ListDocuments) -> DocumentPage:
    """List the documents of the knowledge base, sorted by source then title, one page at a
    time."""
    store = ctx.engine(KnowledgeStore)
    page = await store.list_documents(limit=payload.limit, offset=payload.offset)
    total = (await store.stats())["documents"]
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
    """Show one document's registry entry: title, source, chunk count, content hash, times."""
    record = await ctx.engine(KnowledgeStore).get_document(str(payload.document_id))
    if record is None:
        raise not_found(payload.document_id)
    return DocumentEntry(document=record)


@operation(CAPABILITY)
async def delete_document(ctx: OperationContext, payload: DocumentRef) -> DocumentDeleted:
    """Delete a document the caller uploaded, with its chunks (another owner's document, or one
    from ``main.py ingest``, is refused)."""
    store = ctx.engine(KnowledgeStore)
    document_id = payload.document_id
    record = await store.get_document(str(document_id))
    if record is None:
        raise not_found(document_id)
    if not may_change(ctx.owner, record):
        raise OperationError(
            f"Document {str(document_id)!r} was not uploaded with this API key (another key "
            "uploaded it, or it came from main.py ingest); only its uploader can delete it.",
            status=403,
        )
    if not await store.delete_document(str(document_id)):  # deleted meanwhile
        raise not_found(document_id)
    return DocumentDeleted(document_id=document_id)


#: The knowledge capability's operations (the app composes every capability's tuple).
OPERATIONS: tuple[Operation[Any, Any], ...] = (
    search_documents,
    list_documents,
    get_document,
    delete_document,
)
