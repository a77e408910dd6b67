"""The personal capability's operations (tasks, meals, events), defined once.

The task, food and event agents bind them as tools (``agents/personal/tools.py``), the REST
routes of ``app/routers/personal.py`` call them, and the MCP server lists them. Each takes the
caller's :class:`~tools.operations.OperationContext` (the owner whose rows it touches; dates in
words are read in its ``timezone``) and answers with a pydantic model; a refusal is a
:class:`~tools.personal.operations.common.Refusal` (404 for another owner's item, 422 for a
value the data refuses), with one wording for a route and one for the model.

    tasks.py   create_task, get_task, list_tasks, update_task, complete_task, delete_task,
               search_tasks, hybrid_search_tasks, send_task_reminder, send_task_summary
    meals.py   log_meal, get_meal, list_meals, update_meal, delete_meal, nutrition_totals,
               search_meals, hybrid_search_meals, send_food_summary
    events.py  create_event, get_event, list_events, update_event, delete_event,
               search_events, hybrid_search_events, announce_event, send_event_summary
"""

from __future__ import annotations

from typing import Any

from tools.operations import Operation
from tools.personal.operations.events import EVENT_OPERATIONS
from tools.personal.operations.meals import MEAL_OPERATIONS
from tools.personal.operations.tasks import TASK_OPERATIONS

OPERATIONS: tuple[Operation[Any, Any], ...] = (
    *TASK_OPERATIONS,
    *MEAL_OPERATIONS,
    *EVENT_OPERATIONS,
)
