"""The analytics agent's data probe: a message that asks for an analysis of the dataset's own
measures.

Keywords need two of the dataset's names ("units sold by region"); a question naming one
measure and asking for an analysis of it ("what share of sold vehicles ...", "analyze the drop
in truck production") has one keyword, resembles no example closely and fell to the default
agent (issue 28). The probe scores `ANALYSIS` when the message names at least one of the
dataset's measures or names (the agent's keywords: metrics, dimensions, makes, plants, regions)
and asks for an analytical operation on it: a share, rate or ratio, a trend or change (drop,
growth, rise), a ranking (top 5, the busiest), a count or total ("how many ... built"), a
breakdown (by region, per dealer) or an analysis. Neither alone is enough: "what share of my
day is meetings?" names no measure of the dataset, and "sales" in a sentence about a colleague
asks for no analysis. A request for code over such
data is the coding agent's (skipped). No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

#: The probe's score: above ROUTE_DATA_THRESHOLD, below ROUTE_DATA_OVERRIDE (a clearly
#: stronger similarity to another agent still outweighs it).
ANALYSIS = 0.75

_OPERATION = re.compile(
    r"\b(?:share|fraction|percentage|percent|proportion|ratio|rate|trend|trends|growth|grew|yoy|mom|"
    r"drop|dropped|decline|declined|rise|rose|increase|decrease|spike|dip|change|changed|"
    r"analy[sz]e|analysis|breakdown|break down|compare|comparison|average|median|"
    r"top\s+\d+|bottom\s+\d+|best|worst|most|least|highest|lowest|ranking|rank|"
    r"busiest|slowest|quietest|biggest|largest|smallest|strongest|weakest|"
    r"how\s+many|how\s+much|total|number\s+of|count|"
    r"by\s+(?:region|month|week|quarter|year|dealer|plant|make|model|brand|segment|carrier)|"
    r"per\s+(?:unit|dealer|region|month|week|quarter|plant|carrier|model))\b",
    re.IGNORECASE,
)
#: A request for code that works on such data ("a pandas function that pivots sales by month")
#: is the coding agent's.
_CODE_REQUEST = re.compile(r"\b(?:function|code|pandas|dataframe|python|script)\b", re.I)


@lru_cache(maxsize=1)
def _measures(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def analysis_evidence(message: str, measures: Iterable[str]) -> float | None:
    """``ANALYSIS`` when ``message`` names one of ``measures`` and asks for an analytical
    operation (see the module docstring); None otherwise."""
    text = message[:2000]
    if _CODE_REQUEST.search(text):
        return None
    if _OPERATION.search(text) and _measures(tuple(measures)).search(text):
        return ANALYSIS
    return None
