"""Agent Server API: assistants (``/assistants``), their graph drawing and schemas.

The assistants are fixed by the deployment: ``switchyard`` (the graph, routing every message)
and one per registered agent (its runs go straight to that agent). They are read-only:
creating, changing or deleting one answers 403 (``POST /assistants`` with
``if_exists='do_nothing'`` and an existing id answers that assistant, as the Agent Server
does); per-run options go in a run's ``context``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Response, status

from app.agent_server.access import assistant, assistant_view, assistants, not_found
from app.agent_server.models import (
    Assistant,
    AssistantCount,
    AssistantCreate,
    AssistantLatest,
    AssistantPatch,
    AssistantSearch,
    AssistantVersions,
    GraphSchemas,
)
from app.agent_server.threads import json_response
from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, error_responses
from app.security import CallerDep
from app.serde import jsonable
from app.services import Services, ServicesDep

router = APIRouter(tags=["assistants"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

AssistantIdPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="An assistant id, or the graph's or an agent's name.",
    ),
]
READ_ONLY = (
    "Assistants are fixed by the deployment: 'switchyard' (the graph) and one per agent; "
    "they cannot be created, changed or deleted. Set per-run options in a run's context."
)
_CACHE: dict[tuple[int, str], Any] = {}


def _forbidden() -> HTTPException:
    return HTTPException(status.HTTP_403_FORBIDDEN, READ_ONLY)


def _matches(view: dict[str, Any], metadata: Any, graph_id: Any, name: Any) -> bool:
    if graph_id and view["graph_id"] != graph_id:
        return False
    if name and name.lower() not in view["name"].lower():
        return False
    return all(view["metadata"].get(k) == v for k, v in (metadata or {}).items())


@router.post("/assistants", response_model=Assistant, responses=error_responses(403, 404, 409))
async def create_assistant(
    body: AssistantCreate, services: ServicesDep, who: CallerDep
) -> Response:
    """Assistants are read-only: 403, except ``if_exists='do_nothing'`` for an existing id."""
    if body.assistant_id and body.if_exists == "do_nothing":
        found = next(
            (a for a in assistants(services) if body.assistant_id in (a.assistant_id, a.name)),
            None,
        )
        if found is not None:
            return json_response(assistant_view(found))
    raise _forbidden()


@router.post("/assistants/search", response_model=list[Assistant])
async def search_assistants(
    body: AssistantSearch, services: ServicesDep, who: CallerDep
) -> Response:
    """The assistants matching metadata (exact per key), graph id and name (substring)."""
    views = [
        v
        for v in (assistant_view(a) for a in assistants(services))
        if _matches(v, body.metadata, body.graph_id, body.name)
    ]
    if body.sort_by:
        views.sort(key=lambda v: str(v[body.sort_by or "name"]), reverse=body.sort_order == "desc")
    page = views[body.offset : body.offset + body.limit]
    if body.select:
        page = [{k: v for k, v in view.items() if k in body.select} for view in page]
    headers = {"X-Pagination-Total": str(len(views))}
    if body.offset + body.limit < len(views):
        headers["X-Pagination-Next"] = str(body.offset + body.limit)
    return json_response(page, headers=headers)


@router.post("/assistants/count", response_model=int)
async def count_assistants(body: AssistantCount, services: ServicesDep, who: CallerDep) -> int:
    """How many assistants match."""
    return sum(
        _matches(assistant_view(a), body.metadata, body.graph_id, body.name)
        for a in assistants(services)
    )


@router.get("/assistants/{assistant_id}", response_model=Assistant, responses=error_responses(404))
async def get_assistant(
    assistant_id: AssistantIdPath, services: ServicesDep, who: CallerDep
) -> Response:
    """One assistant (by id, or by the graph's or an agent's name)."""
    return json_response(assistant_view(assistant(services, assistant_id)))


@router.patch(
    "/assistants/{assistant_id}", response_model=Assistant, responses=error_responses(403, 404)
)
async def patch_assistant(
    assistant_id: AssistantIdPath, body: AssistantPatch, services: ServicesDep, who: CallerDep
) -> Response:
    """Assistants are read-only (403)."""
    assistant(services, assistant_id)
    raise _forbidden()


@router.delete(
    "/assistants/{assistant_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(403, 404),
)
async def delete_assistant(
    assistant_id: AssistantIdPath, services: ServicesDep, who: CallerDep
) -> Response:
    """Assistants are read-only (403)."""
    assistant(services, assistant_id)
    raise _forbidden()


@router.post(
    "/assistants/{assistant_id}/versions",
    response_model=list[Assistant],
    responses=error_responses(404),
)
async def assistant_versions(
    assistant_id: AssistantIdPath, body: AssistantVersions, services: ServicesDep, who: CallerDep
) -> Response:
    """The assistant's versions: one (version 1)."""
    view = assistant_view(assistant(services, assistant_id))
    matches = all(view["metadata"].get(k) == v for k, v in (body.metadata or {}).items())
    return json_response([view][body.offset : body.offset + body.limit] if matches else [])


