"""The graph of a Studio process and the engines behind it: ONE per process.

langgraph-api executes `app/studio.py` by path under module names of its own (the graph and the
saver factories share one copy, the custom app gets another), so state kept in that file would
exist once per copy and the custom app's `lifespan` would close nothing. It lives here, in a
module every copy imports by name.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graph.workflow import SwitchyardGraph

#: The graph `make_graph` built, once per process (None until then, and after `close`).
graph: SwitchyardGraph | None = None
#: Serialises building it.
lock = asyncio.Lock()
#: What closes its engines (stores, components) and ends the process's uses of the embedded
#: servers.
resources = AsyncExitStack()


async def close() -> None:
    """Close the graph's engines and end the process's uses of the embedded servers (a later
    `make_graph` builds the graph again)."""
    global graph
    graph = None
    await resources.aclose()
