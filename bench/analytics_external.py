"""Measure model-free analytics on a public database the project did not write: Chinook.

Loads Chinook (github.com/lerocha/chinook-database, ChinookDatabase/DataSources/
Chinook_PostgreSql.sql; not committed here) into a scratch database on the given Postgres,
creates a read-only role with the README's GRANTs, derives the catalogue as the app does at
start-up, asks the frozen questions of bench/data/chinook_questions.json (written before the
catalogue was ever looked at) without a model, and compares each answer's rows with the rows of
the question's hand-written SQL (numbers rounded to 2 decimals, column names ignored, order only
for rankings). Prints one line per question and the share answered correctly; drops the scratch
database and role at the end.

    python bench/analytics_external.py --chinook /path/to/Chinook_PostgreSql.sql \\
        [--server postgresql://postgres@127.0.0.1:5432/postgres]

Get the file with `git show HEAD:ChinookDatabase/DataSources/Chinook_PostgreSql.sql` in a clone
of that repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import uuid
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.analytics import ask  # noqa: E402
from tools.analytics.executor import open_reader_pool, reader_conninfo, run_readonly  # noqa: E402
from tools.analytics.external import open_source  # noqa: E402

QUESTIONS = Path(__file__).parent / "data" / "chinook_questions.json"
TODAY = date(2026, 1, 1)


def load_chinook(url: str, script: Path) -> None:
    """Run the Chinook script minus its DROP/CREATE DATABASE and \\c lines (we made the db)."""
    text = script.read_text(encoding="utf-8-sig")
    text = re.sub(r"(?im)^(DROP DATABASE|CREATE DATABASE|\\c)\b.*$", "", text)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text.encode())


def normal(rows: list[Any], ordered: bool) -> list[tuple[Any, ...]]:
    def cell(v: Any) -> Any:
        if isinstance(v, int | float | Decimal) and not isinstance(v, bool):
            return round(float(v), 2)
        return str(v)[:10] if hasattr(v, "isoformat") else str(v)

    out = [tuple(cell(v) for v in row) for row in rows]
    return out if ordered else sorted(out, key=repr)


async def measure(owner_url: str, reader_url: str, catalogue_dir: Path) -> int:
    source = open_source(reader_url, ("public",), catalogue_dir / "catalogue.yaml")
    questions = json.loads(QUESTIONS.read_text())["questions"]
    pool = open_reader_pool(reader_url, max_size=2)
    await pool.open()
    right = 0
    try:
        for q in questions:
            gen = ask.generate(q["question"], source.catalogue, TODAY)
            with psycopg.connect(owner_url) as conn:
                want = normal(conn.execute(q["sql"]).fetchall(), q["ordered"])
            if gen.sql is None:
                verdict, detail = "UNANSWERED", gen.message.splitlines()[0][:100]
            else:
                try:
                    got = await run_readonly(pool, gen.sql, scope=source.scope, cost_limit=1e8)
                    mine = normal(got.rows, q["ordered"])
                    ok = mine == want
                    verdict, detail = ("OK" if ok else "WRONG"), got.sql[:160]
                    if not ok:
                        detail += f"\n     got {mine[:4]}\n     want {want[:4]}"
                except Exception as exc:  # noqa: BLE001 - a bench line per question
                    verdict, detail = "ERROR", f"{type(exc).__name__}: {exc}"[:160]
            right += verdict == "OK"
            print(f"{q['id']:>2} {verdict:<10} {q['question']}\n     {detail}")
    finally:
        await pool.close()
    share = right / len(questions)
    print(
        f"analytics_external chinook: {right}/{len(questions)} answered correctly without a "
        f"model ({share:.0%}); catalogue: {len(source.catalogue.tables)} tables, "
        f"{len(source.catalogue.metrics)} metrics"
    )
    return right


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chinook", type=Path, required=True, help="Chinook_PostgreSql.sql")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    name = f"switchyard_chinook_{uuid.uuid4().hex[:8]}"
    role = f"sy_chinook_{uuid.uuid4().hex[:8]}"
    base = args.server.rsplit("/", 1)[0]
    owner_url = f"{base}/{name}"
    with psycopg.connect(args.server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    try:
        load_chinook(owner_url, args.chinook)
        with psycopg.connect(owner_url, autocommit=True) as conn:
            for grant in (  # the README's read-only role
                "GRANT CONNECT ON DATABASE {db} TO {role}",
                "GRANT USAGE ON SCHEMA public TO {role}",
                "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                "ALTER ROLE {role} SET default_transaction_read_only = on",
            ):
                conn.execute(
                    sql.SQL(grant).format(db=sql.Identifier(name), role=sql.Identifier(role))
                )
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(measure(owner_url, reader_conninfo(owner_url, role, None), Path(tmp)))
    finally:
        with psycopg.connect(args.server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
