"""The seeded dataset: its shape, its seasonality, the planted stories, and seeding itself."""

from __future__ import annotations

import threading
import time
import uuid
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from tests.analytics.conftest import AnalyticsDB, drop_role
from tools.analytics.dataset import DATASET_VERSION, generate
from tools.analytics.seed import SeedError, ensure_seeded

REQUIRED = {
    "plants": ["plant_id", "name", "country"],
    "dealers": ["dealer_id", "name", "region", "state"],
    "vehicles": ["vin", "make", "model", "model_year", "segment", "plant_id", "msrp"],
    "production": ["plant_id", "day", "units_planned", "units_built", "defects",
                   "downtime_minutes"],
    "sales": ["deal_id", "dealer_id", "vin", "sold_on", "sale_price", "gross_profit",
              "fni_revenue", "financed", "warranty_sold", "gap_sold"],
    "shipments": ["shipment_id", "vin", "plant_id", "dealer_id", "shipped_on", "delivered_on",
                  "carrier", "transport_mode", "cost", "damaged"],
}  # fmt: skip


def scalar(conn: psycopg.Connection, query: str) -> Any:
    row = conn.execute(query.encode()).fetchone()
    assert row is not None
    return row[0]


def test_tables_columns_and_types(owner: psycopg.Connection) -> None:
    rows = owner.execute(
        "SELECT table_name, column_name, data_type, numeric_precision, numeric_scale "
        "FROM information_schema.columns WHERE table_schema = 'analytics'"
    ).fetchall()
    columns = {(t, c): (dt, p, s) for t, c, dt, p, s in rows}
    for table, names in REQUIRED.items():
        for name in names:
            assert (table, name) in columns, f"{table}.{name} missing"
    for table, name in [
        ("sales", "sold_on"),
        ("production", "day"),
        ("shipments", "shipped_on"),
        ("shipments", "delivered_on"),
    ]:
        assert columns[(table, name)][0] == "date"
    for table, name in [
        ("sales", "financed"),
        ("sales", "warranty_sold"),
        ("sales", "gap_sold"),
        ("shipments", "damaged"),
    ]:
        assert columns[(table, name)][0] == "boolean"
    for table, name in [
        ("sales", "sale_price"),
        ("sales", "gross_profit"),
        ("sales", "fni_revenue"),
        ("shipments", "cost"),
        ("vehicles", "msrp"),
    ]:
        assert columns[(table, name)] == ("numeric", 12, 2)


def test_keys_and_indexes(owner: psycopg.Connection) -> None:
    constraints = owner.execute(
        "SELECT conrelid::regclass::text, contype, count(*) FROM pg_constraint "
        "WHERE connamespace = 'analytics'::regnamespace GROUP BY 1, 2"
    ).fetchall()
    kinds = {(t, k): n for t, k, n in constraints}
    for table in REQUIRED:
        assert kinds.get((f"analytics.{table}", "p")) == 1, f"{table} has no primary key"
    assert kinds[("analytics.sales", "f")] == 2
    assert kinds[("analytics.shipments", "f")] == 3
    assert kinds[("analytics.vehicles", "f")] == 1
    assert kinds[("analytics.production", "f")] == 1
    indexes = {
        r[0]
        for r in owner.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'analytics'"
        ).fetchall()
    }
    for name in [
        "sales_sold_on_idx",
        "sales_dealer_id_idx",
        "shipments_shipped_on_idx",
        "shipments_carrier_idx",
        "production_day_idx",
        "vehicles_plant_id_idx",
    ]:
        assert name in indexes


