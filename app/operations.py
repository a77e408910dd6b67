"""Serving operations over REST: the caller's context, and a route per operation.

A route is a thin function: it validates its body (the operation's input model), builds the
caller's :class:`~tools.operations.OperationContext` with :func:`context_for` and awaits the
operation. Refusals are :class:`~tools.operations.OperationError`, answered by the app's handler
(``app.errors.operation_error``) with their status and message, the same everywhere.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.security import Caller, CallerDep
from app.services import Services, ServicesDep
from tools.operations import OperationContext


def context_for(
    caller: Caller, services: Services, timezone: str | None = None
) -> OperationContext:
    """The operation context of an API caller: its owner, the process's engines, and the zone
    dates in words are read in (default PERSONAL_TIMEZONE, as for the personal agents)."""
    zone = timezone or services.settings.personal.timezone
    return OperationContext(owner=caller.owner, engines=services.agents, timezone=zone)


def _context(caller: CallerDep, services: ServicesDep) -> OperationContext:
    return context_for(caller, services)


#: A route's dependency: the calling owner's operation context.
OperationContextDep = Annotated[OperationContext, Depends(_context)]
