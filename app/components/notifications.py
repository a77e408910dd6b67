"""The notifications component: each owner's notification stream (:mod:`tools.notifications`)
on the process's Redis, provided to the agents' services (the reminders publish to it) and
served as Server-Sent Events by ``GET /notifications/stream`` (:mod:`app.routers.notifications`).
"""

from __future__ import annotations

from app.components.base import Component, Components
from app.routers.notifications import router
from tools.notifications import Notifications


async def start_notifications(components: Components) -> None:
    """Make the publisher/reader on the process's Redis and provide it."""
    settings = components.settings.notifications
    components.agents.provide(
        Notifications(
            components.stores.redis,
            max_len=settings.max_len,
            once_seconds=settings.once_seconds,
            max_data_bytes=settings.max_data_bytes,
        )
    )


#: The notification streams' part of the app: an engine and its route, no operations.
COMPONENT = Component("notifications", start_notifications, router=router)