@router.post(
    "/assistants/{assistant_id}/latest",
    response_model=Assistant,
    responses=error_responses(404),
)
async def set_latest_version(
    assistant_id: AssistantIdPath, body: AssistantLatest, services: ServicesDep, who: CallerDep
) -> Response:
    """Version 1 is the only version (any other: 404)."""
    view = assistant_view(assistant(services, assistant_id))
    if body.version != 1:
        raise not_found(f"Version {body.version} of assistant {assistant_id!r}", "It has 1.")
    return json_response(view)


# --- graph and schemas ----------------------------------------------------------------------
def _cached(services: Services, key: str, make: Any) -> Any:
    slot = (id(services.graph), key)
    if slot not in _CACHE:
        _CACHE[slot] = make()
    return _CACHE[slot]


def _schemas(graph: Any) -> dict[str, Any]:
    """Input, output, state, config and context JSON schemas (None where one cannot be
    made)."""

    def attempt(make: Any) -> Any:
        try:
            return jsonable(make())
        except Exception:
            return None

    output = attempt(graph.get_output_jsonschema)
    return {
        "input_schema": attempt(graph.get_input_jsonschema),
        "output_schema": output,
        "state_schema": output,
        "config_schema": {"title": "Configurable", "type": "object", "properties": {}},
        "context_schema": attempt(graph.get_context_jsonschema),
    }


@router.get(
    "/assistants/{assistant_id}/graph",
    response_model=dict[str, Any],
    responses=error_responses(404),
)
async def assistant_graph(
    assistant_id: AssistantIdPath,
    services: ServicesDep,
    who: CallerDep,
    xray: Annotated[str, Query(pattern=r"^(true|True|false|False|[1-9][0-9]{0,2})$")] = "false",
) -> Response:
    """The graph's drawing (nodes and edges); ``xray`` shows the agents' subgraphs (``true``
    or a depth)."""
    assistant(services, assistant_id)
    depth: bool | int = xray in ("true", "True") or (int(xray) if xray.isdigit() else False)

    def draw() -> Any:
        drawn = services.graph.get_graph(xray=depth).to_json()
        for node in drawn.get("nodes", []):
            if isinstance(node.get("data"), dict):
                node["data"].pop("id", None)
        return jsonable(drawn)

    return json_response(_cached(services, f"graph:{depth}", draw))


@router.get(
    "/assistants/{assistant_id}/schemas",
    response_model=GraphSchemas,
    responses=error_responses(404),
)
async def assistant_schemas(
    assistant_id: AssistantIdPath, services: ServicesDep, who: CallerDep
) -> Response:
    """The graph's input, output, state, config and context schemas (the context schema is
    the agents' per-run options)."""
    assistant(services, assistant_id)
    schemas = _cached(services, "schemas", lambda: _schemas(services.graph))
    return json_response({"graph_id": "switchyard", **schemas})


async def _subgraphs(services: Services, namespace: str | None, recurse: bool) -> dict[str, Any]:
    key = f"subgraphs:{namespace}:{recurse}"

    def make() -> dict[str, Any]:
        return {
            ns: _schemas(sub)
            for ns, sub in services.graph.get_subgraphs(namespace=namespace, recurse=recurse)
        }

    found: dict[str, Any] = _cached(services, key, make)
    return found


@router.get(
    "/assistants/{assistant_id}/subgraphs",
    response_model=dict[str, GraphSchemas],
    responses=error_responses(404),
)
async def assistant_subgraphs(
    assistant_id: AssistantIdPath,
    services: ServicesDep,
    who: CallerDep,
    recurse: bool = False,
) -> Response:
    """The schemas of the graph's subgraphs (the agents), by namespace."""
    assistant(services, assistant_id)
    return json_response(await _subgraphs(services, None, recurse))


@router.get(
    "/assistants/{assistant_id}/subgraphs/{namespace}",
    response_model=dict[str, GraphSchemas],
    responses=error_responses(404),
)
async def assistant_subgraph(
    assistant_id: AssistantIdPath,
    namespace: Annotated[str, Path(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9_|:-]+$")],
    services: ServicesDep,
    who: CallerDep,
    recurse: bool = False,
) -> Response:
    """The schemas of one subgraph (and its own, with ``recurse``)."""
    assistant(services, assistant_id)
    return json_response(await _subgraphs(services, namespace, recurse))
