"""The semantic model: facts, metrics and dimensions, with the words that name them.

A metric is numerator / denominator over one fact table (the denominator is None for additive
metrics), so the same definition renders SQL (`Metric.sql`) and decomposes for root-cause
analysis (contributions of numerator and denominator by member). Dimensions know how to reach
their column from each fact they apply to (`Dimension.joins`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.analytics.outputs import MeasureMeta, Unit
from tools.analytics.reference import (
    CARRIERS,
    MAKES,
    MODELS,
    PLANTS,
    REGIONS,
    SEGMENTS,
    STATE_NAMES,
    TRANSPORT_MODES,
    dealer_names,
)
from tools.analytics.schema import SCHEMA


@dataclass(frozen=True)
class Fact:
    name: str
    alias: str
    date_column: str
    date_label: str
    joins: dict[str, str]

    @property
    def from_clause(self) -> str:
        return f"{SCHEMA}.{self.name} AS {self.alias}"


FACTS: dict[str, Fact] = {
    "sales": Fact(
        "sales",
        "s",
        "s.sold_on",
        "sale date",
        {
            "dealers": f"JOIN {SCHEMA}.dealers AS d ON d.dealer_id = s.dealer_id",
            "vehicles": f"JOIN {SCHEMA}.vehicles AS v ON v.vin = s.vin",
            "plants": f"JOIN {SCHEMA}.plants AS p ON p.plant_id = v.plant_id",
        },
    ),
    "production": Fact(
        "production",
        "pr",
        "pr.day",
        "production day",
        {"plants": f"JOIN {SCHEMA}.plants AS p ON p.plant_id = pr.plant_id"},
    ),
    "shipments": Fact(
        "shipments",
        "sh",
        "sh.shipped_on",
        "ship date",
        {
            "dealers": f"JOIN {SCHEMA}.dealers AS d ON d.dealer_id = sh.dealer_id",
            "vehicles": f"JOIN {SCHEMA}.vehicles AS v ON v.vin = sh.vin",
            "plants": f"JOIN {SCHEMA}.plants AS p ON p.plant_id = sh.plant_id",
        },
    ),
}


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    fact: str
    numerator: str
    denominator: str | None
    unit: Unit
    aliases: tuple[str, ...]
    higher_is_better: bool = True
    scale: float = 1.0
    decimals: int = 2
    description: str = ""

    @property
    def additive(self) -> bool:
        return self.denominator is None

    def sql(self) -> str:
        """The aggregate expression (over the fact's alias) that computes the metric."""
        if self.denominator is None:
            if self.unit == "currency":
                return f"ROUND({self.numerator}, 2)"
            return self.numerator
        scaled = f"{self.scale:.1f} * "
        return f"ROUND({scaled}{self.numerator} / NULLIF({self.denominator}, 0), {self.decimals})"

    def meta(self) -> MeasureMeta:
        return MeasureMeta(
            label=self.label,
            unit=self.unit,
            additive=self.additive,
            higher_is_better=self.higher_is_better,
        )


def _flag(column: str) -> str:
    return f"SUM(CASE WHEN {column} THEN 1 ELSE 0 END)"


METRICS: tuple[Metric, ...] = (
    Metric("units_sold", "Units sold", "sales", "COUNT(*)", None, "count",
           ("units sold", "unit sales", "vehicles sold", "cars sold", "sales volume",
            "number of sales", "number of deals", "deals", "sold", "sell", "sales", "volume")),
    Metric("revenue", "Revenue", "sales", "SUM(s.sale_price)", None, "currency",
           ("revenue", "sales revenue", "turnover", "dollar sales", "sales value")),
    Metric("gross_profit", "Gross profit", "sales", "SUM(s.gross_profit)", None, "currency",
           ("gross profit", "profit", "gross margin", "gross")),
    Metric("average_selling_price", "Average selling price", "sales", "SUM(s.sale_price)",
           "COUNT(*)", "currency",
           ("average selling price", "average sale price", "average transaction price", "asp",
            "average price")),
    Metric("fni_revenue", "F&I revenue", "sales", "SUM(s.fni_revenue)", None, "currency",
           ("total f&i revenue", "f&i revenue", "fni revenue", "finance and insurance revenue")),
    Metric("fni_revenue_per_deal", "F&I revenue per deal", "sales", "SUM(s.fni_revenue)",
           "COUNT(*)", "currency",
           ("f&i revenue per deal", "f&i per deal", "fni per deal", "f&i revenue per vehicle",
            "f&i per vehicle", "finance and insurance revenue per deal", "pvr", "f&i")),
    Metric("finance_penetration_pct", "Finance penetration (%)", "sales",
           _flag("s.financed"), "COUNT(*)", "percent",
           ("finance penetration", "financing penetration", "financing rate", "finance rate",
            "share of deals financed", "deals financed", "financed"), scale=100),
    Metric("warranty_attach_pct", "Warranty attach rate (%)", "sales",
           _flag("s.warranty_sold"), "COUNT(*)", "percent",
           ("warranty attach rate", "warranty attach", "warranty penetration",
            "extended warranty", "warranty"), scale=100),
    # An attach rate is the share of all deals that carry the product, as for warranties; GAP
    # can only be sold on a financed deal, so its share of financed deals is a metric of its own,
    # asked for by name.
    Metric("gap_attach_pct", "GAP attach rate (% of deals)", "sales",
           _flag("s.gap_sold"), "COUNT(*)", "percent",
           ("gap attach rate", "gap attach", "gap penetration", "gap insurance", "gap"),
           scale=100),
    Metric("gap_attach_financed_pct", "GAP attach rate (% of financed deals)", "sales",
           _flag("s.gap_sold"), _flag("s.financed"), "percent",
           ("gap attach rate of financed deals", "gap attach rate on financed deals",
            "gap penetration of financed deals", "gap penetration on financed deals",
            "gap attach of financed deals", "gap attach on financed deals",
            "gap per financed deal", "gap on financed deals", "gap of financed deals"),
           scale=100),
    Metric("units_built", "Units built", "production", "SUM(pr.units_built)", None, "count",
           ("units built", "vehicles built", "units produced", "production volume", "output",
            "production", "built")),
    Metric("units_planned", "Units planned", "production", "SUM(pr.units_planned)", None,
           "count", ("units planned", "build plan volume", "planned units")),
    Metric("build_plan_attainment_pct", "Build-plan attainment (%)", "production",
           "SUM(pr.units_built)", "SUM(pr.units_planned)", "percent",
           ("build plan attainment", "plan attainment", "attainment", "production vs plan",
            "build plan"), scale=100),
    Metric("defect_rate_pct", "Defect rate (%)", "production", "SUM(pr.defects)",
           "SUM(pr.units_built)", "percent",
           ("defect rate", "defects per unit", "defect", "defects", "quality"),
           higher_is_better=False, scale=100),
    Metric("downtime_minutes", "Downtime (minutes)", "production", "SUM(pr.downtime_minutes)",
           None, "minutes", ("downtime minutes", "downtime", "line stoppages", "stoppages"),
           higher_is_better=False),
    Metric("avg_days_in_transit", "Average days in transit", "shipments",
           "SUM(sh.delivered_on - sh.shipped_on)", "COUNT(*)", "days",
           ("average days in transit", "avg days in transit", "days in transit",
            "transit time", "delivery time", "transit days", "lead time"),
           higher_is_better=False),
    Metric("on_time_delivery_pct", "On-time delivery rate (%)", "shipments",
           _flag("sh.delivered_on <= sh.due_on"), "COUNT(*)", "percent",
           ("on time delivery rate", "on time deliveries", "on time delivery", "on time rate",
            "on time",
            "delivery performance", "otd"), scale=100),
    Metric("damage_rate_pct", "Damage rate (%)", "shipments", _flag("sh.damaged"), "COUNT(*)",
           "percent", ("damage rate", "damaged vehicles", "damaged", "damage", "damages"),
           higher_is_better=False, scale=100),
    Metric("shipping_cost_per_vehicle", "Shipping cost per vehicle", "shipments",
           "SUM(sh.cost)", "COUNT(*)", "currency",
           ("shipping cost per vehicle", "shipping cost per unit", "cost per shipment",
            "freight cost per vehicle", "shipping cost", "freight cost", "logistics cost",
            "transport cost", "delivery cost"), higher_is_better=False),
    Metric("shipments", "Shipments", "shipments", "COUNT(*)", None, "count",
           ("number of shipments", "shipments", "deliveries", "vehicles shipped", "shipped")),
)  # fmt: skip


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    column: str
    joins: dict[str, tuple[str, ...]]
    aliases: tuple[str, ...]
    values: tuple[str, ...] = ()
    value_aliases: dict[str, str] = field(default_factory=dict)

    def applies_to(self, fact: str) -> bool:
        return fact in self.joins


def _dims() -> tuple[Dimension, ...]:
    dealers = dealer_names()
    Joins = dict[str, tuple[str, ...]]
    sales_ship: Joins = {"sales": ("dealers",), "shipments": ("dealers",)}
    vehicle: Joins = {"sales": ("vehicles",), "shipments": ("vehicles",)}
    plant: Joins = {
        "sales": ("vehicles", "plants"),
        "production": ("plants",),
        "shipments": ("plants",),
    }
    carriers = {c.name: c.name for c in CARRIERS} | {c.short.lower(): c.name for c in CARRIERS}
    plants = {p.name: p.name for p in PLANTS} | {p.short.lower(): p.name for p in PLANTS}
    models = {m.model: m.model for m in MODELS} | {
        f"{m.make} {m.model}".lower(): m.model for m in MODELS
    }
    segments = {s: s for s in SEGMENTS} | {
        "suvs": "SUV", "pickups": "Pickup", "pickup trucks": "Pickup", "sedans": "Sedan",
        "compacts": "Compact", "compact cars": "Compact", "luxury": "Luxury",
        "electric": "EV", "evs": "EV", "electric vehicles": "EV",
    }  # fmt: skip
    states = {name.lower(): code for code, name in STATE_NAMES.items()}
    countries = {
        "united states": "United States", "usa": "United States", "u.s.": "United States",
        "canada": "Canada", "mexico": "Mexico", "canadian": "Canada", "mexican": "Mexico",
    }  # fmt: skip
    modes = {"truck": "truck", "trucks": "truck", "road": "truck", "rail": "rail",
             "train": "rail", "trains": "rail"}  # fmt: skip
    return (
        Dimension("region", "Region", "d.region", sales_ship,
                  ("region", "regions", "regional"), REGIONS),
        Dimension("state", "State", "d.state", sales_ship, ("state", "states"),
                  tuple(STATE_NAMES), states),
        Dimension("dealer", "Dealer", "d.name", sales_ship,
                  ("dealer", "dealers", "dealership", "dealerships", "store", "stores"),
                  tuple(d[1] for d in dealers)),
        Dimension("make", "Make", "v.make", vehicle, ("make", "makes", "brand", "brands"),
                  tuple(MAKES)),
        Dimension("model", "Model", "v.model", vehicle,
                  ("model", "models", "nameplate", "nameplates"), tuple(m.model for m in MODELS),
                  models),
        Dimension("segment", "Segment", "v.segment", vehicle,
                  ("segment", "segments", "body style", "vehicle type", "vehicle types"),
                  SEGMENTS, segments),
        Dimension("plant", "Plant", "p.name", plant,
                  ("plant", "plants", "factory", "factories", "assembly plant",
                   "assembly plants"), tuple(p.name for p in PLANTS), plants),
        Dimension("country", "Country", "p.country", plant,
                  ("country", "countries", "country of production"),
                  ("United States", "Canada", "Mexico"), countries),
        Dimension("carrier", "Carrier", "sh.carrier", {"shipments": ()},
                  ("carrier", "carriers", "transport company", "hauler", "haulers"),
                  tuple(c.name for c in CARRIERS), carriers),
        Dimension("transport_mode", "Transport mode", "sh.transport_mode", {"shipments": ()},
                  ("transport mode", "transport modes", "mode of transport", "shipping mode",
                   "mode", "modes"), TRANSPORT_MODES, modes),
    )  # fmt: skip


DIMENSIONS: tuple[Dimension, ...] = _dims()

GRAINS: dict[str, tuple[str, ...]] = {
    "day": ("day", "days", "daily", "date", "per day", "each day"),
    "week": ("week", "weeks", "weekly"),
    "month": ("month", "months", "monthly", "month by month", "month over month", "mom"),
    "quarter": ("quarter", "quarters", "quarterly", "quarter over quarter", "qoq"),
    "year": ("year", "years", "yearly", "annual", "annually", "year over year", "yoy"),
}


def grain_sql(grain: str, column: str) -> str:
    """The expression that buckets `column` (a date) by `grain`; labels sort in time order."""
    if grain == "day":
        return column
    if grain == "year":
        return f"CAST(EXTRACT(YEAR FROM {column}) AS INT)"
    if grain == "quarter":
        return f"TO_CHAR({column}, 'YYYY-\"Q\"Q')"
    return f"CAST(DATE_TRUNC('{grain}', {column}) AS DATE)"


def metric(key: str) -> Metric:
    """The metric with this key; KeyError names the known keys."""
    for m in METRICS:
        if m.key == key:
            return m
    raise KeyError(f"unknown metric {key!r}; known: {', '.join(m.key for m in METRICS)}")


def dimension(key: str) -> Dimension:
    """The dimension with this key."""
    for d in DIMENSIONS:
        if d.key == key:
            return d
    raise KeyError(f"unknown dimension {key!r}; known: {', '.join(d.key for d in DIMENSIONS)}")


def dimensions_for(fact: str) -> list[Dimension]:
    """The dimensions that apply to `fact`."""
    return [d for d in DIMENSIONS if d.applies_to(fact)]


def capabilities() -> str:
    """What the semantic layer can answer, as text for an honest 'cannot map' answer."""
    lines = ["Metrics:"]
    for fact in FACTS:
        names = ", ".join(m.label for m in METRICS if m.fact == fact)
        dims = ", ".join(d.label.lower() for d in dimensions_for(fact))
        lines.append(f"- {fact}: {names} (by {dims} and time)")
    lines.append(
        "Time: by day, week, month, quarter or year; periods such as 'in 2025', "
        "'Q3 2024', 'last quarter', 'since March', 'June 2025', 'last 6 months', "
        "'2024 vs 2025'."
    )
    lines.append(
        "Ask for example: 'Damage rate by carrier in Q3 2025', 'Top 5 dealers by "
        "revenue in 2025', 'Monthly downtime by plant since June 2025', 'Why did "
        "the damage rate rise in Q3 2025?'."
    )
    return "\n".join(lines)
