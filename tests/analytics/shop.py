"""A second database for the analytics tests: a small shop the agent has never seen.

Schema `shop` (not `public`, not the demo's `analytics`): regions <- customers <- orders <-
order_lines -> products, customers -> reps (people: first and last name, a title), with
comments, a many-to-one path order_lines -> orders -> customers -> regions, a date column
(orders.ordered_on) and low-cardinality text columns. Rows are generated from a fixed seed, so
every test sees the same data; the tests' expected answers are SQL written by hand over these
tables, never the catalogue's output.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

import psycopg
from psycopg import sql

from tools.analytics.executor import reader_conninfo

DDL = """
CREATE SCHEMA shop;
CREATE TABLE shop.regions (region_id int PRIMARY KEY, name text NOT NULL);
COMMENT ON TABLE shop.regions IS 'Sales territories.';
CREATE TABLE shop.reps (
    rep_id int PRIMARY KEY, last_name text NOT NULL, first_name text NOT NULL,
    title text NOT NULL);
COMMENT ON TABLE shop.reps IS 'Sales representatives.';
CREATE TABLE shop.customers (
    customer_id int PRIMARY KEY, name text NOT NULL,
    region_id int NOT NULL REFERENCES shop.regions, segment text NOT NULL, signup_date date,
    sales_rep_id int REFERENCES shop.reps);
COMMENT ON TABLE shop.customers IS 'Buyers. Clients';
COMMENT ON COLUMN shop.customers.segment IS 'Customer tier.';
CREATE TABLE shop.products (
    product_id int PRIMARY KEY, name text NOT NULL, category text NOT NULL,
    list_price numeric(10,2) NOT NULL);
COMMENT ON COLUMN shop.products.category IS 'Product line.';
CREATE TABLE shop.orders (
    order_id int PRIMARY KEY, customer_id int NOT NULL REFERENCES shop.customers,
    ordered_on date NOT NULL, status text NOT NULL, shipping_fee numeric(8,2) NOT NULL);
COMMENT ON TABLE shop.orders IS 'Purchases.';
COMMENT ON COLUMN shop.orders.ordered_on IS 'Order date.';
CREATE TABLE shop.order_lines (
    line_id int PRIMARY KEY, order_id int NOT NULL REFERENCES shop.orders,
    product_id int NOT NULL REFERENCES shop.products, quantity int NOT NULL,
    unit_price numeric(10,2) NOT NULL);
COMMENT ON COLUMN shop.order_lines.quantity IS 'Units ordered.';
CREATE SEQUENCE shop.invoice_numbers;
"""

REGIONS = ["North", "South", "West"]
#: (last name, first name, title): two share a title, so a breakdown by title is not by rep.
REPS = [("Peacock", "Jane", "Sales Agent"), ("Park", "Margaret", "Sales Agent"),
        ("Adams", "Andrew", "General Manager")]  # fmt: skip
SEGMENTS = ["Retail", "Wholesale"]
PRODUCTS = [
    ("Atlas", "Books", 12.5),
    ("Bramble", "Books", 20.0),
    ("Comet", "Games", 45.0),
    ("Dynamo", "Games", 60.0),
    ("Echo", "Music", 9.99),
    ("Fable", "Music", 15.0),
]
STATUSES = ["shipped", "returned", "pending"]


def load(conn: psycopg.Connection) -> None:
    """Create schema shop and its rows (fixed seed)."""
    rng = random.Random(25)
    conn.execute(DDL)
    for n, name in enumerate(REGIONS, 1):
        conn.execute("INSERT INTO shop.regions VALUES (%s, %s)", [n, name])
    for n, (last, first, title) in enumerate(REPS, 1):
        conn.execute("INSERT INTO shop.reps VALUES (%s, %s, %s, %s)", [n, last, first, title])
    for c in range(1, 13):
        rep = 3 if c % 4 == 0 else c % 2 + 1
        conn.execute(
            "INSERT INTO shop.customers VALUES (%s, %s, %s, %s, %s, %s)",
            [c, f"Customer {c:02d}", c % 3 + 1, rng.choice(SEGMENTS),
             date(2023, 1, 1) + timedelta(days=rng.randint(0, 700)), rep],
        )  # fmt: skip
    for p, (name, category, price) in enumerate(PRODUCTS, 1):
        conn.execute(
            "INSERT INTO shop.products VALUES (%s, %s, %s, %s)", [p, name, category, price]
        )
    line = 0
    for o in range(1, 91):
        day = date(2024, 1, 1) + timedelta(days=rng.randint(0, 730))
        conn.execute(
            "INSERT INTO shop.orders VALUES (%s, %s, %s, %s, %s)",
            [o, rng.randint(1, 12), day, rng.choices(STATUSES, [6, 1, 1])[0],
             rng.choice([0, 4.5, 9.0])],
        )  # fmt: skip
        for _ in range(rng.randint(1, 3)):
            line += 1
            p = rng.randint(1, 6)
            conn.execute(
                "INSERT INTO shop.order_lines VALUES (%s, %s, %s, %s, %s)",
                [line, o, p, rng.randint(1, 5), PRODUCTS[p - 1][2]],
            )


@dataclass(frozen=True)
class ShopDB:
    owner_url: str  # the postgres superuser: owns the schema
    reader_url: str  # a read-only role: the GRANTs the README documents
    reader: str
    name: str


def create_shop(server_url: str) -> Iterator[ShopDB]:
    """A uniquely named database with the shop and a read-only role; both dropped after."""
    base = server_url.rsplit("/", 1)[0]
    name = f"switchyard_shop_{uuid.uuid4().hex[:10]}"
    reader = f"sy_shop_reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(reader)))
    owner_url = f"{base}/{name}"
    with psycopg.connect(owner_url, autocommit=True) as conn:
        load(conn)
        for grant in (
            "GRANT CONNECT ON DATABASE {db} TO {role}",
            "GRANT USAGE ON SCHEMA shop TO {role}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO {role}",
            "ALTER ROLE {role} SET default_transaction_read_only = on",
        ):
            conn.execute(
                sql.SQL(grant).format(db=sql.Identifier(name), role=sql.Identifier(reader))
            )
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    try:
        yield ShopDB(owner_url, reader_conninfo(owner_url, reader, None), reader, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(reader)))
