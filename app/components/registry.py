"""The component list: one line per capability whose engine the app opens (in this order,
closed in reverse)."""

from __future__ import annotations

from app.components.analytics import start_analytics
from app.components.base import Starter
from app.components.coding import start_coding
from app.components.knowledge import start_knowledge
from app.components.personal import start_personal

# knowledge first: its store was opened before the others, and /health lists it first
STARTERS: list[Starter] = [start_knowledge, start_coding, start_analytics, start_personal]
