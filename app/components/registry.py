"""The component list: one line per capability whose engine the app opens (in this order,
closed in reverse)."""

from __future__ import annotations

from app.components.analytics import start_analytics
from app.components.base import Starter
from app.components.coding import start_coding
from app.components.personal import start_personal
from app.components.test_analysis import start_test_analysis

STARTERS: list[Starter] = [start_test_analysis, start_coding, start_analytics, start_personal]
