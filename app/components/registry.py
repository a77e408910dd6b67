"""The component list: one line per capability (engines opened in this order, closed in
reverse; operations served; routers included)."""

from __future__ import annotations

from app.components.analytics import start_analytics
from app.components.base import Component
from app.components.coding import start_coding
from app.components.knowledge import start_knowledge
from app.components.personal import start_personal
from app.components.test_analysis import start_test_analysis
from tools.analytics import operations as analytics_operations
from tools.coding import operations as coding_operations
from tools.knowledge import operations as knowledge_operations
from tools.personal import operations as personal_operations
from tools.test_smells import operations as test_analysis_operations

# knowledge first: the others may search it, and /health lists it first
COMPONENTS: list[Component] = [
    Component("knowledge", start_knowledge, knowledge_operations.OPERATIONS),
    Component("test_analysis", start_test_analysis, test_analysis_operations.OPERATIONS),
    Component("coding", start_coding, coding_operations.OPERATIONS),
    Component("analytics", start_analytics, analytics_operations.OPERATIONS),
    Component("personal", start_personal, personal_operations.OPERATIONS),
]
