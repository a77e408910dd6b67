"""The demo company's fixed reference data: plants, brands and models, dealers, carriers.

Everything here is a constant, so the dataset generator, the semantic layer (which matches these
names in questions) and the tests agree on one vocabulary. Names are fictional but read like a
real manufacturer's: four brands built in five plants, sold through 60 dealers in five US regions
and delivered by five carriers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

#: First and last day of the dataset (two full calendar years).
DATA_START = date(2024, 1, 1)
DATA_END = date(2025, 12, 31)


@dataclass(frozen=True)
class Plant:
    plant_id: int
    name: str
    short: str
    country: str
    daily_capacity: int


@dataclass(frozen=True)
class Model:
    make: str
    model: str
    segment: str
    base_msrp: int
    plants: tuple[int, ...]
    code: str
    weight: float
    launched: date = DATA_START


@dataclass(frozen=True)
class Carrier:
    name: str
    short: str
    mode: str
    weight: float


PLANTS: tuple[Plant, ...] = (
    Plant(1, "Detroit Assembly", "Detroit", "United States", 420),
    Plant(2, "Chattanooga Assembly", "Chattanooga", "United States", 300),
    Plant(3, "Georgetown Assembly", "Georgetown", "United States", 360),
    Plant(4, "Ontario Assembly", "Ontario", "Canada", 260),
    Plant(5, "Silao Assembly", "Silao", "Mexico", 340),
)

#: World manufacturer identifier (first three VIN characters) of each brand.
MAKES: dict[str, str] = {"Atlas": "1AT", "Corvane": "2CV", "Meridian": "1MR", "Voltra": "5VL"}

MODELS: tuple[Model, ...] = (
    Model("Atlas", "Pioneer", "SUV", 38_500, (1, 4), "PI", 0.20),
    Model("Atlas", "Forge", "Pickup", 46_000, (1, 5), "FO", 0.18),
    Model("Atlas", "Metro", "Sedan", 27_500, (3,), "ME", 0.14),
    Model("Corvane", "Breeze", "Compact", 22_900, (5,), "BR", 0.15),
    Model("Corvane", "Crest", "SUV", 34_900, (3, 2), "CR", 0.14),
    Model("Meridian", "Regent", "Luxury", 58_000, (4,), "RE", 0.06),
    Model("Meridian", "Horizon", "Luxury", 64_500, (2,), "HO", 0.07),
    Model("Voltra", "Arc", "EV", 52_000, (2,), "AR", 0.03),
    # Story: the Voltra Spark launches on 2025-03-01 and ramps up (EV-led growth in 2025).
    Model("Voltra", "Spark", "EV", 41_000, (2,), "SP", 0.00, date(2025, 3, 1)),
)

SEGMENTS: tuple[str, ...] = ("SUV", "Pickup", "Sedan", "Compact", "Luxury", "EV")

REGIONS: tuple[str, ...] = ("Northeast", "Southeast", "Midwest", "Southwest", "West")

#: Share of retail demand per region.
REGION_DEMAND: dict[str, float] = {
    "Northeast": 0.16,
    "Southeast": 0.24,
    "Midwest": 0.18,
    "Southwest": 0.22,
    "West": 0.20,
}

STATE_NAMES: dict[str, str] = {
    "NY": "New York",
    "MA": "Massachusetts",
    "PA": "Pennsylvania",
    "NJ": "New Jersey",
    "CT": "Connecticut",
    "FL": "Florida",
    "GA": "Georgia",
    "NC": "North Carolina",
    "VA": "Virginia",
    "SC": "South Carolina",
    "IL": "Illinois",
    "OH": "Ohio",
    "MI": "Michigan",
    "MN": "Minnesota",
    "WI": "Wisconsin",
    "TX": "Texas",
    "AZ": "Arizona",
    "NM": "New Mexico",
    "OK": "Oklahoma",
    "NV": "Nevada",
    "CA": "California",
    "WA": "Washington",
    "OR": "Oregon",
    "CO": "Colorado",
    "UT": "Utah",
}

#: Dealer cities per region and state (12 dealers per region, 60 in all).
DEALER_CITIES: dict[str, dict[str, tuple[str, ...]]] = {
    "Northeast": {
        "NY": ("Albany", "Buffalo", "Rochester"),
        "MA": ("Worcester", "Lowell"),
        "PA": ("Harrisburg", "Allentown", "Erie"),
        "NJ": ("Trenton", "Paterson"),
        "CT": ("Hartford", "Stamford"),
    },
    "Southeast": {
        "FL": ("Tampa", "Orlando", "Jacksonville"),
        "GA": ("Savannah", "Macon"),
        "NC": ("Raleigh", "Charlotte", "Asheville"),
        "VA": ("Richmond", "Norfolk"),
        "SC": ("Columbia", "Greenville"),
    },
    "Midwest": {
        "IL": ("Peoria", "Naperville", "Rockford"),
        "OH": ("Columbus", "Dayton", "Toledo"),
        "MI": ("Lansing", "Flint"),
        "MN": ("Duluth", "St. Cloud"),
        "WI": ("Madison", "Green Bay"),
    },
    "Southwest": {
        "TX": ("Austin", "El Paso", "San Antonio", "Lubbock"),
        "AZ": ("Phoenix", "Tucson", "Flagstaff"),
        "NM": ("Albuquerque", "Santa Fe"),
        "OK": ("Tulsa", "Norman"),
        "NV": ("Reno",),
    },
    "West": {
        "CA": ("Fresno", "Sacramento", "San Diego", "Oakland"),
        "WA": ("Spokane", "Tacoma"),
        "OR": ("Portland", "Eugene"),
        "CO": ("Boulder", "Pueblo"),
        "UT": ("Provo", "Ogden"),
    },
}

DEALER_SUFFIXES: tuple[str, ...] = (
    "Motors",
    "Auto Group",
    "Automotive",
    "Motor Company",
    "Auto Mall",
)

TRANSPORT_MODES: tuple[str, ...] = ("truck", "rail")

CARRIERS: tuple[Carrier, ...] = (
    Carrier("Interstate Auto Haul", "Interstate", "truck", 0.34),
    # Story: from 2025-07-01, Rapid Haul's deliveries into the Southwest get damaged ~7x as often.
    Carrier("Rapid Haul Logistics", "Rapid Haul", "truck", 0.33),
    Carrier("Blue Ridge Transport", "Blue Ridge", "truck", 0.33),
    Carrier("Continental Rail", "Continental", "rail", 0.55),
    Carrier("Great Plains Railway", "Great Plains", "rail", 0.45),
)

#: Road distance (km) from each plant to the middle of each region.
DISTANCE_KM: dict[int, dict[str, int]] = {
    1: {"Northeast": 950, "Southeast": 1350, "Midwest": 450, "Southwest": 2000, "West": 3300},
    2: {"Northeast": 1300, "Southeast": 550, "Midwest": 900, "Southwest": 1400, "West": 3100},
    3: {"Northeast": 1100, "Southeast": 800, "Midwest": 500, "Southwest": 1600, "West": 3200},
    4: {"Northeast": 700, "Southeast": 1600, "Midwest": 650, "Southwest": 2400, "West": 3500},
    5: {"Northeast": 3500, "Southeast": 2600, "Midwest": 2800, "Southwest": 1100, "West": 2500},
}

#: Relative retail volume per month (January = 1); US seasonality with a year-end push.
MONTH_FACTOR: tuple[float, ...] = (
    0.78,
    0.85,
    1.05,
    1.00,
    1.08,
    1.02,
    1.00,
    1.05,
    0.95,
    0.95,
    0.93,
    1.15,
)

#: Relative retail volume per weekday (Monday first); Saturdays busiest, Sundays quiet.
WEEKDAY_FACTOR: tuple[float, ...] = (0.95, 0.90, 0.90, 0.95, 1.10, 1.45, 0.55)


def plant_by_id(plant_id: int) -> Plant:
    """The plant with this id."""
    return next(p for p in PLANTS if p.plant_id == plant_id)


def dealer_names() -> list[tuple[int, str, str, str, str]]:
    """(dealer_id, name, region, state, city) of every dealer, in a fixed order."""
    out: list[tuple[int, str, str, str, str]] = []
    for region in REGIONS:
        for state, cities in DEALER_CITIES[region].items():
            for city in cities:
                suffix = DEALER_SUFFIXES[len(out) % len(DEALER_SUFFIXES)]
                out.append((len(out) + 1, f"{city} {suffix}", region, state, city))
    return out