def test_size_coverage_and_reference_values(owner: psycopg.Connection) -> None:
    assert int(scalar(owner, "SELECT count(*) FROM analytics.sales")) >= 40_000
    first, last = owner.execute(
        "SELECT min(sold_on), max(sold_on) FROM analytics.sales"
    ).fetchone() or (None, None)
    assert str(first) <= "2024-01-03" and str(last) >= "2025-12-30"
    months = scalar(
        owner, "SELECT count(DISTINCT date_trunc('month', sold_on)) FROM analytics.sales"
    )
    assert months == 24
    assert (
        scalar(
            owner,
            "SELECT count(*) FROM analytics.sales WHERE sold_on < '2024-01-01' "
            "OR sold_on > '2025-12-31'",
        )
        == 0
    )
    regions = {r[0] for r in owner.execute("SELECT DISTINCT region FROM analytics.dealers")}
    assert regions == {"Northeast", "Southeast", "Midwest", "Southwest", "West"}
    # every sold vehicle was shipped to the dealer that sold it, before the sale
    assert (
        scalar(
            owner,
            "SELECT count(*) FROM analytics.sales s JOIN analytics.shipments sh "
            "USING (vin) WHERE sh.dealer_id <> s.dealer_id "
            "OR sh.delivered_on > s.sold_on",
        )
        == 0
    )
    assert (
        scalar(owner, "SELECT count(*) FROM analytics.sales WHERE gap_sold AND NOT financed") == 0
    )


def test_seasonality(owner: psycopg.Connection) -> None:
    for year in (2024, 2025):
        jan, dec = (
            scalar(
                owner,
                f"SELECT count(*) FROM analytics.sales WHERE "
                f"extract(year FROM sold_on) = {year} AND "
                f"extract(month FROM sold_on) = {m}",
            )
            for m in (1, 12)
        )
        assert dec > jan * 1.2
    busiest = scalar(
        owner,
        "SELECT extract(isodow FROM sold_on) FROM analytics.sales GROUP BY 1 "
        "ORDER BY count(*) DESC LIMIT 1",
    )
    assert int(busiest) == 6  # Saturday
    assert (
        scalar(
            owner,
            "SELECT count(*) FROM analytics.production WHERE extract(isodow FROM day) IN (6, 7)",
        )
        == 0
    )  # plants close on weekends


def test_story_chattanooga_downtime_august_2025(owner: psycopg.Connection) -> None:
    rows: dict[str, int] = dict(
        owner.execute(
            "SELECT p.name, sum(downtime_minutes) FROM analytics.production "
            "JOIN analytics.plants p USING (plant_id) "
            "WHERE day BETWEEN '2025-08-01' AND '2025-08-31' GROUP BY 1"
        ).fetchall()
    )
    assert rows["Chattanooga Assembly"] > 0.5 * sum(rows.values())
    usual = scalar(
        owner,
        "SELECT avg(m) FROM (SELECT sum(downtime_minutes) m FROM "
        "analytics.production WHERE plant_id = 2 AND day < '2025-08-01' "
        "GROUP BY date_trunc('month', day)) x",
    )
    assert rows["Chattanooga Assembly"] > 4 * float(usual)


def test_story_rapid_haul_damage_in_the_southwest(owner: psycopg.Connection) -> None:
    rates = {
        (c, r): float(v)
        for c, r, v in owner.execute(
            "SELECT carrier, d.region, avg(damaged::int) FROM analytics.shipments JOIN "
            "analytics.dealers d USING (dealer_id) WHERE shipped_on >= '2025-08-01' GROUP BY 1, 2"
        ).fetchall()
    }
    story = rates.pop(("Rapid Haul Logistics", "Southwest"))
    assert story > 0.08
    assert max(rates.values()) < story / 3
    before = scalar(
        owner,
        "SELECT avg(damaged::int) FROM analytics.shipments JOIN "
        "analytics.dealers d USING (dealer_id) WHERE carrier = "
        "'Rapid Haul Logistics' AND d.region = 'Southwest' "
        "AND shipped_on < '2025-07-01'",
    )
    assert float(before) < 0.03


def test_story_midwest_warranty_attach(owner: psycopg.Connection) -> None:
    rates: dict[str, float] = dict(
        owner.execute(
            "SELECT d.region, 100 * avg(warranty_sold::int) FROM analytics.sales JOIN "
            "analytics.dealers d USING (dealer_id) WHERE sold_on >= '2025-05-01' GROUP BY 1"
        ).fetchall()
    )
    assert rates.pop("Midwest") < 28
    assert min(rates.values()) > 38


