"""The knowledge operations on a real knowledge base (Postgres 16 with pgvector, MiniLM):
every owner reads its private collection and the shared ones, only the owner changes its
private documents and only shared writers the shared ones, and a process where the knowledge
component did not open the store answers `EngineNotOpen`."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError

from agents.contract.context import AgentServices
from app.security import ANONYMOUS as APP_ANONYMOUS
from config import load_settings
from tests.knowledge.conftest import CORPUS
from tests.support.scripted import FixedFactory
from tools.knowledge import operations as ops
from tools.knowledge.scope import private_collection
from tools.knowledge.store import KnowledgeStore
from tools.operations import EngineNotOpen, NotFound, OperationContext, OperationError


def _context(owner: str, store: KnowledgeStore | None) -> OperationContext:
    services = AgentServices(store.settings if store else load_settings(), FixedFactory(None))
    if store is not None:
        services.provide(store)
    return OperationContext(owner=owner, engines=services)


async def _upload(store: KnowledgeStore, owner: str, name: str) -> str:
    """``owner`` uploads the corpus file ``name`` to its private collection; its document id."""
    report = await store.ingest_uploads(
        [(name, CORPUS[name].encode())],
        namespace=ops.upload_namespace(owner),
        collection=private_collection(owner),
    )
    assert report.ok, report.to_dict()
    return report.files[0].documents[0].document_id


def test_the_operations_are_listed_with_their_schemas() -> None:
    assert [op.name for op in ops.OPERATIONS] == [
        "search_documents",
        "list_documents",
        "get_document",
        "delete_document",
    ]
    assert {op.capability for op in ops.OPERATIONS} == {"knowledge"}
    assert [op.read_only for op in ops.OPERATIONS] == [True, True, True, False]
    assert ops.search_documents.input_schema()["properties"]["query"]["maxLength"] == (
        ops.MAX_QUERY_CHARS
    )
    assert ops.ANONYMOUS == APP_ANONYMOUS  # the owner of every caller without API keys


async def test_owners_read_their_own_and_the_shared_collections(
    store: KnowledgeStore, tmp_path: Path
) -> None:
    handbook = tmp_path / "keys.md"
    handbook.write_text(CORPUS["keys.md"], encoding="utf-8")
    assert (await store.ingest_paths([handbook])).ok  # the operator's (main.py ingest): shared
    alices = await _upload(store, "alice", "cats.rst")
    bobs = await _upload(store, "bob", "cats.rst")  # the same name: his own document
    assert alices != bobs
    alice, bob = _context("alice", store), _context("bob", store)

    found = await ops.search_documents(bob, {"query": "how long do cats sleep?", "top_k": 3})
    assert found.hits and "twelve and sixteen hours" in found.hits[0].text
    assert bobs in {h.document_id for h in found.hits}
    assert alices not in {h.document_id for h in found.hits}  # alice's private document
    assert found.hits[0].collection == "private" and found.mode == "hybrid"
    assert 0.0 <= found.lambda_mult <= 1.0 and found.ordering in ("rrf", "relevance")

    page = await ops.list_documents(bob, ops.ListDocuments(limit=1))
    assert (page.total, len(page.documents), page.next_offset) == (2, 1, 1)
    rest = await ops.list_documents(bob, {"limit": 1, "offset": 1})
    assert len(rest.documents) == 1 and rest.next_offset is None
    listed = {d.source: d.collection for d in page.documents + rest.documents}
    assert listed == {str(handbook.resolve()): "shared", "upload:bob/cats.rst": "private"}
    only_shared = await ops.list_documents(bob, {"collection": "shared"})
    assert [d.collection for d in only_shared.documents] == ["shared"]

    # alice's private document does not exist for bob; the shared one is not his to change
    with pytest.raises(NotFound):
        await ops.get_document(bob, {"document_id": alices})
    with pytest.raises(NotFound):
        await ops.delete_document(bob, {"document_id": alices})
    operators = next(d.id for d in page.documents + rest.documents if d.collection == "shared")
    with pytest.raises(OperationError, match="KNOWLEDGE_SHARED_WRITERS") as refused:
        await ops.delete_document(bob, {"document_id": operators})
    assert refused.value.status == 403
    assert (await ops.list_documents(alice, {})).total == 2
    assert (await ops.get_document(alice, {"document_id": alices})).document.chunk_count >= 1

    deleted = await ops.delete_document(alice, {"document_id": alices})
    assert str(deleted.document_id) == alices
    with pytest.raises(NotFound, match="GET /documents") as missing:
        await ops.get_document(alice, {"document_id": alices})
    assert missing.value.status == 404
    with pytest.raises(NotFound):
        await ops.delete_document(alice, {"document_id": alices})
    found = await ops.search_documents(bob, {"query": "how long do cats sleep?"})
    assert bobs in {h.document_id for h in found.hits}

    # without API keys the one anonymous owner may change the shared collections
    anyone = _context(ops.ANONYMOUS, store)
    await ops.delete_document(anyone, {"document_id": operators})
    assert (await ops.list_documents(anyone, {})).total == 0
    assert (await ops.list_documents(bob, {})).total == 1


async def test_bad_input_is_refused_before_the_engine(store: KnowledgeStore) -> None:
    ctx = _context("alice", store)
    for bad in ({"query": ""}, {"query": "x" * (ops.MAX_QUERY_CHARS + 1)},
                {"query": "cats", "lambda_mult": 1.5}, {"query": "cats", "top_k": 0},
                {"query": "cats", "mode": "fuzzy"},
                {"query": "cats", "filters": {"colour": "red"}},
                {"query": "cats", "filters": {"collection": "Not A Name"}},
                {"query": "cats", "filters": {"metadata": {"year": {"between": 1}}}},
                {"query": "cats", "filters": {"metadata": {"year": {}}}},
                {"query": "cats", "filters": {"metadata": {"tag": {"in": []}}}}):  # fmt: skip
        with pytest.raises(ValidationError):
            await ops.search_documents(ctx, bad)
    with pytest.raises(ValidationError):
        await ops.get_document(ctx, {"document_id": "not-a-uuid"})
    with pytest.raises(ValidationError):
        await ops.list_documents(ctx, {"offset": 1_000_001})
    with pytest.raises(NotFound):
        await ops.get_document(ctx, {"document_id": str(uuid.uuid4())})


async def test_without_the_store_every_operation_answers_engine_not_open() -> None:
    ctx = _context("alice", None)
    payloads = {
        "search_documents": {"query": "cats"},
        "list_documents": {},
        "get_document": {"document_id": str(uuid.uuid4())},
        "delete_document": {"document_id": str(uuid.uuid4())},
    }
    for op in ops.OPERATIONS:
        with pytest.raises(EngineNotOpen, match="KnowledgeStore is not open") as caught:
            await op(ctx, payloads[op.name])
        assert caught.value.status == 503
