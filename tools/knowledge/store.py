"""`KnowledgeStore`: the async API the knowledge agent, the REST endpoints and the CLI call.

    store = await KnowledgeStore.open(settings)
    report = await store.ingest_paths(["docs/"], progress=callback)
    docs = await store.list_documents(Scope(owner))
    result = await store.search("how do I rotate keys?", lambda_mult=0.7, scope=Scope(owner))
    await store.delete_document(doc_id, collection)
    await store.close()

Storage: one knowledge base in Postgres (`tools.knowledge.KnowledgeEngine`): the registry, chunks
with pgvector embeddings and BM25 postings, in DATABASE_URL's server or, when that is unset, the
embedded Postgres under ``DATA_DIR/postgres`` that every process on the DATA_DIR shares. Every
process therefore sees every committed document in both legs at once. Documents belong to
collections (`tools.knowledge.scope`): every read takes a `Scope` (whose private collection, plus
every shared one, with which filters; the default is the operator's: the shared collections) and
every write names its collection (default ``shared``). Blocking work runs in worker threads:
ingestion (loading, chunking, embedding, writing) on the store's own pool of INGEST_WORKERS
threads, so a large upload never occupies the default pool that chat turns and searches use.

Uploads (`ingest_uploads`) are bounded before anything is embedded: every file is loaded
first (a .jsonl stops at one document past MAX_DOCUMENTS_PER_UPLOAD), then the chunks are
counted (MAX_CHUNKS_PER_UPLOAD) and the uploader's stored documents and chunks with them
(MAX_DOCUMENTS_PER_OWNER, MAX_CHUNKS_PER_OWNER); a refusal is `IngestLimitExceeded`.

Over 400 lines because it is one class, `KnowledgeStore`, whose methods share the engine,
retriever, indexer, embeddings and ingestion threads of one open knowledge base.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.embeddings import Embeddings

from tools.knowledge.analysis import analyze
from tools.knowledge.connect import open_database
from tools.knowledge.engine import KnowledgeEngine
from tools.knowledge.fusion import FusionParams
from tools.knowledge.ingest import Indexer, chunk_document, lexical_text
from tools.knowledge.legacy import import_legacy
from tools.knowledge.loaders import (
    IngestLimitExceeded,
    LoadedDocument,
    LoaderError,
    LoadLimits,
    LoadResult,
    expand_paths,
    load_bytes,
    read_file,
    too_many_documents,
)
from tools.knowledge.reanalyze import reanalyze
from tools.knowledge.retriever import HybridRetriever
from tools.knowledge.schema import KnowledgeEngineError
from tools.knowledge.scope import (
    OPERATOR,
    SHARED,
    Scope,
    Target,
    compile_filters,
    public_name,
    searched,
)
from tools.knowledge.types import (
    DocumentRecord,
    FileResult,
    IngestProgress,
    IngestReport,
    ProgressCallback,
    SearchHit,
    SearchResult,
)
from tools.providers.embeddings import embedding_dimension, get_embeddings
from tools.rerank import CrossEncoderReranker, get_reranker

if TYPE_CHECKING:
    from config import Settings

log = logging.getLogger(__name__)
_T = TypeVar("_T")


class KnowledgeStore:
    """Documents in, hybrid search out. Build with `await KnowledgeStore.open(settings)`."""

    def __init__(
        self,
        settings: Settings,
        *,
        embeddings: Embeddings | None = None,
        name: str | None = None,
        database_url: str | None = None,
        data_dir: Path | None = None,
        reranker: CrossEncoderReranker | None = None,
        batch_documents: int | None = None,
        score_rerank: bool | None = None,
    ) -> None:
        """Blocking constructor (loads the model, connects); prefer `open()` in async code.

        ``database_url`` defaults to DATABASE_URL, else the embedded Postgres of ``data_dir``
        (default DATA_DIR); ``name`` selects the knowledge base (default KNOWLEDGE_BASE_NAME);
        ``batch_documents`` defaults to
        INGEST_BATCH_DOCUMENTS; ``score_rerank`` is the default of `search`'s model-free
        reranking (HYBRID_SCORE_RERANK). Raises `KnowledgeEngineError` naming the fix.
        """
        self.settings = settings
        name = name if name is not None else settings.knowledge.base_name
        self.name = name
        self.data_dir = Path(data_dir if data_dir is not None else settings.storage.data_dir)
        self.embeddings = embeddings if embeddings is not None else get_embeddings(settings)
        dimension = embedding_dimension(self.embeddings)
        model_name = str(getattr(self.embeddings, "model_name", settings.embeddings.model))
        # the embedded Postgres (when no URL is set) is used until `close`
        url, self._embedded = open_database(
            database_url or settings.storage.database_url, self.data_dir
        )
        try:
            self.engine = KnowledgeEngine(url, kb=name, dimension=dimension, model=model_name)
        except BaseException:
            self._release_database()
            raise
        self._reranker = reranker
        #: the lexical analyzer of ingest and query (KNOWLEDGE_ANALYZER)
        self.analyzer: str = settings.knowledge.analyzer
        self.retriever = HybridRetriever(
            self.engine,
            self.embeddings,
            rrf_k=settings.knowledge.rrf_k,
            reranker=self._get_reranker,
            dense_floor=settings.knowledge.dense_relevance_floor,
            dense_ceiling=settings.knowledge.dense_relevance_ceiling,
            analyzer=self.analyzer,
            phrase_boost=settings.knowledge.phrase_boost,
            phrase_slop=settings.knowledge.phrase_slop,
            fusion=FusionParams(
                adaptive=settings.knowledge.fusion_adaptive,
                agreement_depth=settings.knowledge.fusion_agreement_depth,
                agreement_gain=settings.knowledge.fusion_agreement_gain,
                rrf_k=settings.knowledge.rrf_k,
                head=settings.knowledge.reranker_fetch_k,
                dense_floor=settings.knowledge.dense_relevance_floor,
                dense_ceiling=settings.knowledge.dense_relevance_ceiling,
            ),
        )
        self.indexer = Indexer(
            self.engine,
            self.embeddings,
            model_name=model_name,
            chunk_size=settings.knowledge.chunk_size,
            chunk_overlap=settings.knowledge.chunk_overlap,
            analyzer=self.analyzer,
        )
        self.batch_documents = (
            batch_documents
            if batch_documents is not None
            else settings.knowledge.ingest_batch_documents
        )
        self.score_rerank = (
            settings.knowledge.hybrid_score_rerank if score_rerank is None else score_rerank
        )
        # Ingestion's own threads: an upload of hours of embedding queues here, never in the
        # default pool that chat turns and searches run their blocking work on.
        self._ingest_pool = ThreadPoolExecutor(
            max_workers=settings.quotas.ingest_workers, thread_name_prefix="ingest"
        )

    @classmethod
    async def open(
        cls, settings: Settings, *, require: bool = True, **kwargs: Any
    ) -> KnowledgeStore:
        """Open (and create if needed) the knowledge base off the event loop; a knowledge base
        left in the old embedded layout under DATA_DIR is imported first (once, logged).

        With ``require`` (default) a database that cannot hold it raises
        `KnowledgeEngineError`; without, that is logged and every later call raises it (the API
        serves everything else and answers the knowledge endpoints 503 naming the fix)."""
        return await asyncio.to_thread(cls.open_blocking, settings, require=require, **kwargs)

    @classmethod
    def open_blocking(
        cls, settings: Settings, *, require: bool = True, **kwargs: Any
    ) -> KnowledgeStore:
        """`open()` for synchronous callers (a worker thread)."""
        store = cls(settings, **kwargs)
        try:
            store.engine.ready()
            import_legacy(store.engine, store.data_dir, analyzer=store.analyzer)
            reanalyze(store.engine, store.analyzer)
        except KnowledgeEngineError as exc:
            if require:
                store.close_blocking()
                raise
            log.error("the knowledge base is unavailable: %s", exc)
        except BaseException:
            store.close_blocking()
            raise
        return store

    async def close(self) -> None:
        """Close the connection pool (ending the use of the embedded Postgres) and the
        ingestion threads."""
        await asyncio.to_thread(self.close_blocking)
        self._ingest_pool.shutdown(wait=False, cancel_futures=True)

    def close_blocking(self) -> None:
        """Close the connection pool and end this store's use of the embedded Postgres."""
        try:
            self.engine.close()
        finally:
            self._release_database()

    def _release_database(self) -> None:
        if self._embedded is not None:
            self._embedded.release()

    async def __aenter__(self) -> KnowledgeStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _get_reranker(self) -> CrossEncoderReranker:
        if self._reranker is None:
            self._reranker = get_reranker(self.settings.knowledge.reranker_model)
        return self._reranker

    # --- ingestion -----------------------------------------------------------------------

    async def ingest_paths(
        self,
        paths: Iterable[str | Path],
        *,
        progress: ProgressCallback | None = None,
        collection: str = SHARED,
    ) -> IngestReport:
        """Ingest files and folders (recursively: .md .txt .rst .html .pdf .jsonl .docx .pptx
        .xlsx .csv .json) into ``collection`` (stored name; default ``shared``).

        Every problem is reported per file (missing path, unsupported, binary, empty, not UTF-8,
        above MAX_DOCUMENT_BYTES, unreadable PDF); the other files are still ingested.
        """
        files = list(expand_paths(paths))
        loads: list[tuple[str, Any]] = [(str(p), p) for p in files]
        return await self._ingest(loads, progress, collection=collection)

    async def ingest_bytes(
        self, name: str, data: bytes, *, source: str | None = None, collection: str = SHARED
    ) -> IngestReport:
        """Ingest an upload. ``source`` (default ``upload:<name>``) identifies it: uploading the
        same source again skips it when unchanged and replaces it when changed."""
        item = (name, (name, data, source or f"upload:{name}"))
        return await self._ingest([item], None, collection=collection)

    async def ingest_uploads(
        self,
        uploads: Sequence[tuple[str, bytes]],
        *,
        progress: ProgressCallback | None = None,
        namespace: str = "",
        collection: str = SHARED,
        metadata: dict[str, Any] | None = None,
        quota_scope: Scope = OPERATOR,
    ) -> IngestReport:
        """Ingest several uploads ``(name, data)`` into ``collection`` (a stored name) in one
        call (embedded in shared batches), each document with ``metadata``.

        Each is identified by ``upload:<namespace><name>`` (see `ingest_bytes`): uploads in
        different namespaces never replace each other. Problems are per upload. The whole
        upload is refused with `IngestLimitExceeded`, before anything is embedded, when it
        holds more documents or chunks than one upload may, or than the namespace's quota
        leaves room for (its uploads in every collection ``quota_scope`` reads: the quota is
        per owner, whichever collections it writes).
        """
        items: list[tuple[str, Any]] = [
            (name, (name, data, f"upload:{namespace}{name}")) for name, data in uploads
        ]
        return await self._ingest(
            items,
            progress,
            quota_prefix=f"upload:{namespace}",
            collection=collection,
            metadata=metadata,
            quota_scope=quota_scope,
        )

    async def ingest_documents(
        self,
        documents: Sequence[LoadedDocument],
        *,
        collection: str = SHARED,
        metadata: dict[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest already-loaded documents (one pseudo-file per call) into ``collection``, each
        with ``metadata``."""
        result = LoadResult(list(documents))
        return await self._ingest(
            [("<documents>", result)], None, collection=collection, metadata=metadata
        )

    async def _off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run blocking ingestion work on the ingestion pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._ingest_pool, functools.partial(fn, *args))

    def _limits(self, max_documents: int | None = None) -> LoadLimits:
        settings = self.settings
        return LoadLimits(
            max_documents=max_documents,
            max_pdf_pages=settings.quotas.max_pdf_pages,
            max_extracted_chars=settings.quotas.max_extracted_chars,
            max_uncompressed_bytes=settings.quotas.max_uncompressed_bytes,
        )

    def _admit(self, documents: list[LoadedDocument], prefix: str, scope: Scope) -> None:
        """Refuse (`IngestLimitExceeded`) an upload whose chunks pass MAX_CHUNKS_PER_UPLOAD, or
        that would pass the owner's document or chunk quota (documents it replaces excluded)."""
        settings = self.settings
        chunks = 0
        for doc in documents:
            chunks += len(
                chunk_document(doc, settings.knowledge.chunk_size, settings.knowledge.chunk_overlap)
            )
            if chunks > settings.quotas.max_chunks_per_upload:
                raise IngestLimitExceeded(
                    f"the upload makes more than {settings.quotas.max_chunks_per_upload:,} chunks "
                    "(MAX_CHUNKS_PER_UPLOAD); nothing was indexed. Split it into smaller "
                    "uploads.",
                    setting="MAX_CHUNKS_PER_UPLOAD",
                )
        held_documents, held_chunks = self.engine.source_totals(
            self.readable(scope), prefix, excluding=sorted({doc.source for doc in documents})
        )
        if held_documents + len(documents) > settings.quotas.max_documents_per_owner:
            raise IngestLimitExceeded(
                f"this API key has {held_documents:,} uploaded documents and the upload adds "
                f"{len(documents):,}; the quota is {settings.quotas.max_documents_per_owner:,} "
                "(MAX_DOCUMENTS_PER_OWNER). Delete documents you no longer need "
                "(DELETE /documents/{id}); nothing was indexed.",
                setting="MAX_DOCUMENTS_PER_OWNER",
                per_owner=True,
            )
        if held_chunks + chunks > settings.quotas.max_chunks_per_owner:
            raise IngestLimitExceeded(
                f"this API key has {held_chunks:,} chunks of uploaded documents and the upload "
                f"adds {chunks:,}; the quota is {settings.quotas.max_chunks_per_owner:,} "
                "(MAX_CHUNKS_PER_OWNER). Delete documents you no longer need "
                "(DELETE /documents/{id}); nothing was indexed.",
                setting="MAX_CHUNKS_PER_OWNER",
                per_owner=True,
            )

    def _load(self, item: Any, limits: LoadLimits | None = None) -> LoadResult:
        limits = limits or self._limits()
        if isinstance(item, LoadResult):
            return item
        if isinstance(item, Path):
            data = read_file(item, self.settings.knowledge.max_document_bytes)
            return load_bytes(item.name, data, str(item.resolve()), limits=limits)
        name, data, source = item
        most = self.settings.knowledge.max_document_bytes
        if len(data) > most:
            raise LoaderError(
                f"{name}: {len(data):,} bytes is above MAX_DOCUMENT_BYTES "
                f"({most:,}); split the file or raise the limit"
            )
        return load_bytes(name, data, source, limits=limits)

    async def _ingest(
        self,
        items: list[tuple[str, Any]],
        progress: ProgressCallback | None,
        *,
        quota_prefix: str | None = None,
        collection: str = SHARED,
        metadata: dict[str, Any] | None = None,
        quota_scope: Scope = OPERATOR,
    ) -> IngestReport:
        """Load, chunk, embed and write ``items``. Without ``quota_prefix`` each file is
        indexed as it is loaded (the CLI's folders need not fit in memory); with it (an
        upload, already in memory) every file is loaded and the upload admitted against the
        per-upload and per-owner limits before anything is embedded."""
        started = time.perf_counter()
        report = IngestReport(files=[FileResult(path=label) for label, _ in items])
        pending: list[tuple[int, LoadedDocument]] = []
        counters = {"files": 0, "documents": 0, "chunks": 0}

        async def emit(current: str) -> None:
            if progress is None:
                return
            event = IngestProgress(
                len(items), counters["files"], counters["documents"], counters["chunks"], current
            )
            outcome = progress(event)
            if inspect.isawaitable(outcome):
                await outcome

        async def flush() -> None:
            if not pending:
                return
            batch = list(pending)
            pending.clear()
            outcomes = await self._off_loop(
                self.indexer.index, [d for _, d in batch], collection, metadata
            )
            for (slot, _), outcome in zip(batch, outcomes, strict=True):
                report.files[slot].documents.append(outcome)
                counters["documents"] += 1
                if outcome.status in ("added", "replaced"):
                    counters["chunks"] += outcome.chunks
            await emit(report.files[batch[-1][0]].path)

        async def queue(slot: int, loaded: LoadResult) -> None:
            for doc in loaded.documents:
                pending.append((slot, doc))
                if len(pending) >= self.batch_documents:
                    await flush()

        cap = self.settings.quotas.max_documents_per_upload
        admitted: list[tuple[int, LoadResult]] = []  # an upload's files, loaded, not yet queued
        held = 0  # their documents
        for slot, (label, item) in enumerate(items):
            result = report.files[slot]
            limits = self._limits()
            if quota_prefix is not None:  # this file may add what the upload's cap leaves
                limits = self._limits(max_documents=cap - held)
            try:
                loaded = await self._off_loop(self._load, item, limits)
            except LoaderError as exc:
                result.status, result.error = "error", str(exc)
            except IngestLimitExceeded:
                raise
            except Exception as exc:  # a parser bug must not stop the other files
                log.exception("loading %s failed", label)
                result.status = "error"
                result.error = f"{label}: unexpected {type(exc).__name__}: {exc}"
            else:
                result.warnings.extend(loaded.warnings)
                if quota_prefix is None:
                    await queue(slot, loaded)
                else:
                    admitted.append((slot, loaded))
                    held += len(loaded.documents)
                    if held > cap:
                        raise too_many_documents(label, cap)
            counters["files"] += 1
            await emit(label)
        if quota_prefix is not None:
            documents = [doc for _, loaded in admitted for doc in loaded.documents]
            await self._off_loop(self._admit, documents, quota_prefix, quota_scope)
            for slot, loaded in admitted:
                await queue(slot, loaded)
        await flush()

        for result in report.files:
            failed = [d for d in result.documents if d.status == "error"]
            if result.status != "error" and (failed or result.warnings):
                result.status = (
                    "error" if failed and len(failed) == len(result.documents) else ("partial")
                )
                if failed and result.error is None:
                    result.error = f"{len(failed)} of {len(result.documents)} documents failed"
        report.seconds = time.perf_counter() - started
        return report

    # --- scope -------------------------------------------------------------------------

    def readable(self, scope: Scope) -> list[str]:
        """The stored collections a search in ``scope`` covers (blocking): its private
        collection and every shared one, narrowed by a collection filter (ValueError for a
        collection the caller cannot name)."""
        return searched(scope, self.engine.shared_collections())

    def target(self, scope: Scope) -> Target:
        """What a search in ``scope`` reads (blocking): `readable` and the compiled filters."""
        where, params = compile_filters(scope.filters)
        return Target(tuple(self.readable(scope)), where, params)

    # --- registry ------------------------------------------------------------------------

    @staticmethod
    def _record(doc_id: str, payload: dict[str, Any]) -> DocumentRecord:
        payload = {**payload, "collection": public_name(str(payload.get("collection", "")))}
        return DocumentRecord.from_payload(doc_id, payload)

    async def list_documents(
        self, scope: Scope = OPERATOR, *, limit: int | None = None, offset: int = 0
    ) -> list[DocumentRecord]:
        """Documents ``scope`` reads, sorted by source then title (one page with ``limit``)."""

        def page() -> list[tuple[str, dict[str, Any]]]:
            return self.engine.list_documents(self.readable(scope), limit=limit, offset=offset)

        return [self._record(i, p) for i, p in await asyncio.to_thread(page)]

    async def get_document(
        self, document_id: str, scope: Scope = OPERATOR
    ) -> DocumentRecord | None:
        """One document ``scope`` reads, or None."""
        found = await self.locate(document_id, scope)
        return found[0] if found is not None else None

    async def locate(
        self, document_id: str, scope: Scope = OPERATOR
    ) -> tuple[DocumentRecord, str] | None:
        """One document ``scope`` reads and its stored collection, or None."""

        def find() -> dict[str, dict[str, Any]]:
            return self.engine.get_documents(self.readable(scope), [document_id])

        payload = (await asyncio.to_thread(find)).get(document_id)
        if payload is None:
            return None
        return self._record(document_id, payload), str(payload["collection"])

    async def delete_document(self, document_id: str, collection: str = SHARED) -> bool:
        """Remove a document of ``collection`` (stored name) with its chunks and postings (one
        transaction: every process's next search no longer finds it). Returns False when there
        is no such document."""
        return await asyncio.to_thread(self.engine.delete_document, collection, document_id)

    async def stats(self, scope: Scope = OPERATOR) -> dict[str, int]:
        """Counts of what ``scope`` reads: documents, chunks, and chunks the lexical leg's
        statistics count."""
        return await asyncio.to_thread(lambda: self.engine.counts(self.readable(scope)))

    def idf_of(self, word: str, scope: Scope = OPERATOR) -> float:
        """idf of a surface word (analyzed first) over what ``scope`` reads; 0.0 for a word no
        chunk holds. Blocking."""
        terms = analyze(word, self.analyzer)
        if not terms:
            return 0.0
        collections = self.readable(scope)
        idf = self.engine.idf(collections, terms)
        if min(self.engine.document_frequency(collections, terms).values()) == 0:
            return 0.0
        return max(idf.values())

    def idf(self, terms: Sequence[str], scope: Scope = OPERATOR) -> dict[str, float]:
        """The idf of index terms over what ``scope`` reads. Blocking."""
        return self.engine.idf(self.readable(scope), terms)

    # --- search --------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        lambda_mult: float = 0.5,
        fetch_k: int | None = None,
        top_k: int | None = None,
        rerank: bool | None = None,
        score_rerank: bool | None = None,
        distinct_documents: bool = False,
        leg_k: int | None = None,
        scope: Scope = OPERATOR,
    ) -> SearchResult:
        """Hybrid search (see `tools.knowledge.retriever`) of what ``scope`` reads, with its
        filters applied inside both legs.

        Defaults come from the settings: ``fetch_k`` = RERANKER_FETCH_K, ``top_k`` =
        RETRIEVAL_TOP_K, ``rerank`` = ENABLE_RERANKING (cross-encoder), ``score_rerank`` =
        the store's ``score_rerank`` (model-free reranking of hybrid results by relevance).
        ``lambda_mult``: 0 = lexical only, 1 = semantic only. ValueError for a bad argument
        (a collection filter naming one the caller cannot read included).
        """
        target = await asyncio.to_thread(self.target, scope)
        return await self.retriever.search(
            query,
            lambda_mult=lambda_mult,
            fetch_k=fetch_k if fetch_k is not None else self.settings.knowledge.reranker_fetch_k,
            top_k=top_k if top_k is not None else self.settings.knowledge.retrieval_top_k,
            rerank=self.settings.knowledge.enable_reranking if rerank is None else rerank,
            score_rerank=self.score_rerank if score_rerank is None else score_rerank,
            distinct_documents=distinct_documents,
            leg_k=leg_k,
            target=target,
        )

    async def relevance(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        lambda_mult: float,
        rerank: bool = False,
        scope: Scope = OPERATOR,
    ) -> list[float]:
        """Scores of `hits` against another `query` (e.g. the original question), on the scale
        their ``score`` uses: the cross-encoder's with ``rerank``, else the hybrid relevance.
        A chunk deleted meanwhile scores 0."""
        if not hits:
            return []
        if rerank:
            reranker = await asyncio.to_thread(self._get_reranker)
            return await reranker.ascore(query, [lexical_text(h.title, h.text) for h in hits])
        scores = await asyncio.to_thread(
            lambda: self.retriever.relevance_of(
                query,
                [h.chunk_id for h in hits],
                lambda_mult=lambda_mult,
                collections=self.readable(scope),
            )
        )
        return [scores.get(h.chunk_id, 0.0) for h in hits]