def test_story_spark_launch_and_silao_defects(owner: psycopg.Connection) -> None:
    assert (
        scalar(
            owner,
            "SELECT min(sold_on) FROM analytics.sales JOIN analytics.vehicles "
            "USING (vin) WHERE model = 'Spark'",
        ).isoformat()
        >= "2025-03-01"
    )
    assert (
        int(
            scalar(
                owner,
                "SELECT count(*) FROM analytics.sales JOIN analytics.vehicles "
                "USING (vin) WHERE model = 'Spark'",
            )
        )
        > 1000
    )
    q1, q2 = (
        float(
            scalar(
                owner,
                "SELECT sum(defects)::numeric / sum(units_built) FROM "
                f"analytics.production WHERE plant_id = 5 AND day BETWEEN "
                f"'{a}' AND '{b}'",
            )
        )
        for a, b in (("2024-01-01", "2024-03-31"), ("2024-04-01", "2024-06-30"))
    )
    assert q2 > 2 * q1


def test_generation_is_deterministic_and_matches_the_database(owner: psycopg.Connection) -> None:
    first, second = generate(), generate()
    assert first.sales == second.sales and first.shipments == second.shipments
    assert first.production == second.production
    total = sum((row[4] for row in first.sales), Decimal(0))
    assert owner.execute("SELECT sum(sale_price), count(*) FROM analytics.sales").fetchone() == (
        total,
        len(first.sales),
    )


def test_seeding_again_is_a_fast_no_op(analytics_db: AnalyticsDB) -> None:
    started = time.perf_counter()
    report = ensure_seeded(analytics_db.owner_url, reader_user=analytics_db.reader_user)
    assert report.seeded is False and report.version == DATASET_VERSION
    assert report.row_counts == analytics_db.report.row_counts
    assert time.perf_counter() - started < 2.0


@pytest.mark.slow
def test_two_processes_seed_at_once_then_a_new_version_reseeds(scratch_db: str) -> None:
    role = f"sy_reader_{uuid.uuid4().hex[:10]}"
    barrier = threading.Barrier(2)
    reports = []
    errors: list[BaseException] = []

    def seed() -> None:
        barrier.wait()
        try:
            reports.append(ensure_seeded(scratch_db, reader_user=role))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=seed) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert sorted(r.seeded for r in reports) == [False, True]
        with psycopg.connect(scratch_db, autocommit=True) as conn:
            assert scalar(conn, "SELECT count(*) FROM analytics.dataset_info") == 1
            conn.execute("UPDATE analytics.dataset_info SET version = 'an-older-version'")
        report = ensure_seeded(scratch_db, reader_user=role)
        assert report.seeded is True
        with psycopg.connect(scratch_db, autocommit=True) as conn:
            assert scalar(conn, "SELECT version FROM analytics.dataset_info") == DATASET_VERSION
    finally:
        drop_role(scratch_db, role)


def test_the_reader_role_is_read_only_whatever_sql_it_runs(
    analytics_db: AnalyticsDB, owner: psycopg.Connection
) -> None:
    """Even SQL that never passed the guard cannot write, read other schemas or escalate."""
    owner.execute("CREATE TABLE IF NOT EXISTS public.secret_notes (note text)")
    attrs = owner.execute(
        "SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolinherit "
        "FROM pg_roles WHERE rolname = %s",
        [analytics_db.reader_user],
    ).fetchone()
    assert attrs == (False, False, False, False, False)
    with psycopg.connect(analytics_db.reader_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM analytics.plants").fetchone() == (5,)
        assert conn.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
        conn.execute("SET default_transaction_read_only = off")  # the role default is not a lock
        for statement, error in [
            (
                "INSERT INTO analytics.plants VALUES (9, 'x', 'y')",
                psycopg.errors.InsufficientPrivilege,
            ),
            ("SELECT * FROM public.secret_notes", psycopg.errors.InsufficientPrivilege),
            ("SET ROLE postgres", psycopg.errors.InsufficientPrivilege),
            ("SELECT set_config('role', 'postgres', false)", psycopg.errors.InsufficientPrivilege),
            ("CREATE TABLE analytics.x (a int)", psycopg.errors.InsufficientPrivilege),
            ("DELETE FROM analytics.sales", psycopg.errors.InsufficientPrivilege),
        ]:
            with pytest.raises(error):
                conn.execute(statement.encode())


def test_the_owner_cannot_be_the_reader(analytics_db: AnalyticsDB) -> None:
    with pytest.raises(SeedError, match="must be a separate role"):
        ensure_seeded(analytics_db.owner_url, reader_user="postgres")
