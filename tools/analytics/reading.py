"""Reading a question: the text with matched spans blanked, and the filter values it names.

A filter value may carry its dimension's word on either side ("the West region", "plant Detroit
Assembly"), and a value may qualify another dimension's entities: "Midwest dealers" or
"Southwest stores" are the dealers of one region taken together (a filter), not a breakdown by
dealer, unless the question ranks or enumerates them ("top 5 Midwest dealers", "which Midwest
dealers", "each Midwest dealer").
"""

from __future__ import annotations

import re
from functools import lru_cache

from tools.analytics.catalogue import DEMO_LAYER, SemanticLayer

#: Words that make "<value> <entities>" a list of those entities rather than a filter.
ENUMERATES = re.compile(
    r"\b(top|bottom|best|worst|highest|lowest|most|least|rank|ranking|ranked|which|each|every|"
    r"list|per)\b"
)


class Text:
    """The question being read; matched spans are blanked so nothing is read twice."""

    def __init__(self, text: str) -> None:
        self.work = text

    def take(self, pattern: str | re.Pattern[str]) -> list[re.Match[str]]:
        matches = list(re.finditer(pattern, self.work))
        for m in matches:
            self.blank(m.span())
        return matches

    def blank(self, span: tuple[int, int]) -> None:
        a, b = span
        self.work = self.work[:a] + " " * (b - a) + self.work[b:]


def word(alias: str) -> str:
    return r"(?<![\w&])" + re.escape(alias) + r"(?![\w&])"


def by_length(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(items, key=lambda item: -len(item[0]))


@lru_cache(maxsize=4)
def _filter_patterns(layer: SemanticLayer) -> list[tuple[str, re.Pattern[str], str, str]]:
    """(pattern, dimension key, value) for every filter value, longest alias first. A value may
    carry its dimension's word on either side ("the West region", "plant Detroit Assembly")."""
    candidates: list[tuple[str, str]] = []
    for dim in layer.dimensions:
        for value in dim.values:
            candidates.append((value.lower(), f"{dim.key}\0{value}"))
        for alias, value in dim.value_aliases.items():
            candidates.append((alias.lower(), f"{dim.key}\0{value}"))
    out = []
    for alias, target in by_length(candidates):
        key, value = target.split("\0")
        if key == "state" and len(alias) == 2:
            continue  # "or", "in", "co" are words; states match by name
        dim = layer.dimension(key)
        words = "|".join(re.escape(a) for a in sorted(dim.aliases, key=len, reverse=True))
        pattern = rf"(?:\b(?:the\s+)?(?:{words})\s+)?" + word(alias) + rf"(?:\s+(?:{words})\b)?"
        out.append((alias, re.compile(pattern), key, value))
    return out


@lru_cache(maxsize=4)
def _entity_nouns(layer: SemanticLayer) -> re.Pattern[str]:
    """A dimension's plural entity noun right after a filter value ("Midwest dealers")."""
    plurals = sorted(
        {a for d in layer.dimensions for a in d.aliases if a.endswith("s") and a[:-1] in d.aliases},
        key=len,
        reverse=True,
    )
    return re.compile(r"\s(?:" + "|".join(re.escape(p) for p in plurals) + r")\b")


def read_filters(
    text: Text, ranked: bool = False, layer: SemanticLayer = DEMO_LAYER
) -> dict[str, list[str]]:
    """The filter values `text` names, by dimension key (their spans blanked). `ranked`: the
    question ranks its rows (top N, best, ...), so "<value> <entities>" lists the entities."""
    qualify = not ranked and not ENUMERATES.search(text.work)
    found: dict[str, list[str]] = {}
    for alias, pattern, key, value in _filter_patterns(layer):
        if alias not in text.work:
            continue
        for match in text.take(pattern):
            if value not in found.setdefault(key, []):
                found[key].append(value)
            entities = _entity_nouns(layer).match(text.work, match.end())
            if qualify and entities is not None:
                text.blank(entities.span())  # "Midwest dealers": the region's dealers together
    return {k: v for k, v in found.items() if v}
