"""``GET /notifications/stream``: the caller's notifications as Server-Sent Events.

Each frame is ``id: <stream entry id>``, ``event: <name>`` (``reminder``, ...) and ``data:
<JSON>``. Only the caller's own stream is read (one Redis stream per owner). Without
``Last-Event-ID`` the stream starts with what is published from now on; reconnecting with the
last ``id:`` seen replays what came after it (``0`` or ``-1``: everything still kept, at most
NOTIFY_MAX_LEN events). A comment every NOTIFY_PING_SECONDS keeps idle connections open.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Request, status
from sse_starlette.sse import EventSourceResponse

from app.errors import COMMON_ERRORS, error_responses
from app.security import CallerDep
from app.services import ServicesDep
from tools.notifications import Notifications

router = APIRouter(tags=["notifications"], responses=COMMON_ERRORS)

_EVENT_ID = re.compile(r"^(-1|0|\d{1,20}-\d{1,20})$")


def _start(last_event_id: str | None) -> str | None:
    if last_event_id is None:
        return None
    if not _EVENT_ID.match(last_event_id):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "Last-Event-ID must be an id: from this stream ('<ms>-<n>'), or 0 to replay "
            "everything kept",
        )
    return "0-0" if last_event_id in ("-1", "0") else last_event_id


@router.get(
    "/notifications/stream",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "The events."},
        **error_responses(422),
    },
)
async def notification_stream(
    request: Request,
    services: ServicesDep,
    who: CallerDep,
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
) -> EventSourceResponse:
    """The caller's notifications (``reminder`` when a task's or event's reminder is due)."""
    after = _start(last_event_id)
    stream: Notifications = services.agents.engine(Notifications)
    settings = services.settings.notifications
    owner = who.owner
    if after is None:
        after = await stream.last_id(owner)
    block_ms = int(min(settings.ping_seconds, 5.0) * 1000)

    async def frames(after: str) -> AsyncIterator[dict[str, str]]:
        while not await request.is_disconnected():
            for entry in await stream.read(owner, after, block_ms=block_ms):
                after = entry.id
                yield {"id": entry.id, "event": entry.event, "data": json.dumps(entry.data)}

    return EventSourceResponse(frames(after), ping=int(max(1, settings.ping_seconds)))
