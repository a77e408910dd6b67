"""The component list: one line per capability whose engine the app opens (in this order,
closed in reverse)."""

from __future__ import annotations

from app.components.analytics import start_analytics
from app.components.base import Starter
from app.components.coding import start_coding
from app.components.personal import start_personal

STARTERS: list[Starter] = [start_coding, start_analytics, start_personal]
