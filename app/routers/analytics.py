"""REST for the analytics agent: ``POST /analytics/query`` and its charts.

A query is a turn addressed to the analytics agent (``target_agent``) whose question travels as
the turn's ``agent_input``, run through the graph compiled without a checkpointer (nothing of it
is kept but the chart). The answer is the agent's data: ``{sql, columns, rows (at most
ANALYTICS_ROW_CAP), analysis, recommendations, chart, root_cause}``, with the chart's PNG and SVG
URLs. A chart belongs to the API key whose query made it (another key gets 404, as for an
unknown or expired id) and is kept for ANALYTICS_CHART_TTL_SECONDS. Its signed link
(``chart.image_url``, also a markdown image in the chat answer) is served without a key at
``/analytics/chart-link/{scope}/{id}.png`` until it expires (403 once expired or if altered).
"""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from agents.analytics.answer import AnalyticsAnswer
from agents.analytics.nodes import AnalyticsRequest
from agents.analytics.react import NAME
from app.bodies import StrictJSONRoute
from app.errors import COMMON_ERRORS, DependencyUnavailable, error_responses
from app.runs.executor import Deadline, RunFailed, execute
from app.security import CallerDep
from app.services import Services, ServicesDep
from graph.state import ChatInput
from tools.analytics.chartlinks import LINK_PREFIX, SCOPE_PATTERN
from tools.analytics.charts import ChartFormat
from tools.analytics.chartstore import CHART_ID_PATTERN, ChartStore

log = logging.getLogger(__name__)

router = APIRouter(tags=["analytics"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

ChartId = Annotated[
    str,
    Path(pattern=CHART_ID_PATTERN, description="A chart id (16 hex digits) from an answer."),
]
Scope = Annotated[
    str, Path(pattern=SCOPE_PATTERN, description="The chart owner's scope (from a signed link).")
]
_MEDIA = {"png": "image/png", "svg": "image/svg+xml"}


def _image(kind: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {
            "description": f"The chart as {kind.upper()}.",
            "content": {_MEDIA[kind]: {"schema": {"type": "string", "format": "binary"}}},
        },
        **error_responses(404),
    }


def _registered(services: Services) -> None:
    if NAME not in services.registry:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            "The analytics agent is not registered in this deployment (graph/agents.py).",
        )


@router.post(
    "/analytics/query",
    response_model=AnalyticsAnswer,
    responses=error_responses(404, 413, 502, 504),
)
async def query(body: AnalyticsRequest, services: ServicesDep, who: CallerDep) -> dict[str, Any]:
    """Answer a business question with data: the SQL that ran (read-only), its columns and rows,
    the KPI analysis, recommendations, a chart (with PNG/SVG URLs) and, for a why-question, the
    root cause. A question the semantic layer cannot map gets an answer listing what can be
    asked (``sql`` null)."""
    return await answer_query(services, body, who.owner)


async def answer_query(services: Services, body: AnalyticsRequest, owner: str) -> dict[str, Any]:
    """The analytics agent's answer to ``body`` for ``owner`` (the REST shape,
    :class:`AnalyticsAnswer`): what ``POST /analytics/query`` answers and the MCP tool
    ``query_analytics`` returns. Refusals are ``HTTPException`` (404, 502, 504) and
    :class:`DependencyUnavailable` (503)."""
    _registered(services)
    thread_id = uuid.uuid4().hex
    inp: ChatInput = {
        "messages": [HumanMessage(body.question, id=uuid.uuid4().hex)],
        "user_id": owner,
        "session_id": thread_id,
        "target_agent": NAME,
        "agent_input": body.model_dump(),
    }
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    timeout = services.settings.analytics.request_timeout_seconds
    try:
        state = (
            await execute(
                services.sync_graph,
                inp,
                config,
                context=services.context(owner=owner),
                deadline=Deadline(timeout, "ANALYTICS_REQUEST_TIMEOUT_SECONDS"),
                what="query",
            )
            or {}
        )
    except RunFailed as failed:
        failure = failed.failure
        if failure.timed_out:
            raise HTTPException(
                status.HTTP_504_GATEWAY_TIMEOUT,
                f"The question took longer than {timeout:g} s "
                "(ANALYTICS_REQUEST_TIMEOUT_SECONDS); ask for a shorter period or fewer "
                "breakdowns.",
            ) from None
        if failure.dependency:
            raise DependencyUnavailable(failure.dependency, failure.error) from failure.error
        failure.log("analytics query")
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, failure.message) from failure.error
    answer = (state.get("agent_answers") or {}).get(NAME) or {}
    data: dict[str, Any] = answer.get("data") or {}
    if data.get("unavailable"):
        raise DependencyUnavailable("postgres", "the analytics database cannot be reached")
    if "sql" not in data:
        problem = data.get("problem") or "; ".join(state.get("errors") or []) or "no answer"
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, f"The query produced no answer: {problem}")
    return data


