"""The analytics demo dataset, generated deterministically from one fixed seed.

Two full calendar years (2024-01-01 .. 2025-12-31) of a fictional manufacturer: 5 plants, 4
brands / 9 models, 60 dealers in 5 regions, 5 carriers. About 50,000 retail sales (one vehicle
each), a shipment per vehicle (plus ~1,300 unsold vehicles in dealer stock at the end of 2025)
and a production record per plant and working day. Volumes follow US retail seasonality (a slow
January, spring and summer peaks, a December push; Saturdays busiest, Sundays quiet); plants
close on public holidays, a July shutdown week and Christmas week.

Planted stories (what a root-cause analysis should find):

1. **Chattanooga Assembly's downtime spike, August 2025.** A robotics retrofit goes wrong: the
   plant loses 4-8 hours a day for the whole month (normally ~35 minutes), so company downtime
   in August 2025 is several times July's and the plant's build-plan attainment drops.
2. **Rapid Haul Logistics damages vehicles in the Southwest from July 2025.** Its damage rate on
   deliveries into the Southwest climbs from ~1.2% to 6% in July, 10% in August and 12% from
   September 2025; every other carrier-region pair stays near 1%. Company damage rate rises in
   Q3 2025 and stays high in Q4.
3. **Midwest warranty attach rate halves from May 2025.** A change of warranty provider for the
   Midwest dealers drops their extended-warranty attach rate from ~42% to ~20% (and their F&I
   revenue per deal with it); other regions are unchanged.
4. **The Voltra Spark launches on 2025-03-01.** A new EV (built in Chattanooga) ramps up to ~9
   sales a day by year end; it is most of 2025's growth in units sold over 2024.
5. **Silao Assembly's paint defect, Q2 2024.** A supplier's paint defect lifts the plant's
   defect rate from ~2.1% to ~5.2% in April-June 2024, then it returns to normal.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from tools.analytics.reference import (
    CARRIERS,
    DATA_END,
    DATA_START,
    DISTANCE_KM,
    MAKES,
    MODELS,
    MONTH_FACTOR,
    PLANTS,
    REGION_DEMAND,
    REGIONS,
    WEEKDAY_FACTOR,
    Model,
    dealer_names,
)

#: The seed every seeding uses; changing it (or the generator) needs a new DATASET_VERSION.
SEED = 20_240_101
#: Stored in `analytics.dataset_info`; a database holding another version is re-seeded.
DATASET_VERSION = "2024-2025.1"

#: Retail units per year before the Spark launch (2025 grows 3% on the same models).
BASE_UNITS_2024 = 23_500
BASE_GROWTH_2025 = 1.03

SPARK_LAUNCH = date(2025, 3, 1)
DOWNTIME_STORY = (2, date(2025, 8, 1), date(2025, 9, 1))  # plant, from, until (exclusive)
DAMAGE_STORY = ("Rapid Haul Logistics", "Southwest", date(2025, 7, 1))
WARRANTY_STORY = ("Midwest", date(2025, 5, 1))
DEFECT_STORY = (5, date(2024, 4, 1), date(2024, 7, 1))

#: Segment tilts of regional demand (pickups sell in the Southwest, compacts on the coasts).
REGION_TILT: dict[str, dict[str, float]] = {
    "Northeast": {"Luxury": 1.3, "Compact": 1.2, "Pickup": 0.7},
    "Southeast": {"SUV": 1.1},
    "Midwest": {"Pickup": 1.3, "Luxury": 0.8},
    "Southwest": {"Pickup": 1.5, "Compact": 0.8},
    "West": {"EV": 1.8, "Compact": 1.2, "Luxury": 1.2, "Pickup": 0.8},
}

Row = tuple[Any, ...]


@dataclass
class Dataset:
    """Rows of every table, in the column order of `tools.analytics.schema.TABLES`."""

    plants: list[Row] = field(default_factory=list)
    dealers: list[Row] = field(default_factory=list)
    vehicles: list[Row] = field(default_factory=list)
    production: list[Row] = field(default_factory=list)
    sales: list[Row] = field(default_factory=list)
    shipments: list[Row] = field(default_factory=list)

    def tables(self) -> dict[str, list[Row]]:
        """Table name -> rows, parents before children (the order to load them in)."""
        return {
            "plants": self.plants,
            "dealers": self.dealers,
            "vehicles": self.vehicles,
            "production": self.production,
            "sales": self.sales,
            "shipments": self.shipments,
        }


def days(start: date = DATA_START, end: date = DATA_END) -> list[date]:
    """Every date from start to end inclusive."""
    return [start + timedelta(n) for n in range((end - start).days + 1)]


def _thanksgiving(year: int) -> date:
    first = date(year, 11, 1)
    return first + timedelta((3 - first.weekday()) % 7 + 21)


def _last_monday(year: int, month: int) -> date:
    last = date(year + (month == 12), month % 12 + 1, 1) - timedelta(1)
    return last - timedelta(last.weekday())


def _first_monday(year: int, month: int) -> date:
    first = date(year, month, 1)
    return first + timedelta((7 - first.weekday()) % 7)


def plant_closed(day: date) -> bool:
    """Weekends, public holidays, the July shutdown week and Christmas week."""
    if day.weekday() >= 5:
        return True
    year = day.year
    holidays = {
        date(year, 1, 1),
        _last_monday(year, 5),
        _first_monday(year, 9),
        _thanksgiving(year),
        _thanksgiving(year) + timedelta(1),
    }
    if day in holidays:
        return True
    return (day.month == 7 and day.day <= 5) or (day.month == 12 and day.day >= 24)


def _retail_weight(day: date) -> float:
    weight = MONTH_FACTOR[day.month - 1] * WEEKDAY_FACTOR[day.weekday()]
    if day in (date(day.year, 1, 1), date(day.year, 12, 25), _thanksgiving(day.year)):
        weight *= 0.1
    return weight * (BASE_GROWTH_2025 if day.year == 2025 else 1.0)


def _spark_daily(day: date) -> float:
    """Expected Spark sales a day: launch in March 2025, ramping to ~9 a day by December."""
    if day < SPARK_LAUNCH:
        return 0.0
    months = (day.year - 2025) * 12 + day.month - SPARK_LAUNCH.month
    return min(9.0, 2.0 + 0.8 * months) * WEEKDAY_FACTOR[day.weekday()]


def _money(value: float) -> Decimal:
    return Decimal(f"{value:.2f}")


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.data = Dataset()
        self.dealers = dealer_names()
        self.serial = 0
        rng = self.rng
        # Dealer size: a lognormal spread, so a few big stores sell much more than most.
        self.dealer_weight = {d[0]: rng.lognormvariate(0.0, 0.45) for d in self.dealers}
        self.by_region = {r: [d for d in self.dealers if d[2] == r] for r in REGIONS}

    # --- reference tables ------------------------------------------------------------------
    def reference(self) -> None:
        self.data.plants = [(p.plant_id, p.name, p.country) for p in PLANTS]
        self.data.dealers = [(d[0], d[1], d[2], d[3], d[4]) for d in self.dealers]

    # --- production ------------------------------------------------------------------------
    def production(self) -> None:
        rng = self.rng
        base_defect = {1: 0.017, 2: 0.019, 3: 0.016, 4: 0.018, 5: 0.021}
        for plant in PLANTS:
            for day in days():
                if plant_closed(day):
                    continue
                capacity = plant.daily_capacity
                if plant.plant_id == 2 and day >= SPARK_LAUNCH:
                    capacity = int(capacity * 1.12)
                plan_factor = 0.9 if day.month == 1 else 1.0
                planned = max(0, round(capacity * plan_factor * rng.gauss(1.0, 0.02)))
                downtime = int(rng.gammavariate(1.6, 22.0))
                if rng.random() < 0.03:
                    downtime += rng.randint(120, 300)
                story_plant, story_from, story_until = DOWNTIME_STORY
                if plant.plant_id == story_plant and story_from <= day < story_until:
                    downtime = rng.randint(240, 480)
                downtime = min(downtime, 960)
                efficiency = min(1.0, rng.gauss(0.985, 0.012))
                built = max(0, round(planned * efficiency * (1 - downtime / 960)))
                rate = base_defect[plant.plant_id]
                defect_plant, defect_from, defect_until = DEFECT_STORY
                if plant.plant_id == defect_plant and defect_from <= day < defect_until:
                    rate = 0.052
                defects = min(built, round(built * rate * rng.uniform(0.8, 1.2)))
                self.data.production.append(
                    (plant.plant_id, day, planned, built, defects, downtime)
                )

    # --- vehicles, sales and shipments -------------------------------------------------------
    def _model_weights(self, region: str) -> list[float]:
        tilt = REGION_TILT[region]
        return [m.weight * tilt.get(m.segment, 1.0) for m in MODELS]

    def _vehicle(self, model: Model, on: date) -> tuple[str, int, int, Decimal]:
        rng = self.rng
        model_year = on.year + (1 if on.month >= 9 and rng.random() < 0.5 else 0)
        plant_id = model.plants[0] if rng.random() < 0.6 else model.plants[-1]
        trim = rng.choices((1.0, 1.08, 1.17, 1.25), weights=(0.4, 0.3, 0.2, 0.1))[0]
        msrp = round(model.base_msrp * (1 + 0.025 * (model_year - 2024)) * trim / 50) * 50
        self.serial += 1
        vin = f"{MAKES[model.make]}{model.code}{model_year % 100:02d}{plant_id}{self.serial:09d}"
        self.data.vehicles.append(
            (vin, model.make, model.model, model_year, model.segment, plant_id, _money(msrp))
        )
        return vin, plant_id, model_year, Decimal(msrp)

    def _shipment(
        self, vin: str, plant_id: int, dealer: tuple[Any, ...], model: Model, arrive_by: date
    ) -> date:
        """Add the vehicle's shipment, delivered by `arrive_by`; returns the delivery date."""
        rng = self.rng
        region = dealer[2]
        km = DISTANCE_KM[plant_id][region]
        rail_share = min(0.75, max(0.05, (km - 900) / 2600))
        mode = "rail" if rng.random() < rail_share else "truck"
        options = [c for c in CARRIERS if c.mode == mode]
        weights = [
            c.weight * (1.6 if c.name == DAMAGE_STORY[0] and region == DAMAGE_STORY[1] else 1.0)
            for c in options
        ]
        carrier = rng.choices(options, weights=weights)[0]
        if mode == "truck":
            transit = max(1, round(km / 650 + rng.gauss(0.8, 0.8)))
            sla = math.ceil(km / 650) + 1
            cost = 180 + 0.62 * km
            damage_p = 0.012
        else:
            transit = max(2, round(km / 420 + 2 + rng.gauss(0.8, 1.2)))
            sla = math.ceil(km / 420) + 3
            cost = 260 + 0.34 * km
            damage_p = 0.007
        dwell = int(rng.gammavariate(2.0, 12.0))
        shipped = arrive_by - timedelta(dwell + transit)
        shipped = max(shipped, DATA_START)
        delivered = shipped + timedelta(transit)
        story_carrier, story_region, story_from = DAMAGE_STORY
        if carrier.name == story_carrier and region == story_region and shipped >= story_from:
            damage_p = {7: 0.06, 8: 0.10}.get(shipped.month, 0.12)
        cost *= rng.uniform(0.92, 1.10) * (1.04 if shipped.year == 2025 else 1.0)
        if model.segment in ("Luxury", "EV"):
            cost *= 1.05
        self.data.shipments.append(
            (
                len(self.data.shipments) + 1,
                vin,
                plant_id,
                dealer[0],
                shipped,
                delivered,
                shipped + timedelta(sla),
                carrier.name,
                mode,
                _money(cost),
                rng.random() < damage_p,
            )
        )
        return delivered

    def _sale(self, on: date, model: Model, dealer: tuple[Any, ...]) -> None:
        rng = self.rng
        vin, plant_id, _year, msrp = self._vehicle(model, on)
        delivered = self._shipment(vin, plant_id, dealer, model, on)
        sold_on = max(on, delivered)
        discount = rng.uniform(0.02, 0.06) + (0.02 if on.month == 12 else 0.0)
        discount += 0.015 if on.month in (1, 2) else 0.0
        discount -= 0.01 if model.segment == "EV" else 0.0
        price = float(msrp) * (1 - discount)
        cost_share = 0.88 if model.segment == "Luxury" else 0.905
        gross = price - float(msrp) * cost_share + rng.gauss(0, 250)
        financed_p = {"Luxury": 0.78, "EV": 0.74, "Compact": 0.66}.get(model.segment, 0.71)
        warranty_p = {"Luxury": 0.50, "EV": 0.30}.get(model.segment, 0.42)
        story_region, story_from = WARRANTY_STORY
        if dealer[2] == story_region and on >= story_from:
            warranty_p *= 0.48
        financed = rng.random() < financed_p
        warranty = rng.random() < warranty_p
        gap = financed and rng.random() < 0.36
        fni = rng.uniform(0, 180)
        fni += rng.uniform(650, 1550) if financed else 0.0
        fni += rng.uniform(900, 1700) if warranty else 0.0
        fni += rng.uniform(380, 720) if gap else 0.0
        self.data.sales.append(
            (
                0,  # deal_id, numbered once all sales are in date order
                dealer[0],
                vin,
                sold_on,
                _money(round(price)),
                _money(gross),
                _money(fni),
                financed,
                warranty,
                gap,
            )
        )

    def _dealer(self, region: str) -> tuple[Any, ...]:
        options = self.by_region[region]
        return self.rng.choices(options, weights=[self.dealer_weight[d[0]] for d in options])[0]

    def sales(self) -> None:
        rng = self.rng
        calendar = days()
        weights = [_retail_weight(d) for d in calendar]
        per_weight = BASE_UNITS_2024 / sum(
            w for d, w in zip(calendar, weights, strict=True) if d.year == 2024
        )
        regions = list(REGIONS)
        region_weights = [REGION_DEMAND[r] for r in regions]
        model_weights = {r: self._model_weights(r) for r in regions}
        spark = next(m for m in MODELS if m.model == "Spark")
        for day, weight in zip(calendar, weights, strict=True):
            expected = weight * per_weight
            count = max(0, round(rng.gauss(expected, math.sqrt(expected))))
            for _ in range(count):
                region = rng.choices(regions, weights=region_weights)[0]
                model = rng.choices(MODELS, weights=model_weights[region])[0]
                self._sale(day, model, self._dealer(region))
            spark_expected = _spark_daily(day)
            if spark_expected:
                for _ in range(max(0, round(rng.gauss(spark_expected, math.sqrt(spark_expected))))):
                    region = rng.choices(
                        regions,
                        weights=[
                            w * (1.8 if r == "West" else 1.0)
                            for r, w in zip(regions, region_weights, strict=True)
                        ],
                    )[0]
                    self._sale(day, spark, self._dealer(region))
        ordered = sorted(self.data.sales, key=lambda row: (row[3], row[2]))
        self.data.sales = [(n, *row[1:]) for n, row in enumerate(ordered, start=1)]

    def stock(self, units: int = 1300) -> None:
        """Unsold vehicles shipped in Nov-Dec 2025 and standing at dealers at year end."""
        rng = self.rng
        regions = list(REGIONS)
        for _ in range(units):
            region = rng.choices(regions, weights=[REGION_DEMAND[r] for r in regions])[0]
            model = rng.choices(MODELS, weights=self._model_weights(region))[0]
            arrive_by = date(2025, 11, 20) + timedelta(rng.randint(0, 40))
            vin, plant_id, _year, _msrp = self._vehicle(model, arrive_by)
            self._shipment(vin, plant_id, self._dealer(region), model, arrive_by)


def generate(seed: int = SEED) -> Dataset:
    """The whole dataset for `seed` (the same rows on every machine and Python >= 3.11)."""
    generator = _Generator(seed)
    generator.reference()
    generator.production()
    generator.sales()
    generator.stock()
    return generator.data
