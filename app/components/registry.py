"""The component list: one line per capability (engines opened in this order, closed in
reverse; operations served; routers included)."""

from __future__ import annotations

from app.components.analytics import start_analytics
from app.components.base import Component
from app.components.coding import start_coding
from app.components.personal import start_personal

COMPONENTS: list[Component] = [
    Component("coding", start_coding),
    Component("analytics", start_analytics),
    Component("personal", start_personal),
]
