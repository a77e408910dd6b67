"""The component list: one line per capability (engines opened in this order, closed in
reverse; operations served; routers included)."""

from __future__ import annotations

from app.components import (
    analytics,
    coding,
    knowledge,
    mcp_client,
    notifications,
    personal,
    scheduler,
    test_analysis,
)
from app.components.base import Component

# scheduler first: the others register their kinds' handlers on it; notifications next: the
# reminders publish to it; knowledge next: the others may search it, and /health lists it first
COMPONENTS: list[Component] = [
    scheduler.COMPONENT,
    notifications.COMPONENT,
    knowledge.COMPONENT,
    test_analysis.COMPONENT,
    coding.COMPONENT,
    analytics.COMPONENT,
    personal.COMPONENT,
    # last: the agents bind its tools when the graph is compiled, after every component
    mcp_client.COMPONENT,
]
