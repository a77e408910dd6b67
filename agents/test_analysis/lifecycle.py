"""The analysis agent's per-process services: job store, worker, the synchronous graph.

``graph.services.Services`` calls :func:`start_analysis_worker` / :func:`stop_analysis_worker`
from its own start and stop; the API gets the rest through the ``*_for`` accessors, which keep
one instance per process in ``services.extras``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from langgraph.graph.state import CompiledStateGraph

from agents.test_analysis.jobs import JobStore
from agents.test_analysis.worker import AnalysisWorker
from graph.workflow import compile_graph

if TYPE_CHECKING:
    from graph.services import Services

__all__ = ["jobs_for", "start_analysis_worker", "stop_analysis_worker", "sync_graph_for"]


def jobs_for(services: Services) -> JobStore:
    """The process's job store on its Redis client."""
    jobs = services.extras.get("analysis_jobs")
    if jobs is None:
        jobs = services.extras["analysis_jobs"] = JobStore(
            services.stores.redis,
            ttl_seconds=services.settings.analysis_record_ttl_seconds,
            cluster=services.settings.redis_cluster,
        )
    return cast(JobStore, jobs)


def sync_graph_for(services: Services) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph ``POST /api/v1/analyze`` runs: the same builder and nodes (and the same parse
    cache) as the API's graph, compiled without a checkpointer. A synchronous analysis lives
    and dies with its request, so writing its files and steps to Redis would only cost."""
    graph = services.extras.get("analysis_sync_graph")
    if graph is None:
        graph = services.extras["analysis_sync_graph"] = compile_graph(services.deps)
    return cast("CompiledStateGraph[Any, Any, Any, Any]", graph)


async def start_analysis_worker(services: Services) -> None:
    """Start this process's background-analysis worker (unless ANALYSIS_WORKER_ENABLED=false)."""
    if not services.settings.analysis_worker_enabled:
        return
    worker = AnalysisWorker(
        jobs=jobs_for(services),
        graph=services.graph,
        checkpointer=services.checkpointer,
        settings=services.settings,
    )
    await worker.start()
    services.extras["analysis_worker"] = worker


async def stop_analysis_worker(services: Services) -> None:
    """Stop the worker; its running analyses become claimable by other workers at once."""
    worker = services.extras.pop("analysis_worker", None)
    if worker is not None:
        await worker.stop()
