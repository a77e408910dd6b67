"""The LangGraph Agent Server API, on Switchyard's own threads, runs, saver and API keys.

So ``langgraph-sdk``, ``RemoteGraph``, LangGraph Studio and agent-chat-ui work against a running
Switchyard, on the same threads as ``/chat`` (a chat session is a thread):

    assistants.py  /assistants: the graph's assistant and one per agent (read-only), the
                   graph's drawing (xray) and schemas, subgraphs
    threads.py     /threads: create, search, count, get, patch, delete, copy, prune; state
                   (at a checkpoint), state updates (as_node), history
    runs.py        /threads/{id}/runs and stateless /runs: background, stream, wait; list,
                   get, join, re-attach, cancel (interrupt | rollback), delete
    crons.py       /runs/crons and /threads/{id}/runs/crons: create, search, count, get,
                   patch, delete (cron_models.py, cron_store.py)
    jobs.py        the scheduled job kinds (crons, after_seconds, thread ttl); firing.py
                   their handlers
    submit.py      a run request -> a serial background run (validation, multitask strategy)
    streams.py     tailing a run's Redis event stream: SSE frames, or the output at the end
    inputs.py      what a run's input, command, context and a state update may hold
    state.py       states and checkpoints as the API shows them
    store.py       /store: items (put, get, delete, search with a semantic query) and
                   namespaces, per owner, on LangGraph's Postgres store
    access.py      the caller's threads and runs (ids are per key), the assistants
    ids.py         assistant ids (the Agent Server's uuid5 scheme)
    system.py      /info, /ok
"""

from __future__ import annotations

from fastapi import APIRouter

__all__ = ["routers"]


def routers() -> list[APIRouter]:
    """The API's routers, to include in the app."""
    from app.agent_server.assistants import router as assistants
    from app.agent_server.crons import router as crons
    from app.agent_server.runs import router as runs
    from app.agent_server.store import router as store
    from app.agent_server.system import router as system
    from app.agent_server.threads import router as threads

    return [system, assistants, threads, crons, runs, store]
