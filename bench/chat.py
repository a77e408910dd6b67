"""Chat throughput and latency through the HTTP API, and the Redis saver's per-turn overhead.

    python -m bench.chat [--turns-per-session 5] [--sessions-per-worker 4] [--json]

Part 1 starts a real API process (`main.py serve`) on the machine's Redis and Postgres, with
an OpenAI-compatible stub server answering instantly, and drives it with 1, 8 and 32
concurrent clients; each client runs its own sessions turn after turn (a session takes one
message at a time). It prints turns per second and p50/p99 latency per concurrency, the API
process's CPU time per turn (steady under other load, where wall time is not) and the load
average at the start and end.

Part 2 runs the same graph in-process with `InMemorySaver` and with our `AsyncRedisSaver`
(same stub model), turn by turn, and prints the per-turn overhead of Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis

REDIS_DB = 13  # a database of the machine's Redis the bench may flush
SHARED_REDIS = f"redis://127.0.0.1:6379/{REDIS_DB}"
SHARED_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- part 1: HTTP ---------------------------------------------------------------------------


async def _client_worker(
    client: httpx.AsyncClient, sessions: int, turns: int, latencies: list[float]
) -> None:
    for s in range(sessions):
        session_id: str | None = None
        for t in range(turns):
            body: dict[str, Any] = {"message": f"hello, this is turn {t} of session {s}"}
            if session_id:
                body["session_id"] = session_id
            start = time.perf_counter()
            response = await client.post("/chat", json=body)
            latencies.append((time.perf_counter() - start) * 1000)
            response.raise_for_status()
            session_id = response.json()["session_id"]


async def http_load(
    base_url: str, concurrency: int, sessions: int, turns: int, pid: int | None = None
) -> dict[str, Any]:
    """Turns/s and latencies at `concurrency`; with `pid` (the API process), its CPU time per
    turn after the warm-up turn."""
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency + 4)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
        await client.post("/chat", json={"message": "hello, warm-up"})
        cpu = cpu_seconds(pid) if pid is not None else 0.0
        start = time.perf_counter()
        await asyncio.gather(
            *(_client_worker(client, sessions, turns, latencies) for _ in range(concurrency))
        )
        wall = time.perf_counter() - start
        if pid is not None:
            cpu = cpu_seconds(pid) - cpu
    return {
        "api_cpu_ms_per_turn": round(cpu * 1000 / len(latencies), 1) if pid else None,
        "concurrency": concurrency,
        "turns": len(latencies),
        "seconds": round(wall, 2),
        "turns_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc): the API's own work per
    turn, which, unlike wall time, other jobs on the machine barely move."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _measured(api: Any, args: argparse.Namespace, concurrency: int) -> dict[str, Any]:
    turns, sessions = args.turns_per_session, args.sessions_per_worker
    return asyncio.run(http_load(api.url, concurrency, sessions, turns, api.process.pid))


def run_http(args: argparse.Namespace, stub_url: str) -> list[dict[str, Any]]:
    from tests.support.processes import ApiProcess

    workdir = Path(tempfile.mkdtemp(prefix="bench-chat-"))
    env = {
        "REDIS_URL": SHARED_REDIS,
        "DATABASE_URL": SHARED_POSTGRES,
        "DATA_DIR": str(workdir / "data"),
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-bench",
        "OPENAI_BASE_URL": stub_url,
        "LLM_CACHE_TTL_SECONDS": "0",
        "LLM_RATE_LIMIT_PER_MINUTE": "1000000",
        "LLM_MAX_CONCURRENCY": "64",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
    }
    api = ApiProcess(env, log_path=workdir / "api.log").start()
    try:
        return [_measured(api, args, c) for c in (1, 8, 32)]
    finally:
        api.stop()


# --- part 2: saver overhead -----------------------------------------------------------------


async def saver_turns(graph: Any, threads: int, turns: int) -> list[float]:
    from langchain_core.messages import HumanMessage

    latencies = []
    for t in range(threads):
        config = {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}-{t}"}}
        for i in range(turns):
            start = time.perf_counter()
            await graph.ainvoke({"messages": [HumanMessage(f"hello, turn {i}")]}, config)
            latencies.append((time.perf_counter() - start) * 1000)
    return latencies


async def run_savers(stub_url: str, threads: int, turns: int) -> dict[str, Any]:
    import redis.asyncio as aredis
    from langgraph.checkpoint.memory import InMemorySaver

    from agents.contract.context import AgentServices
    from checkpointer import AsyncRedisSaver
    from config import Settings
    from graph.workflow import compile_graph
    from tests.support.graphs import BoundGraph
    from tools.providers.chat_models import LLMFactory, detect_provider

    settings = Settings(
        _env_file=None,
        llm_provider="openai",
        openai_api_key="sk-bench",
        openai_base_url=stub_url,
        llm_rate_limit_per_minute=1_000_000,
        llm_cache_ttl_seconds=0,
    )
    services = AgentServices(settings, LLMFactory(settings, detect_provider(settings)))
    services.embeddings()
    client = aredis.Redis.from_url(SHARED_REDIS)
    graphs = {
        "InMemorySaver": BoundGraph(
            compile_graph(None, services, checkpointer=InMemorySaver()), services
        ),
        "AsyncRedisSaver": BoundGraph(
            compile_graph(None, services, checkpointer=AsyncRedisSaver(client)), services
        ),
    }
    results: dict[str, list[float]] = {name: [] for name in graphs}
    await saver_turns(graphs["InMemorySaver"], 1, 3)  # warm-up (model, caches)
    for _ in range(2):  # interleave so drift hits both alike
        for name, graph in graphs.items():
            results[name].extend(await saver_turns(graph, threads, turns))
    await client.aclose()
    summary: dict[str, Any] = {
        name: {"p50_ms": round(percentile(v, 50), 2), "p95_ms": round(percentile(v, 95), 2)}
        for name, v in results.items()
    }
    mem, red = summary["InMemorySaver"]["p50_ms"], summary["AsyncRedisSaver"]["p50_ms"]
    summary["overhead_p50_ms"] = round(red - mem, 2)
    summary["ratio_p50"] = round(red / mem, 2) if mem else None
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--turns-per-session", type=int, default=5)
    parser.add_argument("--sessions-per-worker", type=int, default=4)
    parser.add_argument("--saver-threads", type=int, default=5)
    parser.add_argument("--saver-turns", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from tests.support.stub_openai import StubOpenAI

    load_start = load_average()
    flush = redis.Redis.from_url(SHARED_REDIS)
    flush.flushdb()
    stub = StubOpenAI(lambda request: "stub answer").start()
    try:
        http = run_http(args, stub.base_url)
        savers = asyncio.run(run_savers(stub.base_url, args.saver_threads, args.saver_turns))
    finally:
        stub.stop()
        flush.flushdb()
    load = {"start": load_start, "end": load_average()}
    if args.json:
        print(json.dumps({"http": http, "savers": savers, "load_average": load}, indent=2))
        return
    print("Chat through the HTTP API (real API process, stub LLM answering instantly)")
    print(f"load average (1, 5, 15 min) at the start {load['start']}, at the end {load['end']}")
    print(
        f"{'concurrency':>11} {'turns':>6} {'turns/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'API CPU ms/turn':>16}"
    )
    for row in http:
        print(
            f"{row['concurrency']:>11} {row['turns']:>6} {row['turns_per_s']:>8} "
            f"{row['p50_ms']:>8} {row['p99_ms']:>8} {row['api_cpu_ms_per_turn']:>16}"
        )
    print()
    print(
        f"Per-turn latency of the same graph in-process ({args.saver_threads} threads x "
        f"{args.saver_turns} turns, twice, interleaved)"
    )
    for name in ("InMemorySaver", "AsyncRedisSaver"):
        row = savers[name]
        print(f"  {name:<16} p50 {row['p50_ms']:>7} ms   p95 {row['p95_ms']:>7} ms")
    print(
        f"  Redis saver overhead per turn: {savers['overhead_p50_ms']} ms at p50 "
        f"({savers['ratio_p50']}x InMemorySaver)"
    )


if __name__ == "__main__":
    main()
