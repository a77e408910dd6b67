"""Agent Server API: the store (``/store/items``, ``/store/items/search``, ``/store/namespaces``).

Served on LangGraph's Postgres store that the personal agents keep their long-term memory in
(opened by the personal component), with the request and answer shapes that langgraph-sdk's
``client.store`` sends and reads.

Scoped per owner (:mod:`tools.store_scope`): the caller's namespace ``["notes", "work"]`` is
stored as ``[<owner id>, "notes", "work"]``; the owner label is added on the way in and removed on
the way out, so another key's namespaces are neither listed, found nor reachable, and the facts
the agents keep about a user are that user's ``["personal", "facts"]``.

Bounds are settings (STORE_*): value bytes, namespace depth, label and key length, limit, offset,
TTL, query length. A semantic ``query`` needs the store's embedding index (pgvector); without it
the search answers 503 naming the fix rather than silently ignoring the query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status
from langgraph.store.base import BaseStore, Item
from pydantic import BaseModel, ConfigDict, Field

from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, error_responses
from app.quotas import check_json_size
from app.security import CallerDep
from app.services import Services, ServicesDep
from config import Settings
from tools.store_scope import owned, shown

router = APIRouter(tags=["store"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

#: Hard caps before the settings' bounds are checked (a request never holds more than these).
Label = Annotated[str, Field(max_length=1024)]
Namespace = Annotated[list[Label], Field(max_length=64)]
FieldPath = Annotated[str, Field(min_length=1, max_length=256)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StorePut(Strict):
    """``PUT /store/items``: create or replace an item."""

    namespace: Namespace
    key: Label
    value: dict[str, Any]
    index: Literal[False] | Annotated[list[FieldPath], Field(max_length=32)] | None = None
    # the schema's ceilings are the settings' own; the configured STORE_MAX_* apply below them
    ttl: Annotated[float, Field(gt=0, le=52_560_000)] | None = Field(
        None, description="Minutes until the item expires (refreshed when read)."
    )


class StoreDelete(Strict):
    """``DELETE /store/items``: remove an item (no error when it is not there)."""

    namespace: Namespace
    key: Label


class StoreSearch(Strict):
    """``POST /store/items/search``: items under a namespace prefix."""

    namespace_prefix: Namespace | None = None
    filter: Annotated[dict[str, Any], Field(max_length=32)] | None = None
    limit: Annotated[int, Field(ge=1, le=10_000)] = 10
    offset: Annotated[int, Field(ge=0, le=10_000_000)] = 0
    query: Annotated[str, Field(min_length=1)] | None = None
    refresh_ttl: bool | None = None


class StoreListNamespaces(Strict):
    """``POST /store/namespaces``: the caller's namespaces."""

    prefix: Namespace | None = None
    suffix: Namespace | None = None
    max_depth: Annotated[int, Field(ge=1, le=64)] | None = None
    limit: Annotated[int, Field(ge=1, le=10_000)] = 100
    offset: Annotated[int, Field(ge=0, le=10_000_000)] = 0


class StoreItem(BaseModel):
    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: str
    updated_at: str
    score: float | None = None


class SearchItemsResponse(BaseModel):
    items: list[StoreItem]


class ListNamespaceResponse(BaseModel):
    namespaces: list[list[str]]


def _unprocessable(message: str) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, message)


def memory(services: Services) -> BaseStore:
    """The store (503 through EngineNotOpen when the personal component is off)."""
    kind: type[Any] = BaseStore  # abstract: provided under its base type (mypy type-abstract)
    store: BaseStore = services.agents.engine(kind)
    return store


def nul_at(value: Any, path: str = "") -> str | None:
    """The path of the first string (or key) in ``value`` holding a NUL character, which
    Postgres text and jsonb cannot store."""
    if isinstance(value, str):
        return (path or "value") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return where
            if found := nul_at(item, where):
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if found := nul_at(item, f"{path}[{index}]"):
                return found
    return None


def _check_text(value: Any, what: str) -> None:
    if where := nul_at(value):
        raise _unprocessable(
            f"{what} holds a NUL character (\\u0000) at {where!r}, which the store cannot keep; "
            "remove it."
        )


def _check_label(settings: Settings, label: str, what: str) -> None:
    _check_text(label, what)
    limit = settings.store.max_label_chars
    if not label or len(label) > limit:
        raise _unprocessable(
            f"{what} {label[:40]!r} must be 1-{limit} characters (STORE_MAX_LABEL_CHARS)."
        )
    if "." in label:
        raise _unprocessable(f"{what} {label[:40]!r} contains '.': namespace labels cannot.")


def checked_namespace(
    settings: Settings, namespace: Sequence[str], *, what: str = "namespace", empty: bool = False
) -> tuple[str, ...]:
    """``namespace`` within the settings' bounds (422 naming the bound otherwise)."""
    depth = settings.store.max_namespace_depth
    if not namespace and not empty:
        raise _unprocessable(f"{what} needs at least one label, e.g. ['notes'].")
    if len(namespace) > depth:
        raise _unprocessable(
            f"{what} has {len(namespace)} labels; at most {depth} (STORE_MAX_NAMESPACE_DEPTH)."
        )
    for label in namespace:
        _check_label(settings, label, f"{what} label")
    return tuple(namespace)


def _check_page(settings: Settings, limit: int, offset: int) -> None:
    bounds = settings.store
    if limit > bounds.max_limit:
        raise _unprocessable(f"limit {limit} is above {bounds.max_limit} (STORE_MAX_LIMIT).")
    if offset > bounds.max_offset:
        raise _unprocessable(f"offset {offset} is above {bounds.max_offset} (STORE_MAX_OFFSET).")


