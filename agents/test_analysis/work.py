"""The agent's per-process engine: one parse cache and single-flight parser for every run."""

from __future__ import annotations

from agents.contract.context import AgentServices
from tools.test_smells.cache import ParseCache
from tools.test_smells.filework import FileWork


def filework_for(services: AgentServices) -> FileWork:
    """The process's :class:`FileWork` (shared by every graph on these services: the API's
    checkpointed graph and the synchronous endpoint's)."""

    def make() -> FileWork:
        s = services.settings
        return FileWork(ParseCache(s.analysis_parse_cache_size, s.analysis_parse_cache_ttl_seconds))

    return services.resource(FileWork, make)
