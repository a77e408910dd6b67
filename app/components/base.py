"""What a component is: the engine of one capability, opened at start-up and closed at shutdown.

Each component is one ``start(components)`` function in a module of its own under
``app/components/`` (one per capability; :mod:`app.components.registry` lists them): it
opens its engine with ``components.settings`` and ``components.stores``, registers it with the
agents' services (``components.agents.provide(engine)``, which the agent's build and nodes
read), pushes its closing onto ``components.stack``, and may add a health check (shown by
``/health``) and a metrics source (shown by ``/metrics``). The API (`app.services`) and
Studio (`app.studio`) open every component of :data:`~app.components.registry.COMPONENTS`
before the graph is compiled (a prebuilt agent is compiled with its engine's tools).

A component that could not open its engine does not provide it: every operation that needs it
then answers :class:`tools.operations.EngineNotOpen` (503 on a route, an error message to an
agent's model), the one rule for a missing engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter

from agents.contract.context import AgentServices
from app.storage import Dependency, Stores
from config import Settings
from tools.operations import Operation, OperationRegistry

#: A health check: the component's dependency state (status ok/error, reason, latency).
HealthCheck = Callable[[], Awaitable[Dependency]]
#: A metrics source: the component's counters (JSON-able).
MetricsSource = Callable[[], dict[str, Any]]


@dataclass
class Components:
    """What components open with, and what they add to the process."""

    settings: Settings
    agents: AgentServices
    stores: Stores
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    health: list[HealthCheck] = field(default_factory=list)
    metrics: dict[str, MetricsSource] = field(default_factory=dict)

    async def aclose(self) -> None:
        await self.stack.aclose()


#: ``start(components)``: open one component.
Starter = Callable[[Components], Awaitable[None]]


@dataclass(frozen=True)
class Component:
    """One capability's part of the app: how its engine opens, its operations, its routes.

    :mod:`app.components.registry` lists one per capability; the API opens their engines in
    order (:func:`open_components`), serves their operations (the registry the MCP server and
    the agents' tools share) and includes their routers.
    """

    name: str
    start: Starter | None = None
    operations: Sequence[Operation[Any, Any]] = ()
    router: APIRouter | None = None


def operation_registry(components: Iterable[Component]) -> OperationRegistry:
    """Every operation of ``components`` (names unique across them)."""
    return OperationRegistry(op for component in components for op in component.operations)


async def open_components(
    settings: Settings,
    agents: AgentServices,
    stores: Stores,
    listed: Sequence[Component] | None = None,
) -> Components:
    """Open the engine of every component of ``listed`` (default: the registry's), closed by
    ``Components.aclose`` (also when one fails)."""
    if listed is None:
        from app.components.registry import COMPONENTS

        listed = COMPONENTS
    components = Components(settings, agents, stores)
    try:
        for component in listed:
            if component.start is not None:
                await component.start(components)
    except BaseException:
        await components.aclose()
        raise
    return components
