"""The semantic layer's evaluation table: questions with independently written SQL.

Each `Case` pairs a question with SQL written by hand, in a different style from the semantic
layer's (USING joins, EXTRACT, BETWEEN, AVG over casts, FILTER clauses), so a match means the
same numbers, not the same text. `ordered` cases (rankings) must match row order too. The
"today" of every question is 2026-01-01. `UNMAPPABLE` lists questions that must get an honest
"cannot answer" with the given fragment. Used by tests/analytics/test_semantic.py and
bench/analytics_semantic.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any

TODAY = date(2026, 1, 1)

S = "analytics.sales"
SD = f"{S} s JOIN analytics.dealers d USING (dealer_id)"
SV = f"{S} s JOIN analytics.vehicles v USING (vin)"
PR = "analytics.production pr JOIN analytics.plants p USING (plant_id)"
SH = "analytics.shipments sh"
SHD = f"{SH} JOIN analytics.dealers d USING (dealer_id)"
Y24 = "BETWEEN '2024-01-01' AND '2024-12-31'"
Y25 = "BETWEEN '2025-01-01' AND '2025-12-31'"


@dataclass(frozen=True)
class Case:
    question: str
    sql: str
    ordered: bool = False


CASES: tuple[Case, ...] = (
    Case("Units sold by region in 2025",
         f"SELECT d.region, count(*) FROM {SD} WHERE extract(year FROM sold_on) = 2025 "
         "GROUP BY d.region"),
    Case("Total revenue in 2024", f"SELECT sum(sale_price) FROM {S} WHERE sold_on {Y24}"),
    Case("Top 5 dealers by revenue in 2025",
         f"SELECT d.name, sum(sale_price) AS r FROM {SD} WHERE sold_on {Y25} GROUP BY d.name "
         "ORDER BY r DESC, d.name LIMIT 5", ordered=True),
    Case("Gross profit by segment",
         f"SELECT v.segment, sum(gross_profit) FROM {SV} GROUP BY v.segment"),
    Case("F&I revenue per deal by make",
         f"SELECT v.make, avg(fni_revenue) FROM {SV} GROUP BY v.make"),
    Case("What was the finance penetration last quarter?",
         f"SELECT 100 * avg(financed::int) FROM {S} WHERE sold_on BETWEEN '2025-10-01' AND "
         "'2025-12-31'"),
    Case("Warranty attach rate by region in 2025",
         f"SELECT d.region, 100 * avg(warranty_sold::int) FROM {SD} WHERE sold_on {Y25} "
         "GROUP BY 1"),
    Case("GAP attach rate by month in 2025",  # an attach rate: share of all deals (issue 25)
         "SELECT date_trunc('month', sold_on)::date, 100.0 * count(*) FILTER (WHERE gap_sold) "
         f"/ count(*) FROM {S} WHERE sold_on {Y25} GROUP BY 1"),
    Case("GAP attach rate of financed deals by month in 2025",
         "SELECT date_trunc('month', sold_on)::date, 100.0 * count(*) FILTER (WHERE gap_sold) "
         f"/ count(*) FILTER (WHERE financed) FROM {S} WHERE sold_on {Y25} GROUP BY 1"),
    Case("Units built by plant in 2025",
         f"SELECT p.name, sum(units_built) FROM {PR} WHERE day {Y25} GROUP BY p.name"),
    Case("Build-plan attainment by plant in August 2025",
         "SELECT p.name, 100.0 * sum(units_built) / sum(units_planned) FROM "
         f"{PR} WHERE day BETWEEN '2025-08-01' AND '2025-08-31' GROUP BY p.name"),
    Case("Defect rate by plant in Q2 2024",
         f"SELECT p.name, 100.0 * sum(defects) / sum(units_built) FROM {PR} "
         "WHERE day BETWEEN '2024-04-01' AND '2024-06-30' GROUP BY p.name"),
    Case("Downtime by plant in August 2025",
         f"SELECT p.name, sum(downtime_minutes) FROM {PR} WHERE extract(year FROM day) = 2025 "
         "AND extract(month FROM day) = 8 GROUP BY p.name"),
    Case("Monthly downtime in 2025",
         "SELECT date_trunc('month', day)::date, sum(downtime_minutes) FROM "
         f"analytics.production WHERE day {Y25} GROUP BY 1"),
    Case("Average days in transit by transport mode",
         f"SELECT transport_mode, avg(delivered_on - shipped_on) FROM {SH} GROUP BY 1"),
    Case("On-time delivery rate by carrier in 2025",
         f"SELECT carrier, 100 * avg((delivered_on <= due_on)::int) FROM {SH} "
         f"WHERE shipped_on {Y25} GROUP BY carrier"),
    Case("Damage rate by carrier in Q3 2025",
         f"SELECT carrier, 100 * avg(damaged::int) FROM {SH} WHERE shipped_on BETWEEN "
         "'2025-07-01' AND '2025-09-30' GROUP BY carrier"),
    Case("Damage rate by region for Rapid Haul since July 2025",
         f"SELECT d.region, 100 * avg(damaged::int) FROM {SHD} WHERE carrier = "
         "'Rapid Haul Logistics' AND shipped_on >= '2025-07-01' GROUP BY d.region"),
    Case("Shipping cost per vehicle by carrier last year",
         f"SELECT carrier, avg(cost) FROM {SH} WHERE shipped_on {Y25} GROUP BY carrier"),
    Case("Revenue by quarter",
         "SELECT extract(year FROM sold_on)::text || '-Q' || extract(quarter FROM sold_on)::text,"
         f" sum(sale_price) FROM {S} GROUP BY 1"),
    Case("Units sold by year",
         f"SELECT extract(year FROM sold_on)::int, count(*) FROM {S} GROUP BY 1"),
    Case("Weekly units sold in December 2025",
         "SELECT date_trunc('week', sold_on)::date, count(*) FROM analytics.sales WHERE "
         "sold_on BETWEEN '2025-12-01' AND '2025-12-31' GROUP BY 1"),
    Case("Units sold per day from 2025-12-01 to 2025-12-07",
         f"SELECT sold_on, count(*) FROM {S} WHERE sold_on BETWEEN '2025-12-01' AND "
         "'2025-12-07' GROUP BY sold_on"),
    Case("How many vehicles did we sell in Texas in 2024?",
         f"SELECT count(*) FROM {SD} WHERE d.state = 'TX' AND sold_on {Y24}"),
    Case("Revenue in the West region by state",
         f"SELECT d.state, sum(sale_price) FROM {SD} WHERE d.region = 'West' GROUP BY d.state"),
    Case("Average selling price by segment in 2025",
         f"SELECT v.segment, avg(sale_price) FROM {SV} WHERE sold_on {Y25} GROUP BY 1"),
    Case("Units sold of EVs by month since March 2025",
         f"SELECT date_trunc('month', sold_on)::date, count(*) FROM {SV} WHERE v.segment = 'EV' "
         "AND sold_on >= '2025-03-01' GROUP BY 1"),
    Case("Sales trend for Voltra",
         f"SELECT date_trunc('month', sold_on)::date, count(*) FROM {SV} WHERE v.make = 'Voltra' "
         "GROUP BY 1"),
    Case("Warranty attach rate by region, 2024 vs 2025",
         f"SELECT extract(year FROM sold_on)::text, d.region, 100 * avg(warranty_sold::int) "
         f"FROM {SD} GROUP BY 1, 2"),
    Case("Compare units sold in Q3 2024 and Q3 2025 by segment",
         "SELECT 'Q3 ' || extract(year FROM sold_on)::text, v.segment, count(*) FROM "
         f"{SV} WHERE extract(quarter FROM sold_on) = 3 GROUP BY 1, 2"),
    Case("Worst 3 carriers by damage rate in 2025",
         f"SELECT carrier, round(100 * avg(damaged::int), 2) AS r FROM {SH} WHERE shipped_on "
         f"{Y25} GROUP BY carrier ORDER BY r DESC, carrier LIMIT 3", ordered=True),
    Case("Which plant had the highest defect rate in Q2 2024?",
         "SELECT p.name, round(100.0 * sum(defects) / sum(units_built), 2) AS r FROM "
         f"{PR} WHERE day BETWEEN '2024-04-01' AND '2024-06-30' GROUP BY p.name "
         "ORDER BY r DESC, p.name", ordered=True),
    Case("Bottom 3 dealers by units sold in 2024",
         f"SELECT d.name, count(*) AS n FROM {SD} WHERE sold_on {Y24} GROUP BY d.name "
         "ORDER BY n, d.name LIMIT 3", ordered=True),
    Case("Units sold by model for Atlas in H1 2025",
         f"SELECT v.model, count(*) FROM {SV} WHERE v.make = 'Atlas' AND sold_on BETWEEN "
         "'2025-01-01' AND '2025-06-30' GROUP BY v.model"),
    Case("F&I revenue by dealer in Ohio in 2025",
         f"SELECT d.name, sum(fni_revenue) FROM {SD} WHERE d.state = 'OH' AND sold_on {Y25} "
         "GROUP BY d.name"),
    Case("Downtime at Chattanooga by month in 2025",
         "SELECT date_trunc('month', day)::date, sum(downtime_minutes) FROM "
         f"{PR} WHERE p.name = 'Chattanooga Assembly' AND day {Y25} GROUP BY 1"),
    Case("Units built in Mexico by quarter in 2024",
         "SELECT extract(year FROM day) || '-Q' || extract(quarter FROM day), sum(units_built) "
         f"FROM {PR} WHERE p.country = 'Mexico' AND day {Y24} GROUP BY 1"),
    Case("On-time delivery rate for rail in 2025 by month",
         "SELECT date_trunc('month', shipped_on)::date, 100 * avg((delivered_on <= due_on)::int)"
         f" FROM {SH} WHERE transport_mode = 'rail' AND shipped_on {Y25} GROUP BY 1"),
    Case("Shipments by carrier in December 2025",
         f"SELECT carrier, count(*) FROM {SH} WHERE shipped_on BETWEEN '2025-12-01' AND "
         "'2025-12-31' GROUP BY carrier"),
    Case("Gross profit for luxury vehicles by region last year",
         f"SELECT d.region, sum(gross_profit) FROM {S} s JOIN analytics.dealers d USING "
         "(dealer_id) JOIN analytics.vehicles v USING (vin) WHERE v.segment = 'Luxury' AND "
         f"sold_on {Y25} GROUP BY d.region"),
    Case("Finance penetration by segment in the Southeast",
         f"SELECT v.segment, 100 * avg(financed::int) FROM {S} s JOIN analytics.vehicles v "
         "USING (vin) JOIN analytics.dealers d USING (dealer_id) WHERE d.region = 'Southeast' "
         "GROUP BY v.segment"),
    Case("Average days in transit to the West by plant",
         "SELECT p.name, avg(delivered_on - shipped_on) FROM analytics.shipments sh JOIN "
         "analytics.dealers d USING (dealer_id) JOIN analytics.plants p ON p.plant_id = "
         "sh.plant_id WHERE d.region = 'West' GROUP BY p.name"),
    Case("Revenue year over year",
         f"SELECT extract(year FROM sold_on)::int, sum(sale_price) FROM {S} GROUP BY 1"),
    Case("Damage rate in Q3 2025 compared to last year",
         "SELECT 'Q3 ' || extract(year FROM shipped_on), 100 * avg(damaged::int) FROM "
         f"{SH} WHERE extract(quarter FROM shipped_on) = 3 GROUP BY 1"),
    Case("Units sold in the last 6 months by region",
         f"SELECT d.region, count(*) FROM {SD} WHERE sold_on BETWEEN '2025-07-01' AND "
         "'2025-12-31' GROUP BY 1"),
    Case("Defect rate since Q2 2025",
         "SELECT 100.0 * sum(defects) / sum(units_built) FROM analytics.production WHERE day "
         ">= '2025-04-01'"),
    Case("Units sold from March to June 2025 by make",
         f"SELECT v.make, count(*) FROM {SV} WHERE sold_on BETWEEN '2025-03-01' AND "
         "'2025-06-30' GROUP BY v.make"),
    Case("What was the revenue of the Spark in 2025?",
         f"SELECT sum(sale_price) FROM {SV} WHERE v.model = 'Spark' AND sold_on {Y25}"),
    Case("Top 3 states by gross profit in 2025",
         f"SELECT d.state, sum(gross_profit) AS g FROM {SD} WHERE sold_on {Y25} "
         "GROUP BY d.state ORDER BY g DESC, d.state LIMIT 3", ordered=True),
)  # fmt: skip

UNMAPPABLE: tuple[tuple[str, str], ...] = (
    ("What's the weather tomorrow?", "could not find a metric"),
    ("Revenue by color", "cannot break results down by 'color'"),
    ("Downtime by region", "cannot be broken down by region"),
    ("Units sold this year", "no data for 2026"),
    ("Damage rate and revenue by region", "different tables"),
    ("How many employees work in Detroit?", "could not find a metric"),
    ("Defect rate for Rapid Haul", "cannot be filtered by carrier"),
)


def same_rows(got: list[list[Any]], expected: list[list[Any]], ordered: bool) -> bool:
    """Equal result sets: numbers within 0.011 (both sides round to cents / 2 decimals at
    most), everything else as text; row order only when `ordered`."""

    def norm(row: list[Any]) -> tuple[Any, ...]:
        return tuple(
            v if isinstance(v, int) and not isinstance(v, bool)
            else round(v, 2) if isinstance(v, float) else str(v) for v in row
        )  # fmt: skip

    a = [norm(r) for r in got]
    b = [norm(r) for r in expected]
    if not ordered:  # sort by the non-numeric cells (dimensions), which identify a row

        def key(row: tuple[Any, ...]) -> str:
            return str([v for v in row if not isinstance(v, float)])

        a, b = sorted(a, key=key), sorted(b, key=key)
    if len(a) != len(b):
        return False
    for row_a, row_b in zip(a, b, strict=True):
        if len(row_a) != len(row_b):
            return False
        for x, y in zip(row_a, row_b, strict=True):
            if isinstance(x, int | float) and isinstance(y, int | float):
                if not math.isclose(x, y, abs_tol=0.011):
                    return False
            elif x != y:
                return False
    return True


#: Paraphrases written after the semantic layer was built and never used to tune it: their
#: accuracy (printed separately by the bench) estimates how the layer does on new wording.
HELD_OUT: tuple[Case, ...] = (
    Case("How many cars were sold in each region during 2025?",
         f"SELECT d.region, count(*) FROM {SD} WHERE sold_on {Y25} GROUP BY 1"),
    Case("Show me revenue for the top 10 dealers last year",
         f"SELECT d.name, sum(sale_price) AS r FROM {SD} WHERE sold_on {Y25} GROUP BY 1 "
         "ORDER BY r DESC, 1 LIMIT 10", ordered=True),
    Case("What's our F&I per deal broken down by brand?",
         f"SELECT v.make, avg(fni_revenue) FROM {SV} GROUP BY 1"),
    Case("Monthly damage rate for Rapid Haul Logistics in 2025",
         "SELECT date_trunc('month', shipped_on)::date, 100 * avg(damaged::int) FROM "
         f"{SH} WHERE carrier = 'Rapid Haul Logistics' AND shipped_on {Y25} GROUP BY 1"),
    Case("Which carrier had the worst on-time delivery in Q4 2025?",
         f"SELECT carrier, round(100 * avg((delivered_on <= due_on)::int), 2) AS r FROM {SH} "
         "WHERE shipped_on BETWEEN '2025-10-01' AND '2025-12-31' GROUP BY 1 ORDER BY r, 1",
         ordered=True),
    Case("Total downtime minutes per plant for Q3 2025",
         f"SELECT p.name, sum(downtime_minutes) FROM {PR} WHERE day BETWEEN '2025-07-01' AND "
         "'2025-09-30' GROUP BY 1"),
    Case("Finance penetration rate by region for Q1 2025",
         f"SELECT d.region, 100 * avg(financed::int) FROM {SD} WHERE sold_on BETWEEN "
         "'2025-01-01' AND '2025-03-31' GROUP BY 1"),
    Case("Average shipping cost per vehicle by transport mode in 2024",
         f"SELECT transport_mode, avg(cost) FROM {SH} WHERE shipped_on {Y24} GROUP BY 1"),
    Case("Defects per unit by plant last year",
         f"SELECT p.name, 100.0 * sum(defects) / sum(units_built) FROM {PR} WHERE day {Y25} "
         "GROUP BY 1"),
    Case("How did gross profit change quarter over quarter in 2025?",
         "SELECT extract(year FROM sold_on) || '-Q' || extract(quarter FROM sold_on), "
         f"sum(gross_profit) FROM {S} WHERE sold_on {Y25} GROUP BY 1"),
    Case("Number of vehicles built at the Detroit plant by month in 2024",
         f"SELECT date_trunc('month', day)::date, sum(units_built) FROM {PR} WHERE p.name = "
         f"'Detroit Assembly' AND day {Y24} GROUP BY 1"),
    Case("EV sales by region in the second half of 2025",
         f"SELECT d.region, count(*) FROM {S} s JOIN analytics.dealers d USING (dealer_id) JOIN "
         "analytics.vehicles v USING (vin) WHERE v.segment = 'EV' AND sold_on BETWEEN "
         "'2025-07-01' AND '2025-12-31' GROUP BY 1"),
    Case("Warranty penetration for Midwest dealers by month since May 2025",
         "SELECT date_trunc('month', sold_on)::date, 100 * avg(warranty_sold::int) FROM "
         f"{SD} WHERE d.region = 'Midwest' AND sold_on >= '2025-05-01' GROUP BY 1"),
    Case("Compare revenue between 2024 and 2025",
         f"SELECT extract(year FROM sold_on)::text, sum(sale_price) FROM {S} GROUP BY 1"),
    Case("What was the average transit time by carrier in December 2025?",
         f"SELECT carrier, avg(delivered_on - shipped_on) FROM {SH} WHERE shipped_on BETWEEN "
         "'2025-12-01' AND '2025-12-31' GROUP BY 1"),
)  # fmt: skip
