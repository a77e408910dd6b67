"""The `analytics` schema: tables, keys, indexes and column descriptions, in one place.

`TABLES` drives the DDL (`create_statements`, `constraint_statements`), the column comments,
the guard's list of readable tables and the schema description a chat model gets to write SQL.
Constraints and indexes are created after the bulk load (COPY into bare tables is fastest).
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = "analytics"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[tuple[str, str, str], ...] = ()  # (column, table, column)
    indexes: tuple[tuple[str, ...], ...] = ()
    checks: tuple[str, ...] = ()
    unique: tuple[str, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


MONEY = "numeric(12,2)"

TABLES: tuple[Table, ...] = (
    Table(
        "plants",
        "Assembly plants.",
        (
            Column("plant_id", "smallint NOT NULL", "Plant id."),
            Column("name", "text NOT NULL", "Plant name, e.g. 'Detroit Assembly'."),
            Column("country", "text NOT NULL", "'United States', 'Canada' or 'Mexico'."),
        ),
        ("plant_id",),
        unique=("name",),
    ),
    Table(
        "dealers",
        "Retail dealers.",
        (
            Column("dealer_id", "integer NOT NULL", "Dealer id."),
            Column("name", "text NOT NULL", "Dealer name, e.g. 'Austin Motors'."),
            Column(
                "region",
                "text NOT NULL",
                "'Northeast', 'Southeast', 'Midwest', 'Southwest' or 'West'.",
            ),
            Column("state", "text NOT NULL", "Two-letter US state code, e.g. 'TX'."),
            Column("city", "text NOT NULL", "City."),
        ),
        ("dealer_id",),
        indexes=(("region",), ("state",)),
        checks=(
            "region IN ('Northeast', 'Southeast', 'Midwest', 'Southwest', 'West')",
            "length(state) = 2",
        ),
        unique=("name",),
    ),
    Table(
        "vehicles",
        "Every vehicle built for retail, by VIN.",
        (
            Column("vin", "text NOT NULL", "17-character vehicle identification number."),
            Column("make", "text NOT NULL", "Brand: 'Atlas', 'Corvane', 'Meridian', 'Voltra'."),
            Column("model", "text NOT NULL", "Model, e.g. 'Pioneer', 'Spark'."),
            Column("model_year", "smallint NOT NULL", "Model year."),
            Column(
                "segment",
                "text NOT NULL",
                "'SUV', 'Pickup', 'Sedan', 'Compact', 'Luxury' or 'EV'.",
            ),
            Column("plant_id", "smallint NOT NULL", "Plant that built it."),
            Column("msrp", f"{MONEY} NOT NULL", "Sticker price (USD)."),
        ),
        ("vin",),
        foreign_keys=(("plant_id", "plants", "plant_id"),),
        indexes=(("plant_id",), ("make", "model"), ("segment",)),
        checks=("length(vin) = 17", "msrp > 0"),
    ),
    Table(
        "production",
        "One row per plant and working day.",
        (
            Column("plant_id", "smallint NOT NULL", "Plant."),
            Column("day", "date NOT NULL", "Production day."),
            Column("units_planned", "integer NOT NULL", "Units in the day's build plan."),
            Column("units_built", "integer NOT NULL", "Units actually built."),
            Column("defects", "integer NOT NULL", "Units built with a defect."),
            Column("downtime_minutes", "integer NOT NULL", "Line downtime (minutes)."),
        ),
        ("plant_id", "day"),
        foreign_keys=(("plant_id", "plants", "plant_id"),),
        indexes=(("day",),),
        checks=(
            "units_planned >= 0",
            "units_built >= 0",
            "defects BETWEEN 0 AND units_built",
            "downtime_minutes BETWEEN 0 AND 1440",
        ),
    ),
    Table(
        "sales",
        "Retail deals, one vehicle each. F&I = finance and insurance.",
        (
            Column("deal_id", "bigint NOT NULL", "Deal id."),
            Column("dealer_id", "integer NOT NULL", "Selling dealer."),
            Column("vin", "text NOT NULL", "Vehicle sold."),
            Column("sold_on", "date NOT NULL", "Sale date."),
            Column("sale_price", f"{MONEY} NOT NULL", "Vehicle price paid (USD)."),
            Column("gross_profit", f"{MONEY} NOT NULL", "Front-end gross profit (USD)."),
            Column("fni_revenue", f"{MONEY} NOT NULL", "F&I revenue of the deal (USD)."),
            Column("financed", "boolean NOT NULL", "Financed through the dealer."),
            Column("warranty_sold", "boolean NOT NULL", "Extended warranty sold."),
            Column("gap_sold", "boolean NOT NULL", "GAP insurance sold (financed deals only)."),
        ),
        ("deal_id",),
        foreign_keys=(("dealer_id", "dealers", "dealer_id"), ("vin", "vehicles", "vin")),
        indexes=(("sold_on",), ("dealer_id",)),
        checks=("sale_price > 0", "fni_revenue >= 0", "NOT gap_sold OR financed"),
        unique=("vin",),
    ),
    Table(
        "shipments",
        "Plant-to-dealer deliveries, one per vehicle.",
        (
            Column("shipment_id", "bigint NOT NULL", "Shipment id."),
            Column("vin", "text NOT NULL", "Vehicle shipped."),
            Column("plant_id", "smallint NOT NULL", "Origin plant."),
            Column("dealer_id", "integer NOT NULL", "Destination dealer."),
            Column("shipped_on", "date NOT NULL", "Ship date."),
            Column("delivered_on", "date NOT NULL", "Delivery date."),
            Column("due_on", "date NOT NULL", "Promised delivery date (on time = by this day)."),
            Column("carrier", "text NOT NULL", "Carrier, e.g. 'Rapid Haul Logistics'."),
            Column("transport_mode", "text NOT NULL", "'truck' or 'rail'."),
            Column("cost", f"{MONEY} NOT NULL", "Freight cost (USD)."),
            Column("damaged", "boolean NOT NULL", "Delivered with transport damage."),
        ),
        ("shipment_id",),
        foreign_keys=(
            ("vin", "vehicles", "vin"),
            ("plant_id", "plants", "plant_id"),
            ("dealer_id", "dealers", "dealer_id"),
        ),
        indexes=(("shipped_on",), ("carrier",), ("dealer_id",), ("plant_id",), ("vin",)),
        checks=(
            "delivered_on >= shipped_on",
            "due_on >= shipped_on",
            "transport_mode IN ('truck', 'rail')",
            "cost >= 0",
        ),
    ),
)

TABLE_NAMES: frozenset[str] = frozenset(t.name for t in TABLES)
#: The seeded-version marker (readable, but not part of the business data).
MARKER_TABLE = "dataset_info"


def table(name: str) -> Table:
    """The table called `name`."""
    return next(t for t in TABLES if t.name == name)


def create_statements() -> list[str]:
    """CREATE SCHEMA / TABLE statements (no constraints beyond NOT NULL: they follow the load)."""
    out = [f"CREATE SCHEMA {SCHEMA}"]
    for t in TABLES:
        cols = ", ".join(f"{c.name} {c.type}" for c in t.columns)
        out.append(f"CREATE TABLE {SCHEMA}.{t.name} ({cols})")
    out.append(
        f"CREATE TABLE {SCHEMA}.{MARKER_TABLE} (version text PRIMARY KEY, seed bigint NOT NULL, "
        "seeded_at timestamptz NOT NULL DEFAULT now(), row_counts jsonb NOT NULL)"
    )
    return out


def constraint_statements() -> list[str]:
    """Keys, checks, indexes and comments, run after the bulk load."""
    out: list[str] = []
    for t in TABLES:
        name = f"{SCHEMA}.{t.name}"
        out.append(f"ALTER TABLE {name} ADD PRIMARY KEY ({', '.join(t.primary_key)})")
        for col in t.unique:
            out.append(f"ALTER TABLE {name} ADD UNIQUE ({col})")
        for n, check in enumerate(t.checks, start=1):
            out.append(f"ALTER TABLE {name} ADD CONSTRAINT {t.name}_check_{n} CHECK ({check})")
    for t in TABLES:  # foreign keys once every primary key exists
        for col, ref, ref_col in t.foreign_keys:
            out.append(
                f"ALTER TABLE {SCHEMA}.{t.name} ADD FOREIGN KEY ({col}) "
                f"REFERENCES {SCHEMA}.{ref} ({ref_col})"
            )
        for cols in t.indexes:
            index = f"{t.name}_{'_'.join(cols)}_idx"
            out.append(f"CREATE INDEX {index} ON {SCHEMA}.{t.name} ({', '.join(cols)})")
        out.append(f"COMMENT ON TABLE {SCHEMA}.{t.name} IS {_literal(t.description)}")
        for c in t.columns:
            out.append(f"COMMENT ON COLUMN {SCHEMA}.{t.name}.{c.name} IS {_literal(c.description)}")
    return out


def describe() -> str:
    """The schema as compact text for a chat model: one line per table, typed columns."""
    lines = []
    for t in TABLES:
        cols = ", ".join(
            f"{c.name} {c.type.replace(' NOT NULL', '')} -- {c.description}" for c in t.columns
        )
        lines.append(f"{SCHEMA}.{t.name}: {t.description} Columns: {cols}")
    return "\n".join(lines)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