async def _chart(services: Services, owner: str, chart_id: str, kind: ChartFormat) -> Response:
    store = services.agents.engine(ChartStore)  # EngineNotOpen: 503, the one rule
    image = await store.image(owner, chart_id, kind)
    if image is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Chart {chart_id!r} not found: it expired, or was made with another API key. Ask "
            "POST /analytics/query again for a fresh one.",
        )
    return Response(
        image, media_type=_MEDIA[kind], headers={"Cache-Control": "private, max-age=300"}
    )


@router.get("/analytics/chart/{chart_id}.png", response_class=Response, responses=_image("png"))
async def chart_png(chart_id: ChartId, services: ServicesDep, who: CallerDep) -> Response:
    """An answer's chart as PNG (rendered with vl-convert; only for the key that asked)."""
    return await _chart(services, who.owner, chart_id, "png")


@router.get("/analytics/chart/{chart_id}.svg", response_class=Response, responses=_image("svg"))
async def chart_svg(chart_id: ChartId, services: ServicesDep, who: CallerDep) -> Response:
    """An answer's chart as SVG (only for the key that asked)."""
    return await _chart(services, who.owner, chart_id, "svg")


@router.get(
    LINK_PREFIX + "/{scope}/{chart_id}.png",
    response_class=Response,
    responses={**_image("png"), **error_responses(403)},
)
async def chart_link_png(
    scope: Scope,
    chart_id: ChartId,
    request: Request,
    services: ServicesDep,
    expires: Annotated[int, Query(ge=0, le=2**40, description="Unix time the link expires.")],
    signature: Annotated[str, Query(min_length=1, max_length=100, description="The HMAC.")],
) -> Response:
    """An answer's chart as PNG from its signed link (``chart.image_url``): no API key, so an
    ``<img>`` in a chat UI can load it; refused (403) once expired or when any part of the link
    was changed."""
    store = services.agents.engine(ChartStore)  # EngineNotOpen: 503, the one rule
    if store.links is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Chart links are not enabled here.")
    limiter = getattr(request.app.state, "rate_limiter", None)
    if limiter is not None:  # no key, so the client's address is the rate-limit identity
        await limiter.check(f"ip-{request.client.host if request.client else 'unknown'}")
    verdict = store.links.check(scope, chart_id, "png", expires, signature)
    if verdict == "forged":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            "This chart link's signature does not match: use the link exactly as the answer "
            "gave it, or GET /analytics/chart/{id}.png with your API key.",
        )
    if verdict == "expired":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            "This chart link has expired (ANALYTICS_CHART_LINK_TTL_SECONDS): ask the question "
            "again for a fresh link, or GET /analytics/chart/{id}.png with your API key.",
        )
    image = await store.scoped_image(scope, chart_id, "png")
    if image is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"Chart {chart_id!r} is no longer kept (ANALYTICS_CHART_TTL_SECONDS): ask the "
            "question again for a fresh one.",
        )
    return Response(
        image, media_type="image/png", headers={"Cache-Control": "private, max-age=300"}
    )
