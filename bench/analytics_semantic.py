"""Semantic-layer accuracy over the evaluation question table, and what a question costs.

    python -m bench.analytics_semantic [--server postgresql://postgres@127.0.0.1:5432/postgres]

Creates a temporary database on the server, seeds the analytics dataset (timed), then for every
question of tests/analytics/questions.py: generates SQL with the semantic layer (no model), runs
it as the read-only reader role, runs the hand-written SQL as the owner, and compares the result
sets; then the held-out paraphrases (never used to tune the layer). Unmappable questions count
as correct when the answer is an honest refusal naming the reason. Prints each miss, the
accuracy next to its anchor (every question answered), and timings: seeding, SQL generation per
question, guarded execution per question.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from tests.analytics.questions import CASES, HELD_OUT, TODAY, UNMAPPABLE, Case, same_rows
from tools.analytics.executor import _json_value, open_reader_pool, reader_conninfo, run_readonly
from tools.analytics.seed import ensure_seeded
from tools.analytics.semantic import generate


async def check_cases(
    cases: tuple[Case, ...],
    pool: AsyncConnectionPool,
    owner: psycopg.Connection,
    gen_us: list[float],
    run_ms: list[float],
) -> tuple[int, list[str]]:
    """(correct, misses) of answerable questions: semantic SQL vs the hand-written SQL."""
    correct, misses = 0, []
    for case in cases:
        started = time.perf_counter()
        generation = generate(case.question, TODAY)
        gen_us.append((time.perf_counter() - started) * 1e6)
        if generation.sql is None:
            misses.append(f"unmapped: {case.question} ({generation.message[:80]})")
            continue
        started = time.perf_counter()
        got = await run_readonly(pool, generation.sql)
        run_ms.append((time.perf_counter() - started) * 1000)
        expected = [[_json_value(v) for v in row] for row in owner.execute(case.sql.encode())]
        if same_rows(got.rows, expected, case.ordered):
            correct += 1
        else:
            misses.append(f"wrong rows: {case.question}")
    return correct, misses


async def evaluate(owner_url: str, reader: str) -> None:
    pool = open_reader_pool(reader_conninfo(owner_url, reader, None), max_size=2)
    await pool.open()
    gen_us: list[float] = []
    run_ms: list[float] = []
    generate(CASES[0].question, TODAY)  # compiles the alias patterns once per process
    try:
        with psycopg.connect(owner_url) as owner:
            correct, misses = await check_cases(CASES, pool, owner, gen_us, run_ms)
            held, held_misses = await check_cases(HELD_OUT, pool, owner, [], [])
    finally:
        await pool.close()
    for question, fragment in UNMAPPABLE:
        generation = generate(question, TODAY)
        if generation.sql is None and fragment.lower() in generation.message.lower():
            correct += 1
        else:
            misses.append(f"not refused honestly: {question}")
    total = len(CASES) + len(UNMAPPABLE)
    for miss in misses:
        print(f"  miss: {miss}")
    print(
        f"semantic layer accuracy: {correct}/{total} = {100 * correct / total:.1f}% "
        f"({len(CASES)} answerable + {len(UNMAPPABLE)} unmappable questions)   "
        f"anchor: {total}/{total} (every question)"
    )
    for miss in held_misses:
        print(f"  held-out miss: {miss}")
    print(
        f"held-out paraphrases (never tuned on): {held}/{len(HELD_OUT)} = "
        f"{100 * held / len(HELD_OUT):.1f}%   anchor: 14/15 at first run"
    )
    print(
        f"SQL generation per question: median {statistics.median(gen_us):.0f} us, "
        f"max {max(gen_us):.0f} us   anchor: < 1 ms median (no model call)"
    )
    print(
        f"guarded execution per question: median {statistics.median(run_ms):.1f} ms, "
        f"max {max(run_ms):.1f} ms   anchor: statement timeout 5000 ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    name = f"switchyard_bench_{uuid.uuid4().hex[:10]}"
    role = f"sy_bench_reader_{uuid.uuid4().hex[:8]}"
    base = args.server.rsplit("/", 1)[0]
    owner_url = f"{base}/{name}"
    with psycopg.connect(args.server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        report = ensure_seeded(owner_url, reader_user=role)
        print(
            f"seeded {report.row_counts['sales']:,} sales, {report.row_counts['shipments']:,} "
            f"shipments, {report.row_counts['production']:,} production days in "
            f"{report.seconds:.2f} s   anchor: a few seconds, once per database"
        )
        again = ensure_seeded(owner_url, reader_user=role)
        print(f"second ensure_seeded (no-op): {again.seconds * 1000:.0f} ms   anchor: < 100 ms")
        asyncio.run(evaluate(owner_url, role))
    finally:
        with psycopg.connect(args.server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


if __name__ == "__main__":
    main()
