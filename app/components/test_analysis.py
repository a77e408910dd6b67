"""The test-analysis component: the process's test-smell engine (parse cache and limits).

:func:`start_test_analysis` opens ONE :class:`~tools.test_analysis.filework.FileWork` per process
(the parse cache of ANALYSIS_PARSE_CACHE_SIZE entries for ANALYSIS_PARSE_CACHE_TTL_SECONDS,
MAX_FILES / MAX_REQUEST_BYTES, the ANALYSIS_* rule settings) and provides it to the agents'
services: every graph of the process (the API's checkpointed one and the synchronous
endpoint's) and the ``analyze_tests`` operation share it, so a file parsed by one run is a
cache hit for the next. ``/metrics`` shows the cache's counters under ``test_analysis``.
"""

from __future__ import annotations

from app.components.base import Component, Components
from app.routers.test_analysis import router
from tools.test_analysis.filework import FileWork
from tools.test_analysis.operations import OPERATIONS


async def start_test_analysis(components: Components) -> None:
    """Open the test-smell engine and provide it."""
    engine = FileWork.from_settings(components.settings)
    components.agents.provide(engine)


#: The test analysis capability's part of the app: its engine, operations and routes.
COMPONENT = Component("test_analysis", start_test_analysis, OPERATIONS, router)
