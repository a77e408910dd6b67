"""REST for the analytics agent: ``POST /analytics/query`` and its charts.

A query is a turn addressed to the analytics agent (``target_agent``) whose question travels as
the turn's ``agent_input``, run through the graph compiled without a checkpointer (nothing of it
is kept but the chart). The answer is the agent's data: ``{sql, columns, rows (at most
ANALYTICS_ROW_CAP), analysis, recommendations, chart, root_cause}``, with the chart's PNG and SVG
URLs. A chart belongs to the API key whose query made it (another key gets 404, as for an
unknown or expired id) and is kept for ANALYTICS_CHART_TTL_SECONDS.
"""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Response, status
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
from tools.analytics.charts import ChartFormat
from tools.analytics.chartstore import CHART_ID_PATTERN, ChartStore

log = logging.getLogger(__name__)

router = APIRouter(tags=["analytics"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)

ChartId = Annotated[
    str,
    Path(pattern=CHART_ID_PATTERN, description="A chart id (16 hex digits) from an answer."),
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