def item_view(owner: str, item: Item) -> dict[str, Any]:
    """An ``Item`` (a ``SearchItem`` with its score) as the caller sees it."""
    view = item.dict()
    view["namespace"] = shown(owner, item.namespace)
    return view


@router.put("/store/items", status_code=status.HTTP_204_NO_CONTENT, responses=error_responses(413))
async def put_item(body: StorePut, services: ServicesDep, who: CallerDep) -> Response:
    """Create or replace the item ``key`` in ``namespace`` (``ttl`` in minutes; ``index``:
    the value's fields to embed, ``false`` for none, default the whole value)."""
    settings = services.settings
    namespace = checked_namespace(settings, body.namespace)
    _check_label(settings, body.key, "key")
    check_json_size(
        body.value,
        what="value",
        limit=settings.store.max_value_bytes,
        setting="STORE_MAX_VALUE_BYTES",
    )
    _check_text(body.value, "value")
    if body.ttl is not None and body.ttl > settings.store.max_ttl_minutes:
        raise _unprocessable(
            f"ttl {body.ttl} minutes is above {settings.store.max_ttl_minutes} "
            "(STORE_MAX_TTL_MINUTES)."
        )
    await memory(services).aput(
        owned(who.owner, namespace), body.key, body.value, index=body.index, ttl=body.ttl
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/store/items", response_model=StoreItem, responses=error_responses(404))
async def get_item(
    services: ServicesDep,
    who: CallerDep,
    key: Annotated[str, Query(max_length=1024)],
    namespace: Annotated[
        str, Query(max_length=16_384, description="The labels joined with '.'.")
    ] = "",
    refresh_ttl: bool | None = None,
) -> dict[str, Any]:
    """The item ``key`` of ``namespace`` (404 when there is none, or it expired)."""
    settings = services.settings
    labels = checked_namespace(settings, namespace.split(".") if namespace else [])
    _check_label(settings, key, "key")
    item = await memory(services).aget(owned(who.owner, labels), key, refresh_ttl=refresh_ttl)
    if item is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Item {key!r} not found in namespace {list(labels)}. "
            "List what there is with POST /store/items/search.",
        )
    return item_view(who.owner, item)


@router.delete("/store/items", status_code=status.HTTP_204_NO_CONTENT)
async def delete_item(body: StoreDelete, services: ServicesDep, who: CallerDep) -> Response:
    """Delete the item ``key`` of ``namespace`` (204 whether or not it was there)."""
    settings = services.settings
    namespace = checked_namespace(settings, body.namespace)
    _check_label(settings, body.key, "key")
    await memory(services).adelete(owned(who.owner, namespace), body.key)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/store/items/search", response_model=SearchItemsResponse, responses=error_responses(503)
)
async def search_items(body: StoreSearch, services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """The caller's items under ``namespace_prefix``, matching ``filter`` (values equal, or
    ``$eq $ne $gt $gte $lt $lte``), ranked by similarity to ``query`` when given."""
    settings = services.settings
    prefix = checked_namespace(
        settings, body.namespace_prefix or [], what="namespace_prefix", empty=True
    )
    _check_page(settings, body.limit, body.offset)
    if body.filter is not None:
        check_json_size(
            body.filter,
            what="filter",
            limit=settings.store.max_value_bytes,
            setting="STORE_MAX_VALUE_BYTES",
        )
        _check_text(body.filter, "filter")
    if body.query is not None and len(body.query) > settings.store.max_query_chars:
        raise _unprocessable(
            f"query is {len(body.query)} characters; at most {settings.store.max_query_chars} "
            "(STORE_MAX_QUERY_CHARS)."
        )
    store = memory(services)
    if body.query is not None and getattr(store, "index_config", None) is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "Semantic store search is off: the store has no embedding index because the "
            "database has no pgvector. Point DATABASE_URL at a Postgres with pgvector (or "
            "leave it unset for the embedded one), or search without 'query'.",
        )
    try:
        found = await store.asearch(
            owned(who.owner, prefix),
            query=body.query,
            filter=body.filter,
            limit=body.limit,
            offset=body.offset,
            refresh_ttl=body.refresh_ttl,
        )
    except ValueError as exc:  # an unknown filter operator
        raise _unprocessable(f"filter: {exc}. Use $eq, $ne, $gt, $gte, $lt or $lte.") from None
    return {"items": [item_view(who.owner, item) for item in found]}


@router.post("/store/namespaces", response_model=ListNamespaceResponse)
async def list_namespaces(
    body: StoreListNamespaces, services: ServicesDep, who: CallerDep
) -> dict[str, Any]:
    """The caller's namespaces (under ``prefix``, ending with ``suffix``, cut at ``max_depth``
    labels)."""
    settings = services.settings
    prefix = checked_namespace(settings, body.prefix or [], what="prefix", empty=True)
    suffix = checked_namespace(settings, body.suffix or [], what="suffix", empty=True)
    _check_page(settings, body.limit, body.offset)
    found = await memory(services).alist_namespaces(
        prefix=owned(who.owner, prefix),
        suffix=suffix or None,
        max_depth=None if body.max_depth is None else body.max_depth + 1,
        limit=body.limit,
        offset=body.offset,
    )
    return {"namespaces": [shown(who.owner, ns) for ns in found]}
